"""Index forms numba accepts in kernels: ``r[()]`` of a 0-d array, a 0-d integer array
as an index, and stores into slices (``a[:] = 0``, ``a[1:4] = b``, ``m[i] = row``),
checked against NumPy doing the same on the host, on both targets."""

import numpy as np
import pytest

from cujit import cuda

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("target", TARGETS)
def test_zero_d_arrays_and_zero_d_indices(target):
    rec = np.dtype([("a", np.int32), ("b", np.float64)], align=True)  # a GPU needs b aligned

    @cuda.jit(target=target)
    def kernel(r, x, y, recs, i, out, j, chosen):
        r[()] = x[()] * y[()] + 2
        chosen[()] = recs[i]
        out[i, j] = recs[i]["b"] + out[j, i]

    r = np.full((), -1.0)
    x, y = np.array(3.25), np.array(-4.0)
    recs = np.zeros(3, rec)
    recs["a"], recs["b"] = [5, 6, 7], [0.5, 1.5, 2.5]
    out = np.arange(1.0, 10.0).reshape(3, 3)
    ref = out.copy()
    chosen = np.zeros((), rec)
    i, j = np.asarray(1), np.asarray(np.uint8(2))
    kernel[1, 1](r, x, y, recs, i, out, j, chosen)
    assert r[()] == 3.25 * -4.0 + 2
    assert chosen[()]["a"] == 6 and chosen[()]["b"] == 1.5
    ref[1, 2] = 1.5 + ref[2, 1]
    np.testing.assert_array_equal(out, ref)


def _stores(a, b, m, row, x):
    a[:] = 0
    a[1:4] = b
    a[::3] = x
    m[1] = row
    m[2, 1:] = 7.5
    loc = cuda.local.array((2, 3), np.float64)
    loc[:] = 3
    loc[0] = row
    m[0, 0] = loc[1, 1] + loc[0, 2]


@pytest.mark.parametrize("target", TARGETS)
def test_slice_stores_match_numpy(target):
    kernel = cuda.jit(target=target)(_stores)
    a = np.arange(1.0, 9.0)
    b = np.array([10.0, 11.0, 12.0])
    m = np.full((3, 3), -9.0)
    row = np.array([1.0, 2.0, 4.0])
    x = np.int32(-1)
    ra, rm = a.copy(), m.copy()
    ra[:] = 0
    ra[1:4] = b
    ra[::3] = x
    rm[1] = row
    rm[2, 1:] = 7.5
    rm[0, 0] = 3 + row[2]
    kernel[1, 1](a, b, m, row, x)
    np.testing.assert_array_equal(a, ra)
    np.testing.assert_array_equal(m, rm)


def test_a_slice_store_of_another_rank_is_refused():
    from cujit.diagnostics import TypingError

    @cuda.jit(target="cpu")
    def kernel(a, m):
        a[1:3] = m

    with pytest.raises(TypingError, match="cannot store a 2-d array into a 1-d slice"):
        kernel[1, 1](np.zeros(4), np.zeros((2, 2)))
