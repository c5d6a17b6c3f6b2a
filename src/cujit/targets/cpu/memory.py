"""Device arrays for the CPU target: host memory with the GPU runtime's API.

On the CPU target the "device" is the host, so a device array is a NumPy array
(a subclass, :class:`HostDeviceArray`) carrying numba's ``DeviceNDArray``
methods: ``copy_to_host``, ``copy_to_device``, ``is_c_contiguous``... Slicing,
``reshape`` give views sharing memory, as device views do, and ``T`` / ``transpose()``
of a 2-D array a new C-contiguous copy, as numba's device arrays do.  NumPy sees the
memory through ``__array_interface__``; cujit and numba.cuda code see it through
``__cuda_array_interface__`` (host pointers, as numba's simulator gives: see
``interop.py``, which also checks that a CAI given to the CPU target points at memory it
allocated, never at a GPU's).  ``bool(a)`` is numba's: whether the first extent is
non-zero.

Copies are synchronous and launches run to completion, so ``synchronize`` has
nothing to wait for.  An array remembers the ``stream`` it was made on (views inherit
it), which its CUDA Array Interface names.
"""

from __future__ import annotations

import ctypes

import numpy as np

from cujit.runtime.layout import check_host_copy_strides


class HostDeviceArray(np.ndarray):
    """numba's ``DeviceNDArray`` API over host memory (a NumPy array subclass)."""

    stream = 0
    # Its CUDA Array Interface gives host pointers: the GPU runtime copies such an array
    # as a host array, never takes it for device memory.
    __cujit_host_memory__ = True

    def __array_finalize__(self, obj) -> None:
        # Views and results of NumPy operations keep their source's stream.
        stream = getattr(obj, "stream", 0)
        if stream != 0:
            self.stream = stream

    def __bool__(self) -> bool:
        # numba's device arrays have a length and no truth of their own: `if not b:`
        # asks whether the first extent is zero, never about the elements.
        if self.ndim == 0:
            return bool(self.view(np.ndarray))
        return self.shape[0] != 0

    @property
    def __cuda_array_interface__(self) -> dict:
        from cujit.targets.cpu.interop import array_interface

        return array_interface(self)

    @property
    def device_ctypes_pointer(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.ctypes.data if self.size else None)

    @property
    def gpu_data(self):
        """numba's ``gpu_data``: the bytes this array's elements span (address, size and
        the allocation holding them)."""
        from cujit.runtime.ipc import DevicePointer  # a dataclass: no driver
        from cujit.runtime.layout import byte_span

        lo, hi = byte_span(self.shape, self.strides, self.dtype.itemsize)
        return DevicePointer(self.ctypes.data + lo, hi - lo, _root(self))

    def get_ipc_handle(self):
        from cujit.targets.cpu.interop import ipc_unavailable

        raise ipc_unavailable()

    @property
    def T(self) -> HostDeviceArray:
        return self.transpose()

    def transpose(self, *axes) -> HostDeviceArray:
        """A new C-contiguous array holding the transpose (numba's device arrays copy),
        or the array itself for the identity permutation."""
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = axes[0]
        axes = tuple(range(self.ndim))[::-1] if not axes else tuple(map(int, axes))
        if axes == tuple(range(self.ndim)):  # numba: the array itself
            return self
        host = np.transpose(self.view(np.ndarray), axes)
        out = device_array(host.shape, host.dtype, stream=self.stream)
        out.view(np.ndarray)[...] = host
        return out

    @property
    def alloc_size(self) -> int:
        return _root(self).nbytes

    def copy_to_host(self, ary: np.ndarray | None = None, stream=0) -> np.ndarray:
        """A new plain NumPy array with this array's contents (or copy into ``ary``); a
        view with a negative stride is refused, as on a GPU."""
        check_host_copy_strides(self.strides)
        if ary is None:
            order = "F" if self.flags.f_contiguous and not self.flags.c_contiguous else "C"
            return np.array(self.view(np.ndarray), order=order, copy=True)
        if ary.shape != self.shape or ary.dtype != self.dtype:
            raise ValueError(
                f"cannot copy a device array of shape {self.shape}, dtype "
                f"{self.dtype} into a host array of shape {ary.shape}, dtype "
                f"{ary.dtype}"
            )
        ary[...] = self
        return ary

    def copy_to_device(self, ary, stream=0) -> None:
        """Copy a host (or device) array of the same shape into this array."""
        self[...] = np.asarray(ary, dtype=self.dtype)

    def is_c_contiguous(self) -> bool:
        return bool(self.flags.c_contiguous)

    def is_f_contiguous(self) -> bool:
        return bool(self.flags.f_contiguous)

    def getitemsize(self) -> int:
        return self.dtype.itemsize

    def split(self, section: int, stream=0) -> list:
        """Views of consecutive ``section``-element parts of a 1-D array (numba's)."""
        from cujit.runtime.array_views import split_bounds

        if self.ndim != 1:
            raise ValueError("only 1-D device arrays can be split")
        return [self[lo:hi] for lo, hi in split_bounds(self.size, section)]

    def bind(self, stream=0) -> HostDeviceArray:
        """A view of this array with ``stream`` as its stream."""
        v = self.view()
        v.stream = stream
        return v

    def __repr__(self) -> str:
        return f"<HostDeviceArray shape={self.shape} dtype={self.dtype}>"


DeviceNDArray = HostDeviceArray  # numba's name


def _root(a: np.ndarray) -> np.ndarray:
    """The array owning ``a``'s memory (the end of its chain of bases)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _shape(shape) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(map(int, shape))


# As cudaMalloc lays memory out: each allocation starts 256-byte aligned and owns its
# size rounded up to 512 bytes, so that a kernel's short overrun past an array's end
# (through a raw pointer, which no bounds check sees) lands in the allocation's own
# slack here as it does on a GPU, instead of in another object's heap memory.
DEVICE_ALIGN, DEVICE_GRANULE = 256, 512


def _device_bytes(nbytes: int) -> np.ndarray:
    """``nbytes`` bytes of device memory: a uint8 array owning them (its base is not an
    array, so ``alloc_size`` is ``nbytes``), inside an aligned, rounded-up block."""
    padded = -(-nbytes // DEVICE_GRANULE) * DEVICE_GRANULE
    block = np.empty(padded + DEVICE_ALIGN, np.uint8)
    start = -block.ctypes.data % DEVICE_ALIGN
    return np.frombuffer(memoryview(block)[start : start + nbytes], np.uint8)


def device_array(
    shape, dtype=np.float64, strides=None, order: str = "C", stream=0
) -> HostDeviceArray:
    """An uninitialised device array (host memory)."""
    from cujit.targets.cpu.interop import register_allocation

    shape, dtype = _shape(shape), np.dtype(dtype)
    if strides is None:
        buf = _device_bytes(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize)
        out = np.ndarray(shape, dtype, buffer=buf, order=order).view(HostDeviceArray)
    else:
        # Explicit strides: a buffer covering them, viewed with them.
        if any(s < 0 for s in strides):
            raise ValueError("a new device array cannot have negative strides")
        span = sum((n - 1) * abs(s) for n, s in zip(shape, strides, strict=True))
        buf = _device_bytes(span + dtype.itemsize if all(shape) else 0)
        out = np.ndarray(shape, dtype, buffer=buf, strides=strides).view(HostDeviceArray)
    register_allocation(buf)
    if stream is not None and stream != 0:
        out.stream = stream
    return out


def device_array_like(ary, stream=0) -> HostDeviceArray:
    """An uninitialised contiguous device array with ``ary``'s shape and dtype, its
    dimensions laid out in ``ary``'s order of strides (NumPy's ``zeros_like``)."""
    from cujit.runtime.layout import strides_like

    dtype = np.dtype(ary.dtype)
    shape = _shape(ary.shape)
    strides = strides_like(shape, tuple(ary.strides), dtype.itemsize)
    return device_array(shape, dtype, strides=strides, stream=stream)


def to_device(obj, stream=0, copy: bool = True, to: HostDeviceArray | None = None):
    """A new device array holding a copy of ``obj`` (or copy ``obj`` into ``to``)."""
    if to is not None:
        to.copy_to_device(obj)
        return to
    host = np.asarray(obj)
    dev = device_array(host.shape, host.dtype, order=_order(host), stream=stream)
    if copy:
        dev[...] = host
    return dev


def mapped_array(
    shape,
    dtype=np.float64,
    strides=None,
    order: str = "C",
    stream=0,
    portable: bool = False,
    wc: bool = False,
) -> HostDeviceArray:
    """``cuda.mapped_array``: host memory is what CPU kernels address, so a device array.

    ``portable`` and ``wc`` (page-locking flags) mean nothing here and are accepted."""
    return device_array(shape, dtype, strides, order, stream)


def mapped_array_like(ary, stream=0, portable: bool = False, wc: bool = False):
    """``cuda.mapped_array_like``: ``ary``'s shape and dtype, contiguous in its strides' order."""
    strides, order = _strides_like(ary)
    return device_array(ary.shape, ary.dtype, strides, order, stream)


def managed_array(
    shape, dtype=np.float64, strides=None, order: str = "C", stream=0, attach_global: bool = True
) -> HostDeviceArray:
    """``cuda.managed_array``: as ``mapped_array``, host memory that CPU kernels address."""
    return device_array(shape, dtype, strides, order, stream)


def _strides_like(ary):
    from cujit.runtime.mapped import strides_like  # layout arithmetic only: no driver

    return strides_like(ary)


def synchronize() -> None:
    """Nothing to wait for: CPU launches and copies finish before they return."""


def _order(ary) -> str:
    flags = getattr(ary, "flags", None)
    if flags is not None and flags.f_contiguous and not flags.c_contiguous:
        return "F"
    return "C"
