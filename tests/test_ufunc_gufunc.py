"""cuda.guvectorize against NumPy: matmul layouts, scalar () parameters, loop-dimension
broadcasting, out arguments and device operands."""

from __future__ import annotations

import numpy as np
import pytest

from cujit.ufunc import guvectorize
from cujit.ufunc.arrays import arrays_for
from cujit.ufunc.gufunc import parse_layout

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(66)


def _matmul(a, b, c):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = 0.0
            for k in range(a.shape[1]):
                s += a[i, k] * b[k, j]
            c[i, j] = s


def _scaled_sum(x, s, o):
    t = 0.0
    for i in range(x.shape[0]):
        t += x[i]
    o[0] = t * s


@pytest.fixture(scope="module", params=TARGETS)
def target(request):
    return request.param


@pytest.fixture(scope="module")
def matmul(target):
    return guvectorize(
        [
            "void(float32[:,:], float32[:,:], float32[:,:])",
            "void(float64[:,:], float64[:,:], float64[:,:])",
        ],
        "(m,n),(n,p)->(m,p)",
        target=target,
    )(_matmul)


def _close(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    assert np.linalg.norm(got - want) <= 1e-5 * np.linalg.norm(want)


def test_parse_layout():
    assert parse_layout("(m,n),(n,p)->(m,p)") == ([("m", "n"), ("n", "p")], [("m", "p")])
    assert parse_layout("(n),()->()") == ([("n",), ()], [()])
    with pytest.raises(ValueError):
        parse_layout("(m,n)(n)")


def test_batched_matmul(matmul):
    a = RNG.random((9, 3, 4)).astype(np.float32)
    b = RNG.random((9, 4, 2)).astype(np.float32)
    got = matmul(a, b)
    assert got.dtype == np.float32
    _close(got, a @ b)


def test_loop_dimensions_broadcast(matmul):
    a = RNG.random((2, 1, 3, 3))
    b = RNG.random((5, 3, 3))
    got = matmul(a, b)
    assert got.dtype == np.float64
    _close(got, np.matmul(a, b))
    single = matmul(a[0, 0], b[0])  # no loop dimensions: one core block
    _close(single, a[0, 0] @ b[0])


def test_out_argument_and_device_operands(matmul, target):
    mem = arrays_for(target)
    a = RNG.random((6, 4, 4)).astype(np.float32)
    b = RNG.random((6, 4, 4)).astype(np.float32)
    out = np.full((6, 4, 4), np.nan, np.float32)
    assert matmul(a, b, out) is out
    _close(out, a @ b)
    dout = mem.to_device(np.full((6, 4, 4), np.nan, np.float32))
    res = matmul(mem.to_device(a), mem.to_device(b), out=dout)
    assert res is dout
    _close(mem.to_host(dout), a @ b)


def test_scalar_parameter_and_scalar_output(target):
    f = guvectorize(["void(float64[:], float64, float64[:])"], "(n),()->()", target=target)(
        _scaled_sum
    )
    x = RNG.random((7, 11))
    got = f(x, 3.0)
    _close(got, x.sum(axis=1) * 3.0)
    s = RNG.random(7) + 1
    _close(f(x, s), x.sum(axis=1) * s)  # the () operand broadcasts over the loop


def test_same_kind_inputs_and_an_output_without_its_unit_loop_axis(target):
    f = guvectorize(["void(int32[:], int32[:], int32[:])"], "(n),()->(n)", target=target)(
        _add_first
    )
    x = np.array([1, 2, 3, 4], np.int32)
    res = np.zeros(4, np.int32)  # the loop shape is (1,) (from y); numba allows (4,)
    f(x, np.array([5], np.int32), out=res)
    assert np.array_equal(res, x + 5)
    got = f(x.astype(np.int64), np.array([7], np.int64))  # int64 -> int32: same kind
    assert got.dtype == np.int32 and np.array_equal(got.reshape(4), x + 7)


def _add_first(x, y, res):
    for i in range(x.shape[0]):
        res[i] = x[i] + y[0]


def test_host_out_of_another_dtype_receives_the_cast_result(matmul):
    a = RNG.random((3, 2, 2)).astype(np.float32)
    out = np.full((3, 2, 2), np.nan)  # float64 out for the float32 loop
    assert matmul(a, a, out=out) is out
    _close(out, a.astype(np.float64) @ a.astype(np.float64))
