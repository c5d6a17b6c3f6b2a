"""``for`` loops over arrays, tuples, ``enumerate`` and ``zip``, against plain Python."""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import CompileError


@cuda.jit(target="cpu")
def loops(out, x, y):
    s = 0.0
    for v in x:
        s += v
    out[0] = s
    s = 0.0
    for i, v in enumerate(x):
        s += i * v
    out[1] = s
    s = 0.0
    for a, b in zip(x, y):  # stops at the shorter
        s += a * b
    out[2] = s
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        s += i * a - b
    out[3] = s
    s = 0.0
    for (i, a), b in zip(enumerate(x, 2), y):
        s += i * a + b
    out[4] = s


def test_loops_over_arrays():
    x = np.array([1.5, -2.0, 4.0, 0.25, 3.0])
    y = np.array([10.0, 11.0, -12.0, 13.0])
    out = np.full(5, np.nan)
    loops[1, 1](out, x, y)
    xs, ys = list(x), list(y)
    ref = [
        sum(xs),
        sum(i * v for i, v in enumerate(xs)),
        sum(a * b for a, b in zip(xs, ys)),
        sum(i * a - b for i, (a, b) in enumerate(zip(xs, ys))),
        sum(i * a + b for (i, a), b in zip(enumerate(xs, 2), ys)),
    ]
    np.testing.assert_allclose(out, ref, rtol=1e-12)


def test_loops_over_tuples():
    @cuda.jit(target="cpu")
    def k(out, x):
        t = (1, 2.5, x[0])
        s = 0.0
        for v in t:
            s += v
        out[0] = s
        s = 0.0
        for i, v in enumerate(t):
            s += i * v
        out[1] = s
        s = 0.0
        for a, b in zip(t, (4, 5, 6, 7)):
            s += a * b
        out[2] = s

    out = np.full(3, np.nan)
    k[1, 1](out, np.array([3.0]))
    t = (1, 2.5, 3.0)
    np.testing.assert_allclose(
        out,
        [sum(t), sum(i * v for i, v in enumerate(t)), sum(a * b for a, b in zip(t, (4, 5, 6, 7)))],
    )


def test_integer_array_and_break():
    @cuda.jit(target="cpu")
    def k(out, x):
        n = 0
        for _i, v in enumerate(x):
            if v < 0:
                break
            n += v
        out[0] = n

    x = np.array([3, 4, 5, -1, 100], dtype=np.int32)
    out = np.full(1, -99, np.int64)
    k[1, 1](out, x)
    assert out[0] == 12


def test_loop_over_matrix_rows():
    @cuda.jit(target="cpu")
    def k(out, m):
        for i, row in enumerate(m):
            s = 0.0
            for v in row[1:]:
                s += v
            out[i] = s

    m = np.arange(12.0).reshape(3, 4) ** 2
    out = np.full(3, np.nan)
    k[1, 1](out, m)
    np.testing.assert_allclose(out, m[:, 1:].sum(axis=1))


def test_loop_over_a_number_is_refused_at_the_line():
    @cuda.jit(target="cpu")
    def k(out, x):
        for v in zip(x[0], x):
            out[0] = v[0]

    with pytest.raises(CompileError) as info:
        k[1, 1](np.zeros(1), np.ones(2))
    assert "cannot iterate over a value of type float64" in str(info.value)
    assert "test_iteration.py" in str(info.value)


@pytest.mark.gpu
def test_loops_gpu():
    x = np.array([1.5, -2.0, 4.0, 0.25, 3.0])
    y = np.array([10.0, 11.0, -12.0, 13.0])
    out = np.full(5, np.nan)
    cuda.jit(loops.py_func)[1, 1](out, x, y)
    xs, ys = list(x), list(y)
    ref = [
        sum(xs),
        sum(i * v for i, v in enumerate(xs)),
        sum(a * b for a, b in zip(xs, ys)),
        sum(i * a - b for i, (a, b) in enumerate(zip(xs, ys))),
        sum(i * a + b for (i, a), b in zip(enumerate(xs, 2), ys)),
    ]
    np.testing.assert_allclose(out, ref, rtol=1e-12)
