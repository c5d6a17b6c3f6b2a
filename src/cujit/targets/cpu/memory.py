"""Device arrays for the CPU target: host memory with the GPU runtime's API.

On the CPU target the "device" is the host, so a device array is a NumPy array
(a subclass, :class:`HostDeviceArray`) carrying numba's ``DeviceNDArray``
methods: ``copy_to_host``, ``copy_to_device``, ``is_c_contiguous``... Slicing,
``reshape``, ``T`` give views sharing memory, as device views do; NumPy sees the
memory through ``__array_interface__``.  It deliberately has no
``__cuda_array_interface__``: that would tell CuPy or PyTorch it is GPU memory.

Copies are synchronous and launches run to completion, so ``synchronize`` has
nothing to wait for.  The ``stream`` arguments are accepted and ignored.
"""

from __future__ import annotations

import numpy as np


class HostDeviceArray(np.ndarray):
    """numba's ``DeviceNDArray`` API over host memory (a NumPy array subclass)."""

    stream = 0

    @property
    def alloc_size(self) -> int:
        base = self
        while isinstance(base.base, np.ndarray):
            base = base.base
        return base.nbytes

    def copy_to_host(self, ary: np.ndarray | None = None, stream=0) -> np.ndarray:
        """A new plain NumPy array with this array's contents (or copy into ``ary``)."""
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
        return self.view()

    def __repr__(self) -> str:
        return f"<HostDeviceArray shape={self.shape} dtype={self.dtype}>"


DeviceNDArray = HostDeviceArray  # numba's name


def _shape(shape) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(map(int, shape))


def device_array(
    shape, dtype=np.float64, strides=None, order: str = "C", stream=0
) -> HostDeviceArray:
    """An uninitialised device array (host memory)."""
    shape, dtype = _shape(shape), np.dtype(dtype)
    if strides is None:
        return np.empty(shape, dtype, order=order).view(HostDeviceArray)
    # Explicit strides: a buffer covering them, viewed with them.
    if any(s < 0 for s in strides):
        raise ValueError("a new device array cannot have negative strides")
    span = sum((n - 1) * abs(s) for n, s in zip(shape, strides, strict=True)) + dtype.itemsize
    buf = np.empty(span if all(shape) else 0, np.uint8)
    return np.ndarray(shape, dtype, buffer=buf, strides=strides).view(HostDeviceArray)


def device_array_like(ary, stream=0) -> HostDeviceArray:
    """An uninitialised contiguous device array with ``ary``'s shape and dtype, its
    dimensions laid out in ``ary``'s order of strides (NumPy's ``zeros_like``)."""
    from cujit.runtime.layout import strides_like

    dtype = np.dtype(ary.dtype)
    shape = _shape(ary.shape)
    strides = strides_like(shape, tuple(ary.strides), dtype.itemsize)
    return device_array(shape, dtype, strides=strides)


def to_device(obj, stream=0, copy: bool = True, to: HostDeviceArray | None = None):
    """A new device array holding a copy of ``obj`` (or copy ``obj`` into ``to``)."""
    if to is not None:
        to.copy_to_device(obj)
        return to
    host = np.asarray(obj)
    dev = device_array(host.shape, host.dtype, order=_order(host))
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
    return device_array(shape, dtype, strides, order)


def mapped_array_like(ary, stream=0, portable: bool = False, wc: bool = False):
    """``cuda.mapped_array_like``: ``ary``'s shape and dtype, contiguous in its strides' order."""
    strides, order = _strides_like(ary)
    return device_array(ary.shape, ary.dtype, strides, order)


def managed_array(
    shape, dtype=np.float64, strides=None, order: str = "C", stream=0, attach_global: bool = True
) -> HostDeviceArray:
    """``cuda.managed_array``: as ``mapped_array``, host memory that CPU kernels address."""
    return device_array(shape, dtype, strides, order)


def _strides_like(ary):
    from cujit.runtime.mapped import strides_like  # layout arithmetic only: no driver

    return strides_like(ary)


def is_cuda_array(obj) -> bool:
    return hasattr(obj, "__cuda_array_interface__")


def synchronize() -> None:
    """Nothing to wait for: CPU launches and copies finish before they return."""


def _order(ary) -> str:
    flags = getattr(ary, "flags", None)
    if flags is not None and flags.f_contiguous and not flags.c_contiguous:
        return "F"
    return "C"
