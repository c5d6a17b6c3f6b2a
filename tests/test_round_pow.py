"""``round`` (half to even; ``round(x, n)``) and ``pow`` in kernels.

``round(x)`` is checked against Python's; ``round(x, n)`` against NumPy's ``np.round``,
whose scale-then-round-half-even is numba's algorithm (2.675 * 100 is exactly 267.5,
so numba gives 2.68 where Python's correctly rounded decimal gives 2.67).
"""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError

VALUES = np.array(
    [0.5, 1.5, 2.5, -0.5, -1.5, 2.675, 0.25, 1.05, 3.14159, -2.449, 1234.5678, -0.0049]
)


def test_round_half_to_even_and_ndigits():
    @cuda.jit(target="cpu")
    def k(o1, o2, o3, a):
        i = cuda.grid(1)
        if i < a.size:
            o1[i] = round(a[i])
            o2[i] = round(a[i], 2)
            o3[i] = round(a[i], -1)

    n = VALUES.size
    o1 = np.full(n, -99, np.int64)
    o2 = np.full(n, np.nan)
    o3 = np.full(n, np.nan)
    k[1, n](o1, o2, o3, VALUES)
    np.testing.assert_array_equal(o1, [round(float(x)) for x in VALUES])
    np.testing.assert_array_equal(o2, np.round(VALUES, 2))
    np.testing.assert_array_equal(o3, np.round(VALUES, -1))


def test_round_float32_and_int():
    @cuda.jit(target="cpu")
    def k(o1, o2, a, b):
        i = cuda.grid(1)
        if i < a.size:
            o1[i] = round(a[i], 1)
            o2[i] = round(b[i])

    a = VALUES.astype(np.float32)
    b = np.arange(-6, 6, dtype=np.int32)
    o1 = np.full(a.size, np.nan, np.float32)
    o2 = np.full(a.size, -99, np.int64)
    k[1, a.size](o1, o2, a, b)
    np.testing.assert_allclose(o1, np.round(a.astype(np.float64), 1), rtol=1e-6)
    np.testing.assert_array_equal(o2, b)


def test_pow():
    @cuda.jit(target="cpu")
    def k(o1, o2, a, e):
        i = cuda.grid(1)
        if i < a.size:
            o1[i] = pow(a[i], 3)
            o2[i] = pow(e[i], 2)

    a = np.linspace(-2.0, 3.0, 8)
    e = np.arange(-3, 5, dtype=np.int64)
    o1 = np.full(8, np.nan)
    o2 = np.full(8, -99, np.int64)
    k[1, 8](o1, o2, a, e)
    np.testing.assert_allclose(o1, a**3, rtol=1e-12)
    np.testing.assert_array_equal(o2, e**2)


def test_round_of_complex_names_the_line():
    @cuda.jit(target="cpu")
    def k(out, z):
        out[0] = round(z[0])

    with pytest.raises(TypingError) as info:
        k[1, 1](np.zeros(1), np.ones(1, np.complex128))
    assert "round() of a complex" in str(info.value)
    assert "test_round_pow.py" in str(info.value)


@pytest.mark.gpu
def test_round_pow_gpu():
    @cuda.jit
    def k(o1, o2, o3, a):
        i = cuda.grid(1)
        if i < a.size:
            o1[i] = round(a[i])
            o2[i] = round(a[i], 2)
            o3[i] = pow(a[i], 2)

    n = VALUES.size
    o1 = np.full(n, -99, np.int64)
    o2 = np.full(n, np.nan)
    o3 = np.full(n, np.nan)
    k[1, n](o1, o2, o3, VALUES)
    np.testing.assert_array_equal(o1, [round(float(x)) for x in VALUES])
    np.testing.assert_array_equal(o2, np.round(VALUES, 2))
    np.testing.assert_allclose(o3, VALUES**2, rtol=1e-12)
