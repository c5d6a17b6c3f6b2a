"""cuda.reduce / cuda.Reduce against NumPy: lengths around the block and grid sizes,
init=, res= on the device, size=, several dtypes, and ufunc.reduce."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.ufunc import Reduce, vectorize
from cujit.ufunc.arrays import arrays_for
from cujit.ufunc.reduce import BLOCK, MAX_BLOCKS

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(1414)


def _add(a, b):
    return a + b


def _max(a, b):
    return a if a > b else b  # noqa: FURB136 (a user binop, written plainly)


@pytest.fixture(scope="module", params=TARGETS)
def target(request):
    return request.param


@pytest.fixture(scope="module")
def total(target):
    return Reduce(_add, target=target)


@pytest.mark.parametrize(
    "n",
    [
        1,
        7,
        31,
        32,
        33,
        BLOCK - 1,
        BLOCK,
        BLOCK + 1,
        5000,
        BLOCK * MAX_BLOCKS + 77,
        5 * BLOCK * MAX_BLOCKS + 3,
    ],
)
def test_sum_of_any_length(total, n):
    x = RNG.integers(1, 9, n).astype(np.float64)  # integers: the sum is exact
    assert total(x) == x.sum()


def test_init_size_and_empty(total):
    x = RNG.random(1000)
    assert abs(total(x, init=10.0) - (x.sum() + 10.0)) < 1e-9
    assert abs(total(x, size=300) - x[:300].sum()) < 1e-9
    empty = total(np.zeros(0), init=2.5)
    assert empty == 2.5


def test_res_stays_on_the_device(total, target):
    mem = arrays_for(target)
    x = RNG.integers(-50, 50, 4321).astype(np.float32)
    res = mem.to_device(np.array([np.nan, 7.0], np.float32))
    assert total(mem.to_device(x), res=res, init=3) is None
    host = mem.to_host(res)
    assert host[0] == x.sum(dtype=np.float64) + 3 and host[1] == 7.0  # only res[0] written


@pytest.mark.parametrize(
    "dtype", [np.int8, np.uint16, np.int32, np.uint32, np.int64, np.float16, np.float32]
)
def test_dtypes_wrap_as_numpy(total, dtype):
    floating = np.dtype(dtype).kind == "f"
    x = RNG.integers(0, 4 if floating else 100, 3000).astype(dtype)  # float16 stays finite
    got = total(x)
    assert np.asarray(got).dtype == np.dtype(dtype)
    if floating:  # float16 rounds each partial sum: a loose bound
        want = x.astype(np.float64).sum()
        assert abs(float(got) - want) <= 1e-2 * want
    else:  # integer sums wrap modulo 2**bits, as NumPy's in the same dtype
        assert got == x.sum(dtype=dtype)


def test_max_with_cuda_reduce_decorator(target):
    if target == "cpu":
        red = Reduce(_max, target="cpu")
    else:
        red = cuda.reduce(_max)
    x = RNG.standard_normal(10000)
    assert red(x, init=-np.inf) == x.max()


def test_ufunc_reduce(target):
    add = vectorize(["int64(int64, int64)"], target=target)(_add)
    x = np.arange(1, 2001, dtype=np.int64)
    assert add.reduce(x) == x.sum()
