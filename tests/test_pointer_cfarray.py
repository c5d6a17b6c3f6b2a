"""numba's carray/farray in kernels: an array over the memory a CPointer argument
names, C- or Fortran-ordered, with extents given at compile or at run time."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, types
from cujit.cuda.np.numpy_support import carray, farray
from cujit.diagnostics import TypingError

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def _address(target, host):
    """The array's memory as the kernel sees it, and what copies it back."""
    dev = cuda.to_device(host) if target == "cuda" else host
    if target == "cuda":
        return int(dev.device_ctypes_pointer.value), dev.copy_to_host
    return host.ctypes.data, lambda: host


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("make,order", [(carray, "C"), (farray, "F")], ids=["carray", "farray"])
def test_a_2d_view_reads_in_its_order(target, make, order):
    sig = types.void(types.CPointer(types.int64), types.int64, types.int64, types.int64[:, :])

    @cuda.jit(sig, target=target)
    def k(p, n, m, out):
        a = make(p, (n, m))
        i, j = cuda.grid(2)
        if i < n and j < m:
            out[i, j] = a[i, j] * 3 + 1

    src = np.arange(7, 7 + 15, dtype=np.int64) * 11
    addr, keep = _address(target, src)  # keep: the device copy stays alive
    out = np.full((3, 5), -1, np.int64)
    k[(1, 1), (4, 8)](addr, 3, 5, out)
    assert np.array_equal(keep(), src)
    assert np.array_equal(out, src.reshape((3, 5), order=order) * 3 + 1)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("make", [carray, farray], ids=["carray", "farray"])
def test_writes_through_a_view_land_in_the_pointed_memory(target, make):
    @cuda.jit(types.void(types.CPointer(types.float32), types.int64), target=target)
    def k(p, n):
        a = make(p, n, dtype=np.float32)
        i = cuda.grid(1)
        if i < n:
            a[i] = a[i] * 2.0 + 0.5

    host = np.linspace(-3.0, 4.0, 9, dtype=np.float32)
    expect = host * 2.0 + 0.5
    addr, back = _address(target, host.copy() if target == "cuda" else host)
    k[1, 16](addr, 9)
    assert np.array_equal(back(), expect)


def test_a_3d_view_has_its_shape_and_places_elements_in_its_order():
    @cuda.jit(types.void(types.CPointer(types.float64), types.float64[::1]), target="cpu")
    def k(p, out):
        c = carray(p, (2, 3, 4))
        f = farray(p, (2, 3, 4))
        out[0] = c.shape[0] * 100 + c.shape[1] * 10 + c.shape[2]
        out[1] = c.size
        out[2] = c[1, 2, 3]
        out[3] = f[1, 2, 3]
        out[4] = c[1, 0, 2]
        out[5] = f[1, 0, 2]

    host = np.arange(24.0) * 0.5 + 1.0
    out = np.full(6, np.nan)
    k[1, 1](host.ctypes.data, out)
    cv, fv = host.reshape((2, 3, 4)), host.reshape((2, 3, 4), order="F")
    expect = [234, 24, cv[1, 2, 3], fv[1, 2, 3], cv[1, 0, 2], fv[1, 0, 2]]
    assert out.tolist() == expect


def _compile(pyfunc, sig):
    cuda.jit(sig, target="cpu")(pyfunc)


def test_a_mismatching_dtype_is_a_typing_error():
    def k(p):
        a = carray(p, 4, dtype=np.int32)
        a[0] = 1

    with pytest.raises(TypingError, match="does not match pointer"):
        _compile(k, types.void(types.CPointer(types.float32)))


def test_a_non_pointer_is_a_typing_error():
    def k(x):
        a = farray(x, 4)
        a[0] = 1

    with pytest.raises(TypingError, match="needs a pointer"):
        _compile(k, types.void(types.int64))


def test_a_float_extent_is_a_typing_error():
    def k(p, n):
        a = carray(p, (n, 2))
        a[0, 0] = 1

    with pytest.raises(TypingError, match="must be an integer"):
        _compile(k, types.void(types.CPointer(types.float32), types.float64))
