"""math.exp2, frexp, ldexp, modf, nextafter, remainder and complex ``**`` in kernels,
against Python's math module and complex power."""

import math

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError

X = np.array([3.7, -0.15, 1e-3, 12.0, -7.25, 0.5])


def math_kernel(out, e, a):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = math.exp2(a[i])
        f, n = math.frexp(a[i])
        out[1, i] = f
        e[i] = n
        out[2, i] = math.ldexp(a[i], 3)
        fr, ip = math.modf(a[i])
        out[3, i] = fr
        out[4, i] = ip
        out[5, i] = math.nextafter(a[i], 100.0)
        out[6, i] = math.remainder(a[i], 2.0)


def math_reference(a):
    xs = [float(x) for x in a]
    return (
        [
            [2.0**x for x in xs],
            [math.frexp(x)[0] for x in xs],
            [math.ldexp(x, 3) for x in xs],
            [math.modf(x)[0] for x in xs],
            [math.modf(x)[1] for x in xs],
            [math.nextafter(x, 100.0) for x in xs],
            [math.remainder(x, 2.0) for x in xs],
        ],
        [math.frexp(x)[1] for x in xs],
    )


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-15), (np.float32, 1e-6)])
def test_math_functions(dtype, rtol):
    a = X.astype(dtype)
    out = np.full((7, a.size), np.nan, dtype)
    e = np.full(a.size, -99, np.int32)
    cuda.jit(math_kernel, target="cpu")[1, a.size](out, e, a)
    ref, exps = math_reference(a)
    np.testing.assert_allclose(
        out[[0, 1, 2, 3, 4, 6]], np.array(ref, dtype)[[0, 1, 2, 3, 4, 6]], rtol=rtol, atol=rtol
    )
    # nextafter(float32, 100.0) computes in float64 (the common type), as numba does
    np.testing.assert_array_equal(out[5], np.nextafter(a.astype(np.float64), 100.0).astype(dtype))
    np.testing.assert_array_equal(e, exps)


def test_complex_power():
    @cuda.jit(target="cpu")
    def k(out, z, w, n):
        i = cuda.grid(1)
        if i < z.size:
            out[0, i] = z[i] ** w[i]
            out[1, i] = pow(z[i], n[i])
            out[2, i] = z[i] ** 0.5
            r = z[i]
            r **= w[i]
            out[3, i] = r

    z = np.array([1.5 + 0.5j, -2.0 + 1.0j, 0.25 - 3.0j, 0j, 4.0 + 0j])
    w = np.array([0.3 - 1.2j, 2.0 + 0j, -1.5 + 0.5j, 2.0 + 0j, 0j])
    n = np.array([3, -2, 0, 5, 7], dtype=np.int64)
    out = np.full((4, z.size), np.nan, np.complex128)
    k[1, z.size](out, z, w, n)
    ref = [
        [complex(a) ** complex(b) for a, b in zip(z, w, strict=True)],
        [complex(a) ** int(m) for a, m in zip(z, n, strict=True)],
        [complex(a) ** 0.5 for a in z],
        [complex(a) ** complex(b) for a, b in zip(z, w, strict=True)],
    ]
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-15)


def test_complex64_power_stays_complex64():
    @cuda.jit(target="cpu")
    def k(out, z, w):
        i = cuda.grid(1)
        if i < z.size:
            out[i] = z[i] ** w[i]

    z = np.array([1.5 + 0.5j, -2.0 + 1.0j], np.complex64)
    w = np.array([0.3 - 1.2j, 3.0 + 0j], np.complex64)
    out = np.full(2, np.nan, np.complex64)
    k[1, 2](out, z, w)
    ref = [complex(a) ** complex(b) for a, b in zip(z, w, strict=True)]
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def test_math_of_complex_names_the_line():
    @cuda.jit(target="cpu")
    def k(out, z):
        out[0] = math.exp2(z[0])

    with pytest.raises(TypingError) as info:
        k[1, 1](np.zeros(1), np.ones(1, np.complex128))
    assert "math.exp2() of a complex number" in str(info.value)
    assert "test_math_extra.py" in str(info.value)


@pytest.mark.gpu
def test_math_functions_gpu():
    a = X.copy()
    out = np.full((7, a.size), np.nan)
    e = np.full(a.size, -99, np.int32)
    cuda.jit(math_kernel)[1, a.size](out, e, a)
    ref, exps = math_reference(a)
    np.testing.assert_allclose(out, ref, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(e, exps)
