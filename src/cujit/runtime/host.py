"""Page-locked ("pinned") host memory: what makes stream copies asynchronous.

A copy between the device and pageable host memory is staged through a driver
buffer, so ``cuMemcpy*Async`` on pageable memory returns only once the host
side is done: nothing overlaps.  With pinned memory the DMA engine reads or
writes the host array directly, and an async copy returns at once, in order
on its stream.

- ``cuda.pinned_array(shape, dtype)``: a NumPy array over ``cuMemHostAlloc``
  memory, freed when the array (and every view of it) is collected;
- ``with cuda.pinned(a, b):`` page-locks existing arrays for the block
  (``cuMemHostRegister``), numba's context manager.
"""

from __future__ import annotations

import contextlib
import weakref

import numpy as np

from cujit.runtime.driver import call, get_driver
from cujit.runtime.layout import byte_span, contiguous_strides

_CU_MEMHOSTALLOC_PORTABLE = 1  # usable from every context, like the runtime's default


class PinnedBuffer:
    """One ``cuMemHostAlloc`` block, freed when collected; NumPy arrays use it as base."""

    __slots__ = ("__array_interface__", "__weakref__", "nbytes", "ptr")

    def __init__(self, nbytes: int):
        from cujit.runtime.context import get_context

        get_context()
        self.nbytes = nbytes
        self.ptr = int(call("cuMemHostAlloc", max(nbytes, 1), _CU_MEMHOSTALLOC_PORTABLE))
        weakref.finalize(self, _free_host, self.ptr).atexit = False
        # Exposed as a flat byte buffer so np.ndarray(buffer=...) can hold a reference.
        self.__array_interface__ = {
            "shape": (max(nbytes, 1),),
            "typestr": "|u1",
            "data": (self.ptr, False),
            "version": 3,
        }


def _free_host(ptr: int) -> None:
    try:
        get_driver().cuMemFreeHost(ptr)
    except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
        pass


def pinned_array(shape, dtype=np.float64, strides=None, order: str = "C") -> np.ndarray:
    """``cuda.pinned_array(shape, dtype)``: an uninitialised array in pinned host memory."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(map(int, shape))
    if strides is None:
        strides = contiguous_strides(shape, dtype.itemsize, order)
    lo, hi = byte_span(shape, strides, dtype.itemsize)
    if lo < 0:
        raise ValueError("a pinned array cannot have negative strides")
    buf = np.asarray(PinnedBuffer(hi))  # the array's base chain holds the PinnedBuffer
    return np.ndarray(shape, dtype, buffer=buf, strides=strides)


def pinned_array_like(ary) -> np.ndarray:
    """A pinned array with ``ary``'s shape and dtype, contiguous, its dimensions laid out in
    the order of ``ary``'s strides (NumPy's ``zeros_like``, as ``device_array_like``)."""
    from cujit.runtime.layout import strides_like

    dtype = np.dtype(ary.dtype)
    shape = tuple(map(int, ary.shape))
    strides = strides_like(shape, tuple(ary.strides), dtype.itemsize)
    return pinned_array(shape, dtype, strides=strides)


def pinned(*arrays) -> contextlib.AbstractContextManager[None]:
    """``with cuda.pinned(a, ...):`` page-locks existing host arrays inside the block.
    The current context is bound at the call, so that its error comes from the call."""
    from cujit.runtime.context import get_context

    get_context()
    return _pinned(arrays)


@contextlib.contextmanager
def _pinned(arrays):
    registered = []
    try:
        for a in arrays:
            a = np.asarray(a)
            if a.nbytes == 0:
                continue
            lo, hi = byte_span(a.shape, a.strides, a.itemsize)
            ptr = a.ctypes.data + lo
            call("cuMemHostRegister", ptr, hi - lo, 0)
            registered.append(ptr)
        yield
    finally:
        for ptr in registered:
            get_driver().cuMemHostUnregister(ptr)


def is_pinned(ary) -> bool:
    """Whether ``ary``'s memory is page-locked (allocated or registered with the driver)."""
    ptr = np.asarray(ary).ctypes.data
    try:
        drv = get_driver()
        attr = drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE
        err, kind = drv.cuPointerGetAttribute(attr, ptr)
    except Exception:  # noqa: BLE001
        return False
    return err == 0 and int(kind) == int(drv.CUmemorytype.CU_MEMORYTYPE_HOST)


__all__ = ["PinnedBuffer", "is_pinned", "pinned", "pinned_array", "pinned_array_like"]
