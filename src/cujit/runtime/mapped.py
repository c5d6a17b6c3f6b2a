"""Host memory that kernels reach directly: ``cuda.mapped_array`` and ``cuda.managed_array``.

Both return a NumPy array (a subclass) that is at once a host array and a
device array: the host reads and writes it as any NumPy array, and a kernel
given it as an argument works on the same memory, with no copy either way.

- mapped ("zero-copy") memory: page-locked host memory (``cuMemHostAlloc``
  with ``CU_MEMHOSTALLOC_DEVICEMAP``) that the GPU reads and writes over the
  bus; ``portable`` and ``wc`` add ``CU_MEMHOSTALLOC_PORTABLE`` and
  ``CU_MEMHOSTALLOC_WRITECOMBINED``.  The device address comes from
  ``cuMemHostGetDevicePointer`` (with unified addressing it is the host
  address, and every device reaches the memory);
- managed ("unified") memory: ``cuMemAllocManaged``, migrated by the driver
  to whichever processor touches it; host and device share one address.
  ``attach_global`` picks ``CU_MEM_ATTACH_GLOBAL`` (any stream, any device)
  or ``CU_MEM_ATTACH_HOST``.

Kernel writes are visible on the host once the kernel has finished
(``cuda.synchronize()`` or the launch stream's ``synchronize``).

Each array exposes ``__cuda_array_interface__`` (version 3) with the device
address of the memory it views, so a slice of a mapped array is a device
array too.  A launch views it with no copy (``cujit.runtime.args``).  An
array over other memory (the result of ``a + 1``, ``a.copy()``) has no
interface and is an ordinary host array.

The allocation is a :class:`ReachableBuffer`, found at the end of every view's
``base`` chain and freed (``cuMemFreeHost`` / ``cuMemFree``) when the last
array viewing it is collected, as ``cujit.runtime.host``'s pinned buffers are.
"""

from __future__ import annotations

import ctypes
import gc
import weakref

import numpy as np

from cujit.runtime import pending
from cujit.runtime.driver import CudaDriverError, call, error_name, get_driver
from cujit.runtime.layout import byte_span, contiguous_strides

_CU_MEMHOSTALLOC_PORTABLE = 0x01
_CU_MEMHOSTALLOC_DEVICEMAP = 0x02
_CU_MEMHOSTALLOC_WRITECOMBINED = 0x04
_CU_MEM_ATTACH_GLOBAL = 0x1
_CU_MEM_ATTACH_HOST = 0x2
_CUDA_ERROR_OUT_OF_MEMORY = 2
_CUDA_ERROR_INVALID_CONTEXT = 201


class ReachableBuffer:
    """One allocation that host and device both address: ``ptr`` on the host,
    ``device_ptr`` on the device; NumPy arrays use it as their base."""

    __slots__ = ("__array_interface__", "__weakref__", "device_ptr", "flags", "nbytes", "ptr")

    def _expose(self) -> None:
        # A flat byte buffer, so np.ndarray(buffer=...) keeps a reference to this object.
        self.__array_interface__ = {
            "shape": (max(self.nbytes, 1),),
            "typestr": "|u1",
            "data": (self.ptr, False),
            "version": 3,
        }

    @classmethod
    def _over(cls, ptr: int, device_ptr: int, nbytes: int, flags: int = 0):
        """A buffer object over memory that something else owns (no finalizer)."""
        buf = cls.__new__(cls)
        buf.ptr, buf.device_ptr, buf.nbytes, buf.flags = int(ptr), int(device_ptr), nbytes, flags
        buf._expose()
        return buf


class MappedBuffer(ReachableBuffer):
    """One ``cuMemHostAlloc(DEVICEMAP)`` block, freed with ``cuMemFreeHost`` when collected."""

    __slots__ = ()

    def __init__(self, nbytes: int, portable: bool = False, wc: bool = False):
        from cujit.runtime.context import get_context

        ctx = get_context()
        flags = _CU_MEMHOSTALLOC_DEVICEMAP
        if portable:
            flags |= _CU_MEMHOSTALLOC_PORTABLE
        if wc:
            flags |= _CU_MEMHOSTALLOC_WRITECOMBINED
        self.nbytes, self.flags = nbytes, flags
        size = max(nbytes, 1)
        what = f"cuda.mapped_array: cuMemHostAlloc of {size} bytes ({_host_flag_names(flags)})"
        self.ptr = _alloc(what, "cuMemHostAlloc", size, flags)
        weakref.finalize(self, _free_host, self.ptr, ctx).atexit = False
        try:
            self.device_ptr = int(call("cuMemHostGetDevicePointer", self.ptr, 0))
        except CudaDriverError as exc:
            raise _refused(
                "cuda.mapped_array: cuMemHostGetDevicePointer (the device "
                "address of mapped host memory)",
                exc,
                "this device cannot map host memory into its address space "
                "(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)",
            ) from None
        self._expose()


class ManagedBuffer(ReachableBuffer):
    """One ``cuMemAllocManaged`` block, freed with ``cuMemFree`` when collected."""

    __slots__ = ()

    def __init__(self, nbytes: int, attach_global: bool = True):
        from cujit.runtime.context import get_context

        ctx = get_context()
        flags = _CU_MEM_ATTACH_GLOBAL if attach_global else _CU_MEM_ATTACH_HOST
        self.nbytes, self.flags = nbytes, flags
        size = max(nbytes, 1)
        name = "CU_MEM_ATTACH_GLOBAL" if attach_global else "CU_MEM_ATTACH_HOST"
        what = f"cuda.managed_array: cuMemAllocManaged of {size} bytes ({name})"
        self.ptr = self.device_ptr = _alloc(what, "cuMemAllocManaged", size, flags)
        weakref.finalize(self, _free_managed, self.ptr, ctx).atexit = False
        self._expose()


def _host_flag_names(flags: int) -> str:
    names = [
        name
        for bit, name in (
            (_CU_MEMHOSTALLOC_DEVICEMAP, "DEVICEMAP"),
            (_CU_MEMHOSTALLOC_PORTABLE, "PORTABLE"),
            (_CU_MEMHOSTALLOC_WRITECOMBINED, "WRITECOMBINED"),
        )
        if flags & bit
    ]
    return " | ".join(f"CU_MEMHOSTALLOC_{n}" for n in names)


def _alloc(what: str, fn: str, size: int, flags: int) -> int:
    """``fn(size, flags)``'s pointer; one retry after a collection when out of memory."""
    for attempt in (0, 1):
        try:
            return int(call(fn, size, flags))
        except CudaDriverError as exc:
            if exc.code == _CUDA_ERROR_OUT_OF_MEMORY and attempt == 0:
                gc.collect()  # unreachable arrays may still hold memory: free them first
                continue
            hint = (
                "this device or platform does not support managed memory "
                "(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)"
                if fn == "cuMemAllocManaged" and exc.name == "CUDA_ERROR_NOT_SUPPORTED"
                else ""
            )
            raise _refused(what, exc, hint) from None
    raise AssertionError("unreachable")


def _refused(what: str, exc: CudaDriverError, hint: str = "") -> CudaDriverError:
    """The driver's error, restated with what cujit was doing (and a hint where known)."""
    try:
        _, desc = error_name(exc.code)
    except Exception:  # noqa: BLE001 - the bindings themselves may be what is missing
        desc = ""
    desc = "; ".join(p for p in (desc, hint) if p)
    return CudaDriverError(what, exc.code, exc.name, desc)


def _free_host(ptr: int, ctx) -> None:
    _free("cuMemFreeHost", ptr, ctx)


def _free_managed(ptr: int, ctx) -> None:
    _free("cuMemFree", ptr, ctx)


def _free(fn: str, ptr: int, ctx) -> None:
    try:
        drv = get_driver()
        (err,) = getattr(drv, fn)(ptr)
        if err == _CUDA_ERROR_INVALID_CONTEXT:  # collected on a thread with no context
            ctx.make_current()
            getattr(drv, fn)(ptr)
    except Exception:  # noqa: BLE001, S110 - a finalizer must never raise
        pass


# -- the arrays ------------------------------------------------------------------------


def buffer_of(a) -> ReachableBuffer | None:
    """The mapped or managed allocation at the end of ``a``'s ``base`` chain, if any."""
    b = a
    while isinstance(b, np.ndarray):
        b = b.base
    return b if isinstance(b, ReachableBuffer) else None


def device_pointer(a: np.ndarray) -> int | None:
    """The device address of ``a``'s element 0, or None when ``a`` does not view a
    mapped or managed allocation (a ufunc result, a copy) or reaches outside it."""
    buf = buffer_of(a)
    if buf is None:
        return None
    host = a.__array_interface__["data"][0]
    lo, hi = byte_span(a.shape, a.strides, a.itemsize)
    if lo != hi and (host + lo < buf.ptr or host + hi > buf.ptr + max(buf.nbytes, 1)):
        return None
    return buf.device_ptr + (host - buf.ptr)


class ReachableArray(np.ndarray):
    """A NumPy array over memory that kernels address directly (numba's
    ``MappedNDArray`` / ``ManagedNDArray``): a host array and a device array at once."""

    stream = 0  # numba's: the stream given at allocation (exported in the CAI)

    def __array_finalize__(self, obj) -> None:
        # Views (slices, reshapes, transposes) keep the allocation's stream.
        if obj is not None:
            self.stream = getattr(obj, "stream", 0)

    # -- host reads: reported while a kernel that may write the memory runs -------------
    def __getitem__(self, key):
        if pending.WRITES:
            pending.check_read(buffer_of(self))
        return super().__getitem__(key)

    def __repr__(self) -> str:
        if pending.WRITES:
            pending.check_read(buffer_of(self))
        return super().__repr__()

    def __str__(self) -> str:
        if pending.WRITES:
            pending.check_read(buffer_of(self))
        return super().__str__()

    def tolist(self):
        if pending.WRITES:
            pending.check_read(buffer_of(self))
        return super().tolist()

    def _cujit_note_written(self, stream) -> pending.PendingWrite | None:
        """For the launch path: what marks this array as written once the kernel is queued."""
        buf = buffer_of(self)
        return None if buf is None else pending.PendingWrite(buf, stream)

    # -- device-array side ------------------------------------------------------------
    @property
    def device_ptr(self) -> int:
        ptr = device_pointer(self)
        if ptr is None:
            raise AttributeError(
                f"this {type(self).__name__} does not view mapped or "
                "managed memory (it is the result of a NumPy operation)"
            )
        return ptr

    @property
    def device_ctypes_pointer(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.device_ptr or None)

    @property
    def __cuda_array_interface__(self) -> dict:
        # Raising AttributeError makes hasattr() False: a derived array over plain
        # host memory is then treated as a host array everywhere.
        ptr = self.device_ptr
        from cujit.runtime.stream import stream_handle

        return {
            "shape": self.shape,
            "strides": None if self.flags.c_contiguous else self.strides,
            "data": (ptr, not self.flags.writeable),
            "typestr": self.dtype.str,
            # CAI v3: None (no ordering) unless a stream was given, as numba does.
            "stream": stream_handle(self.stream) or None,
            "version": 3,
        }

    def _cujit_device_view(self):
        """The launch path's no-copy view (``cujit.runtime.args``); None when this array
        does not view mapped or managed memory.

        The device is left unknown (``device_id`` None): mapped memory is reachable
        from every device under unified addressing, managed memory too.
        """
        ptr = device_pointer(self)
        if ptr is None:
            return None
        from cujit.runtime.memory import DeviceArray

        return DeviceArray._view(
            self.shape,
            self.strides,
            self.dtype,
            ptr,
            self,
            self.stream,
            not self.flags.writeable,
            None,
        )

    @property
    def alloc_size(self) -> int:
        buf = buffer_of(self)
        return buf.nbytes if buf is not None else self.nbytes

    def copy_to_host(self, ary: np.ndarray | None = None, stream=0) -> np.ndarray:
        """numba's method: a plain NumPy copy of the values (or copy them into ``ary``).

        The memory is host memory already: the copy is a NumPy copy, made once
        the kernels writing it have finished (synchronize first)."""
        if pending.WRITES:
            pending.check_read(buffer_of(self))
        values = self.view(np.ndarray)
        if ary is None:
            order = "F" if self.flags.f_contiguous and not self.flags.c_contiguous else "C"
            return np.array(values, order=order, copy=True)
        if ary.shape != self.shape or ary.dtype != self.dtype:
            raise ValueError(
                f"cannot copy an array of shape {self.shape}, dtype "
                f"{self.dtype} into one of shape {ary.shape}, dtype {ary.dtype}"
            )
        ary[...] = values
        return ary

    def copy_to_device(self, ary, stream=0) -> None:
        """numba's method: copy a host or device array of the same shape into this one."""
        if not isinstance(ary, np.ndarray) and hasattr(ary, "copy_to_host"):
            ary = ary.copy_to_host()
        self[...] = np.asarray(ary, dtype=self.dtype)

    def is_c_contiguous(self) -> bool:
        return bool(self.flags.c_contiguous)

    def is_f_contiguous(self) -> bool:
        return bool(self.flags.f_contiguous)


class MappedArray(ReachableArray):
    """``cuda.mapped_array``'s arrays (numba's ``MappedNDArray``)."""


class ManagedArray(ReachableArray):
    """``cuda.managed_array``'s arrays (numba's ``ManagedNDArray``)."""


MappedNDArray, ManagedNDArray = MappedArray, ManagedArray  # numba's names


def _layout(shape, dtype, strides, order) -> tuple[tuple, np.dtype, tuple, int]:
    """(shape, dtype, byte strides, bytes to allocate) for a new array."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(map(int, shape))
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    if strides is None:
        strides = contiguous_strides(shape, dtype.itemsize, order)
    else:
        strides = (
            (int(strides),) if isinstance(strides, (int, np.integer)) else tuple(map(int, strides))
        )
        if len(strides) != len(shape):
            raise ValueError(f"strides {strides} do not match shape {shape}")
    lo, hi = byte_span(shape, strides, dtype.itemsize)
    if lo < 0:
        raise ValueError("a new mapped or managed array cannot have negative strides")
    return shape, dtype, strides, hi


def wrap(buf: ReachableBuffer, cls: type, shape, dtype, strides, stream=0) -> ReachableArray:
    """An array of class ``cls`` over ``buf`` (whose base chain holds ``buf``)."""
    a = np.ndarray(shape, dtype, buffer=np.asarray(buf), strides=strides).view(cls)
    a.stream = stream
    return a


def mapped_array(
    shape,
    dtype=np.float64,
    strides=None,
    order: str = "C",
    stream=0,
    portable: bool = False,
    wc: bool = False,
) -> MappedArray:
    """``cuda.mapped_array``: an uninitialised array in mapped (zero-copy) host memory.

    ``portable``: page-locked for every context, not only the current one;
    ``wc``: write-combined, fast for the host to write and the device to read,
    slow for the host to read.
    """
    shape, dtype, strides, nbytes = _layout(shape, dtype, strides, order)
    buf = MappedBuffer(nbytes, portable=bool(portable), wc=bool(wc))
    return wrap(buf, MappedArray, shape, dtype, strides, stream)


def mapped_array_like(ary, stream=0, portable: bool = False, wc: bool = False) -> MappedArray:
    """``cuda.mapped_array_like``: a mapped array with ``ary``'s shape and dtype,
    contiguous in the order of ``ary``'s strides."""
    strides, order = strides_like(ary)
    return mapped_array(ary.shape, ary.dtype, strides, order, stream, portable, wc)


def managed_array(
    shape, dtype=np.float64, strides=None, order: str = "C", stream=0, attach_global: bool = True
) -> ManagedArray:
    """``cuda.managed_array``: an uninitialised array in managed (unified) memory.

    ``attach_global``: reachable from any stream on any device
    (``CU_MEM_ATTACH_GLOBAL``); False attaches it to the host
    (``CU_MEM_ATTACH_HOST``), reachable by devices that access managed memory
    concurrently (compute capability 6.0 and later).
    """
    shape, dtype, strides, nbytes = _layout(shape, dtype, strides, order)
    buf = ManagedBuffer(nbytes, attach_global=bool(attach_global))
    return wrap(buf, ManagedArray, shape, dtype, strides, stream)


def strides_like(ary) -> tuple[tuple | None, str]:
    """(strides, order) for a new contiguous array shaped like ``ary``.

    A C- or F-contiguous ``ary`` gives its order; another keeps the order of its
    dimensions by stride size (as NumPy's ``empty_like``), packed with no gaps.
    """
    flags = ary.flags
    order = "F" if flags.f_contiguous and not flags.c_contiguous else "C"
    if flags.c_contiguous or flags.f_contiguous or ary.ndim <= 1:
        return None, order
    itemsize = np.dtype(ary.dtype).itemsize
    strides = [0] * ary.ndim
    step = itemsize
    for d in sorted(range(ary.ndim), key=lambda d: (abs(ary.strides[d]), -d)):
        strides[d] = step
        step *= max(ary.shape[d], 1)
    return tuple(strides), order


__all__ = [
    "ManagedArray",
    "ManagedBuffer",
    "ManagedNDArray",
    "MappedArray",
    "MappedBuffer",
    "MappedNDArray",
    "ReachableArray",
    "ReachableBuffer",
    "buffer_of",
    "device_pointer",
    "managed_array",
    "mapped_array",
    "mapped_array_like",
    "strides_like",
    "wrap",
]
