"""Array slicing in kernels: ``a[1:-1]``, ``a[::k]``, ``m[i, :]``, ``m[i]`` are views.

Each view is checked against NumPy's view of the same array (its sum, its extents,
and a store through it landing in the original array).
"""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import CompileError


@cuda.jit(device=True)
def total(v):
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i]
    return s


def views(out, a, m):
    out[0] = total(a[1:-1])
    out[1] = total(a[::2])
    out[2] = total(a[::-3])
    out[3] = total(m[1, :])
    out[4] = total(m[:, 2])
    r = m[1:3, 1::2]
    out[5] = r[1, 1] + r.shape[0] * 10 + r.shape[1] * 100
    out[6] = total(a[5:2:-1])
    out[7] = total(a[-3:])
    out[8] = m[-1][0]
    out[9] = a[7:3].shape[0] + a[100:].shape[0]  # empty views
    out[10] = total(m[::-1, -1])


def reference(a, m):
    r = m[1:3, 1::2]
    return [
        a[1:-1].sum(),
        a[::2].sum(),
        a[::-3].sum(),
        m[1, :].sum(),
        m[:, 2].sum(),
        r[1, 1] + r.shape[0] * 10 + r.shape[1] * 100,
        a[5:2:-1].sum(),
        a[-3:].sum(),
        m[-1][0],
        a[7:3].shape[0] + a[100:].shape[0],
        m[::-1, -1].sum(),
    ]


def test_views_read_like_numpy():
    a = np.linspace(0.5, 9.75, 11) ** 2
    m = np.arange(1.0, 21.0).reshape(4, 5) * 1.5
    out = np.full(11, np.nan)
    cuda.jit(views, target="cpu")[1, 1](out, a, m)
    np.testing.assert_allclose(out, reference(a, m), rtol=1e-12)


def test_stores_through_views():
    @cuda.jit(target="cpu")
    def k(a, m, lo, hi):
        v = a[lo:hi]
        for i in range(v.shape[0]):
            v[i] = -v[i]
        row = m[lo]
        for j in range(0, row.shape[0], 2):
            row[j] = 7.0

    a = np.arange(1.0, 11.0)
    m = np.arange(1.0, 13.0).reshape(3, 4)
    ea, em = a.copy(), m.copy()
    ea[2:-3] = -ea[2:-3]
    em[2][0::2] = 7.0
    k[1, 1](a, m, 2, -3)
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(m, em)


def test_real_imag_and_transpose_views():
    @cuda.jit(target="cpu")
    def k(v, m, out):
        i = cuda.grid(1)
        if i < v.size:
            cuda.atomic.add(v.real, i, 1.0)  # numba's issue 8309: atomics on the parts
            v.imag[i] = v.imag[i] * 2.0
        if i == 0:
            mt = m.T
            out[0] = mt[2, 1]
            out[1] = mt.shape[0] * 10 + mt.shape[1]
            out[2] = total(m.T[1])  # a column of m

    v = np.arange(8) + np.arange(1, 9) * 1j
    m = np.arange(12.0).reshape(3, 4) ** 2
    out = np.full(3, np.nan)
    expect = v + 1 + 1j * v.imag
    k[1, 8](v, m, out)
    np.testing.assert_array_equal(v, expect)
    np.testing.assert_array_equal(out, [m.T[2, 1], 43, m[:, 1].sum()])


def test_non_constant_step_is_refused_at_the_line():
    @cuda.jit(target="cpu")
    def k(out, a, step):
        out[0] = a[::step][0]

    with pytest.raises(CompileError) as info:
        k[1, 1](np.zeros(1), np.ones(4), 2)
    assert "step must be a constant" in str(info.value)
    assert "test_slicing.py" in str(info.value)


@pytest.mark.gpu
def test_views_gpu():
    a = np.linspace(0.5, 9.75, 11) ** 2
    m = np.arange(1.0, 21.0).reshape(4, 5) * 1.5
    out = np.full(11, np.nan)
    cuda.jit(views)[1, 1](out, a, m)
    np.testing.assert_allclose(out, reference(a, m), rtol=1e-12)
