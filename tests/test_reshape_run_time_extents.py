"""``a.reshape(shape)`` where the extents are launch arguments: one of them may be -1,
resolved at run time to what the others leave (numba's rule), on both targets."""

import numpy as np
import pytest

from cujit import cuda

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def _copy2d(arr, shape, got):
    y = arr.reshape(shape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


def _copy1d(arr, n, got):
    y = arr.reshape(n)
    for i in range(y.shape[0]):
        got[i] = y[i]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(-1, 5), (4, -1), (10, 2), (2, 10)])
def test_two_extents_from_a_tuple_argument(target, shape):
    arr = np.arange(1, 21, dtype=np.int64).reshape(5, 4)
    want = arr.reshape(shape)
    got = np.full(want.shape, -7, np.int64)
    cuda.jit(target=target)(_copy2d)[1, 1](arr, shape, got)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [-1, 12])
def test_one_extent_from_a_scalar_argument(target, n):
    arr = np.arange(1.0, 13.0).reshape(3, 4)
    got = np.full(12, -7.0)
    cuda.jit(target=target)(_copy1d)[1, 1](arr, n, got)
    np.testing.assert_array_equal(got, arr.ravel())


def test_the_cuda_compilation_types():
    from cujit.types import typeof

    args = (np.zeros((5, 4), np.int64), (-1, 5), np.zeros((4, 5), np.int64))
    cuda.jit(_copy2d).compile(tuple(typeof(a) for a in args))
