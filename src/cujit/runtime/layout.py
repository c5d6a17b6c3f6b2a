"""Array layout arithmetic shared by device arrays and argument packing.

Pure functions on (shape, strides in bytes, itemsize): no driver, no GPU, so
the whole of it is unit-tested on any machine.  ``check_host_copy_strides`` is the
rule both targets' ``copy_to_host`` apply to a view's strides.
"""

from __future__ import annotations

import operator

from cujit import config


def contiguous_strides(shape: tuple[int, ...], itemsize: int, order: str = "C") -> tuple[int, ...]:
    """Byte strides of a contiguous array of ``shape`` in C or Fortran order."""
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', not {order!r}")
    strides = [0] * len(shape)
    step = itemsize
    dims = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for d in dims:
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def is_contiguous(shape, strides, itemsize: int, order: str) -> bool:
    """NumPy's rule: dimensions of extent 1 may have any stride; empty arrays are contiguous."""
    if 0 in shape:
        return True
    expect = itemsize
    dims = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for d in dims:
        if shape[d] != 1 and strides[d] != expect:
            return False
        expect *= shape[d]
    return True


def strides_like(shape, strides, itemsize: int) -> tuple[int, ...]:
    """Byte strides of a new contiguous array laid out like one of ``strides``: C order
    for a C-contiguous (or 0/1-d) array, F order for an F-contiguous one, and otherwise
    the dimensions ordered by decreasing absolute stride (NumPy's ``order='K'``)."""
    if is_contiguous(shape, strides, itemsize, "C") or len(shape) <= 1:
        return contiguous_strides(shape, itemsize, "C")
    if is_contiguous(shape, strides, itemsize, "F"):
        return contiguous_strides(shape, itemsize, "F")
    # Stable: dimensions of equal stride keep their order, as NumPy keeps them.
    outer_first = sorted(range(len(shape)), key=lambda d: -abs(strides[d]))
    out = [0] * len(shape)
    step = itemsize
    for d in reversed(outer_first):
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def byte_span(shape, strides, itemsize: int) -> tuple[int, int]:
    """(lowest, one past highest) byte offset an array touches, relative to element 0.

    Negative strides reach below element 0; a strided copy moves this span.
    """
    if 0 in shape:
        return 0, 0
    lo = hi = 0
    for n, s in zip(shape, strides, strict=True):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + itemsize


def index_view(shape, strides, key) -> tuple[int, tuple[int, ...], tuple[int, ...], bool]:  # noqa: C901 -- NumPy's basic indexing (ints, slices, Ellipsis) with NumPy's error for each misuse
    """Apply a basic index (ints, slices, Ellipsis) to a layout.

    Returns (byte offset of the new element 0, new shape, new strides, whether
    every dimension was indexed by an int, i.e. the result is one element).
    """
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = len(key) - n_ell
    if n_real > len(shape):
        raise IndexError(
            f"too many indices: array is {len(shape)}-dimensional, but {n_real} were indexed"
        )
    if n_ell:
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (len(shape) - n_real) + key[i + 1 :]
    else:
        key = key + (slice(None),) * (len(shape) - len(key))
    offset = 0
    new_shape: list[int] = []
    new_strides: list[int] = []
    for dim, (k, n, s) in enumerate(zip(key, shape, strides, strict=True)):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if length:  # an empty slice may start out of range; it never reads it
                offset += start * s
            new_shape.append(length)
            new_strides.append(s * step)
            continue
        try:
            if isinstance(k, bool) or type(k).__name__ == "bool_":  # a mask, not an index
                raise TypeError
            i = operator.index(k)
        except TypeError:
            raise TypeError(
                f"device arrays support basic indexing only (ints, slices, '...'), not {k!r}"
            ) from None
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
        offset += (i + n if i < 0 else i) * s
    return offset, tuple(new_shape), tuple(new_strides), not new_shape and len(shape) > 0


def check_host_copy_strides(strides: tuple[int, ...]) -> None:
    """numba refuses to copy a view with a negative stride to the host; so does cujit
    unless ``CUJIT_NEGATIVE_STRIDE_COPIES`` lets it."""
    if any(s < 0 for s in strides) and not config.NEGATIVE_STRIDE_COPIES.get():
        raise NotImplementedError(
            f"D->H copy not implemented for negative strides: {tuple(strides)} (copy a "
            "view with positive strides and reverse it on the host, or set "
            "CUJIT_NEGATIVE_STRIDE_COPIES=1)"
        )
