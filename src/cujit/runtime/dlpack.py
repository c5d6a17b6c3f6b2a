"""DLPack export: ``DeviceArray.__dlpack__`` builds the capsule consumers read.

The structures follow ``dlpack.h`` (DLPack 1.0).  A legacy capsule is named
``"dltensor"`` and holds a ``DLManagedTensor``; a versioned one (asked for
with ``max_version >= (1, 0)``) is ``"dltensor_versioned"`` and holds a
``DLManagedTensorVersioned``, whose ``flags`` can say read-only.  The
consumer renames the capsule (``"used_dltensor..."``) when it takes
ownership and later calls the tensor's ``deleter``; a capsule never consumed
is freed by its destructor, which calls the deleter itself.

The C structures, the shape and stride arrays and a reference to the array
(which keeps the device memory alive) sit in one Python holder, stored in
``_live`` under the managed tensor's address until the deleter runs.  The
deleter and the capsule destructor are ctypes callbacks: ctypes takes the
GIL for them, so a consumer may call the deleter from any thread.
"""

from __future__ import annotations

import ctypes

KDL_CUDA = 2  # DLDeviceType kDLCUDA
_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY
# DLDataTypeCode by NumPy kind: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLComplex 5, kDLBool 6.
_TYPE_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),  # in elements, not bytes
        ("byte_offset", ctypes.c_uint64),
    ]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


_live: dict[int, object] = {}  # managed tensor address -> holder, until the deleter runs

# Capsule names must outlive the capsules: module-level bytes never move.
_NAME = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"

# A private handle on the Python C API: ctypes.pythonapi's function objects are shared
# process-wide, and another module setting their argtypes must not change ours.
_api = ctypes.PyDLL(ctypes.pythonapi._name, handle=ctypes.pythonapi._handle)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
# The destructor receives a capsule whose refcount is already 0: it is handled as a
# bare pointer (c_void_p), never as a py_object, so ctypes does not resurrect it.
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


@_DELETER
def _deleter(address):
    _live.pop(address, None)  # drops the structures and the array reference


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # Still named "dltensor[_versioned]": nobody consumed it, so the deleter is ours to call.
    for name in (_NAME, _NAME_VERSIONED):
        if _api.PyCapsule_IsValid(capsule, name):
            _live.pop(_api.PyCapsule_GetPointer(capsule, name), None)
            return


_DESTRUCTOR_ADDRESS = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


def dl_dtype(dtype) -> DLDataType:
    """The DLDataType of a NumPy dtype (BufferError for kinds DLPack cannot name)."""
    code = _TYPE_CODES.get(dtype.kind)
    if code is None or not dtype.isnative:
        raise BufferError(f"DLPack cannot describe dtype {dtype}")
    return DLDataType(code, dtype.itemsize * 8, 1)


def export(array, *, stream=None, max_version=None, dl_device=None, copy=None):
    """``array.__dlpack__(...)``: a capsule viewing ``array``'s memory.

    ``stream`` is the consumer's stream (the array API's convention: None or 1
    the legacy default, 2 per-thread, -1 no ordering); the consumer's stream
    is made to wait for the array's own stream before it reads.
    """
    if copy:
        raise BufferError("cujit device arrays are exported without copying (copy=True asked)")
    device = (KDL_CUDA, array.device_id or 0)
    if dl_device is not None and tuple(dl_device) != device:
        raise BufferError(f"cannot export a cujit array on {device} to DLPack device {dl_device}")
    itemsize = array.dtype.itemsize
    if any(s % itemsize for s in array.strides):
        raise BufferError(
            "DLPack strides count elements: these byte strides are not "
            f"multiples of the itemsize {itemsize}"
        )
    versioned = max_version is not None and int(max_version[0]) >= 1
    if array.readonly and not versioned:
        raise BufferError(
            "a read-only array can only be exported as a versioned DLPack "
            "capsule (the consumer must pass max_version=(1, 0))"
        )
    if stream != -1 and array.size:
        from cujit.runtime.event import order_after

        # None means the legacy default stream for CUDA in the DLPack convention.
        order_after(array.stream, 1 if stream is None else stream)
    return _capsule(array, versioned)


def _capsule(array, versioned: bool):
    ndim = array.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*array.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*(s // array.dtype.itemsize for s in array.strides))
    if versioned:
        managed = DLManagedTensorVersioned()
        managed.version = DLPackVersion(1, 0)
        managed.flags = _READ_ONLY if array.readonly else 0
        name = _NAME_VERSIONED
    else:
        managed = DLManagedTensor()
        name = _NAME
    t = managed.dl_tensor
    t.data = array.device_ptr or None
    t.device = DLDevice(KDL_CUDA, array.device_id or 0)
    t.ndim = ndim
    t.dtype = dl_dtype(array.dtype)
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    managed.deleter = _deleter
    address = ctypes.addressof(managed)
    _live[address] = (managed, shape, strides, array)
    try:
        return _api.PyCapsule_New(address, name, _DESTRUCTOR_ADDRESS)
    except BaseException:
        _live.pop(address, None)
        raise
