"""Other libraries' device arrays as cujit DeviceArrays, with no copy.

Two protocols bring foreign memory in:

- the CUDA Array Interface (``__cuda_array_interface__``; CuPy, numba, PyTorch
  with version 2): a dict with the pointer, shape, byte strides, typestr, a
  read-only flag in ``data[1]`` and, from version 3, the ``stream`` the
  producer last worked on.  Per the v3 specification the consumer must order
  its work after that stream: ``as_cuda_array`` and a launch synchronize it,
  as numba does (numba's ``CUDA_ARRAY_INTERFACE_SYNC`` config and
  ``CUJIT_CUDA_ARRAY_INTERFACE_SYNC``, both on by default); with either
  off, ``as_cuda_array`` does not wait and a launch makes its own stream wait on
  it through an event (``event.order_after``), which does not block the host.
- DLPack (``__dlpack__`` / ``__dlpack_device__``; PyTorch, JAX, CuPy): the
  consumer passes its stream to ``__dlpack__`` and the *producer* orders
  its work before it.  The capsule is parsed by cuda.core's
  ``StridedMemoryView``, a maintained implementation of DLPack up to 1.0
  (versioned capsules carry the read-only flag), kept alive as the view's base.

For a kernel argument, a CAI of version 3 is used when present (a dict is
cheaper than a capsule and it states its stream); otherwise DLPack when
offered (it always orders); otherwise the CAI as given (version 2 carries
no stream, so no ordering is possible, as in numba).

Every view keeps its producer alive, remembers the device the memory is on
and whether it is read-only.
"""

from __future__ import annotations

import numpy as np

from cujit import numba_config
from cujit.runtime.driver import call
from cujit.runtime.layout import contiguous_strides
from cujit.runtime.memory import DeviceArray
from cujit.runtime.stream import LEGACY, stream_handle

_KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 2, 3, 13
_smv_class = None


# -- CUDA Array Interface ------------------------------------------------------------


def _cai_view(obj, cai: dict) -> DeviceArray:
    """A DeviceArray over a CAI dict's memory; ``obj`` (the producer) is kept alive."""
    if cai.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported (masked CUDA arrays)")
    if getattr(obj, "__cujit_host_memory__", False):
        raise TypeError(
            "a CPU-target device array is host memory, which the GPU cannot address: "
            "copy it with cuda.to_device"
        )
    dtype = np.dtype(cai["typestr"])
    own = getattr(obj, "dtype", None)  # a typestr of |V<n> only: ml_dtypes' bfloat16, records
    if dtype.kind == "V" and isinstance(own, np.dtype) and own.itemsize == dtype.itemsize:
        dtype = own
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    strides = (
        tuple(int(s) for s in strides) if strides else contiguous_strides(shape, dtype.itemsize)
    )
    ptr, readonly = cai["data"]
    ptr = int(ptr or 0)
    stream = cai.get("stream") or 0
    return DeviceArray._view(
        shape, strides, dtype, ptr, obj, stream, bool(readonly), _pointer_device(ptr)
    )


def _pointer_device(ptr: int) -> int | None:
    """The ordinal of the device a pointer's memory lives on (None if unknown).

    The CAI does not say which device; the driver knows every pointer it
    allocated (unified addressing), whichever library asked for it.
    """
    if not ptr:
        return None
    try:
        from cuda.bindings import driver as drv

        attr = drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        return int(call("cuPointerGetAttribute", attr, ptr))
    except Exception:  # noqa: BLE001 - no driver, or not device memory: leave it unchecked
        return None


def _cai_stream(cai: dict) -> int | None:
    if cai.get("version", 0) < 3:
        return None
    s = cai.get("stream")
    if s == 0:  # forbidden by the specification: 0 would be ambiguous
        raise ValueError(
            "__cuda_array_interface__ has stream 0, which CAI v3 disallows "
            "(1 names the legacy default stream, 2 the per-thread one)"
        )
    return s


# -- DLPack ----------------------------------------------------------------------------


def _strided_memory_view():
    """cuda.core's StridedMemoryView (its module moved out of ``experimental`` in 0.4)."""
    global _smv_class
    if _smv_class is None:
        try:
            from cuda.core.utils import StridedMemoryView
        except ImportError:
            try:
                from cuda.core.experimental.utils import StridedMemoryView
            except ImportError:
                raise ImportError(
                    "importing DLPack arrays needs the 'cuda-core' package (pip install cuda-core)"
                ) from None
        _smv_class = StridedMemoryView
    return _smv_class


def _dlpack_view(obj, consumer: int | None) -> DeviceArray:
    """A DeviceArray over a DLPack producer's memory.

    ``consumer`` is the raw handle of the stream that will use the memory
    (the producer makes it wait for its own work), or None for no ordering.
    """
    smv_cls = _strided_memory_view()
    # DLPack names the legacy default stream 1 (0 is disallowed); -1 asks for no ordering.
    stream_ptr = -1 if consumer is None else (consumer or LEGACY)
    make = getattr(smv_cls, "from_dlpack", None)
    smv = make(obj, stream_ptr=stream_ptr) if make else smv_cls(obj, stream_ptr=stream_ptr)
    if not smv.is_device_accessible:
        raise TypeError(
            f"{type(obj).__name__} holds host memory (DLPack device "
            f"{obj.__dlpack_device__()}): copy it with cuda.to_device instead"
        )
    dtype = np.dtype(smv.dtype)
    shape = tuple(smv.shape)
    # StridedMemoryView counts strides in elements (as DLPack does); None = C order.
    strides = (
        tuple(s * dtype.itemsize for s in smv.strides)
        if smv.strides is not None
        else contiguous_strides(shape, dtype.itemsize)
    )
    kind, _ = obj.__dlpack_device__()
    device_id = smv.device_id if int(kind) in (_KDL_CUDA, _KDL_CUDA_MANAGED) else None
    stream = 0 if consumer is None else consumer
    # The view (and so the capsule and the producer) lives as long as the array.
    return DeviceArray._view(
        shape, strides, dtype, int(smv.ptr), smv, stream, bool(smv.readonly), device_id
    )


def _has_dlpack(obj) -> bool:
    return hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")


# -- public entry points ---------------------------------------------------------------


def as_cuda_array(obj, sync: bool = True) -> DeviceArray:
    """``cuda.as_cuda_array(obj)``: a zero-copy DeviceArray view of a CAI object.

    With ``sync`` (the default, as in numba) the producer's stream, if the
    CAI names one, is synchronized so the data is ready for any stream.
    """
    if isinstance(obj, DeviceArray):
        return obj
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError(
            f"{type(obj).__name__} does not expose __cuda_array_interface__ "
            "(for DLPack producers use cuda.from_dlpack)"
        )
    producer = _cai_stream(cai)
    view = _cai_view(obj, cai)
    if producer is not None:
        # The array's stream is the producer's, borrowed (numba: an external stream).
        from cujit.runtime.stream import external_stream

        view.stream = external_stream(producer)
        if sync and numba_config.array_interface_sync():
            view.stream.synchronize()
    return view


def from_cuda_array_interface(desc: dict, owner=None, sync: bool = True) -> DeviceArray:
    """``cuda.from_cuda_array_interface(desc)``: a DeviceArray over the memory a CUDA Array
    Interface dict describes (``owner`` is kept alive with it); with ``sync``, the stream
    the dict names is synchronized first, as ``as_cuda_array`` does."""
    if desc.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported (masked CUDA arrays)")

    class _Described:  # an object exposing the dict, kept alive by the view
        __cuda_array_interface__ = desc
        keep = owner

    return as_cuda_array(_Described(), sync=sync)


def from_dlpack(obj, stream=0) -> DeviceArray:
    """``cuda.from_dlpack(obj)``: a zero-copy DeviceArray view of a DLPack producer.

    The producer orders its pending work before ``stream`` (the default
    stream unless given); ``stream=None`` asks for no ordering at all.
    """
    if isinstance(obj, DeviceArray):
        return obj
    if not _has_dlpack(obj):
        raise TypeError(
            f"{type(obj).__name__} does not implement the DLPack protocol "
            "(__dlpack__ and __dlpack_device__)"
        )
    return _dlpack_view(obj, None if stream is None else stream_handle(stream))


def import_for_launch(obj, stream) -> DeviceArray | None:
    """A foreign array argument as a DeviceArray ready for a launch on ``stream``.

    Returns None when ``obj`` speaks neither protocol.  The launch stream is
    ordered after the producer's (CAI v3: an event wait; DLPack: the producer's job).
    """
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None and (cai.get("version", 0) >= 3 or not _has_dlpack(obj)):
        producer = _cai_stream(cai)
        if producer is not None:
            _order_launch(producer, stream)
        return _cai_view(obj, cai)
    if _has_dlpack(obj):
        return _dlpack_view(obj, stream_handle(stream))
    return None


def _order_launch(producer: int, stream) -> None:
    """Order a launch on ``stream`` after the producer's stream: as numba, by synchronizing
    it (``numba_config.array_interface_sync()``, the default); otherwise by making the launch
    stream wait on it through an event, which does not block the host."""
    if numba_config.array_interface_sync():
        from cujit.runtime.stream import external_stream

        external_stream(producer).synchronize()
    else:
        from cujit.runtime.event import order_after

        order_after(producer, stream)


def is_foreign_array(obj) -> bool:
    """Whether ``obj`` is another library's device array that cujit can view."""
    return not isinstance(obj, (DeviceArray, np.ndarray)) and (
        hasattr(obj, "__cuda_array_interface__") or _has_dlpack(obj)
    )
