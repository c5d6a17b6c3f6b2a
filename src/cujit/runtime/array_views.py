"""numba's ``DeviceNDArray`` views and flags, for ``memory.DeviceArray`` (a mixin) and
the CPU target's ``HostDeviceArray``.

``flags`` (``C_CONTIGUOUS``, ``F_CONTIGUOUS``: as keys and as attributes), ``view(dtype)``
(the same memory read as another dtype; the last axis rescales, as NumPy's), ``split
(section)`` (a 1-D array's consecutive views of ``section`` elements, the last maybe
shorter), ``squeeze(axis=None)``, ``getitemsize()`` and ``bind(stream)``.  None copies.
"""

from __future__ import annotations

import numpy as np


class ArrayFlags(dict):
    """``a.flags['C_CONTIGUOUS']`` and ``a.flags.c_contiguous``."""

    def __getattr__(self, name: str) -> bool:
        try:
            return self[name.upper()]
        except KeyError:
            raise AttributeError(name) from None


def split_bounds(size: int, section: int) -> list[tuple[int, int]]:
    """The [start, stop) of each part of ``split(section)``."""
    if section <= 0:
        raise ValueError(f"split needs a positive section size, not {section}")
    return [(lo, min(lo + section, size)) for lo in range(0, size, section)]


class DeviceArrayViews:
    """Needs ``shape``, ``strides``, ``dtype``, ``ndim``, ``size``, ``device_ptr``,
    ``is_c_contiguous``/``is_f_contiguous`` and ``_derive(shape, strides, ptr)``."""

    __slots__ = ()

    @property
    def flags(self) -> ArrayFlags:
        return ArrayFlags(C_CONTIGUOUS=self.is_c_contiguous(), F_CONTIGUOUS=self.is_f_contiguous())

    def getitemsize(self) -> int:
        return self.dtype.itemsize

    def bind(self, stream=0):
        """This array with ``stream`` as its default stream (a view)."""
        v = self._derive(self.shape, self.strides, self.device_ptr)
        v.stream = stream
        return v

    def view(self, dtype):
        """The same memory as elements of ``dtype``."""
        dtype = np.dtype(dtype)
        old = self.dtype.itemsize
        shape, strides = list(self.shape), list(self.strides)
        if dtype.itemsize != old:
            if not shape or strides[-1] != old:
                raise ValueError(
                    "to view an array as a dtype of another size, its last axis must be contiguous"
                )
            nbytes = shape[-1] * old
            if nbytes % dtype.itemsize:
                raise ValueError(
                    f"the last axis ({nbytes} bytes) does not divide into {dtype} elements"
                )
            shape[-1], strides[-1] = nbytes // dtype.itemsize, dtype.itemsize
        v = self._derive(tuple(shape), tuple(strides), self.device_ptr)
        v.dtype = dtype
        return v

    def split(self, section: int, stream=0) -> list:
        """Views of consecutive ``section``-element parts of a 1-D array."""
        if self.ndim != 1:
            raise ValueError("only 1-D device arrays can be split")
        step = self.strides[0]
        return [
            self._derive((hi - lo,), (step,), self.device_ptr + lo * step)
            for lo, hi in split_bounds(self.size, section)
        ]

    def squeeze(self, axis=None, stream=0):
        """The array without its extent-1 axes (or only ``axis``, which must be 1)."""
        axes = (
            range(self.ndim)
            if axis is None
            else [a % self.ndim for a in (axis if isinstance(axis, tuple) else (axis,))]
        )
        drop = set()
        for a in axes:
            if self.shape[a] == 1:
                drop.add(a)
            elif axis is not None:
                raise ValueError(f"cannot squeeze axis {a}: its extent is {self.shape[a]}")
        keep = [k for k in range(self.ndim) if k not in drop]
        return self._derive(
            tuple(self.shape[k] for k in keep),
            tuple(self.strides[k] for k in keep),
            self.device_ptr,
        )


__all__ = ["ArrayFlags", "DeviceArrayViews", "split_bounds"]
