"""A conformance suite of numba.cuda programs as numba's users write them (see
examples_check.py for how they run on both targets): math, cmath, complex numbers
and NumPy functions (ufuncs on arrays, Mandelbrot)."""

from __future__ import annotations

import cmath
import math
from math import pi

import numpy as np
from examples_check import (
    assert_matches,
    poisoned,
    rng,
    target_fixture,  # noqa: F401 (the target fixture)
)

from cujit import cuda

# -- 15. A NumPy ufunc called on arrays inside a kernel (numba-cuda docs, "Calling
#        ufuncs in kernels"; doc_examples/test_ufunc.py) ------------------------------


def test_ufunc_on_arrays_in_kernel(target):
    @cuda.jit
    def f(r, x):
        np.sin(x, r)  # sin(x), written to r

    x = np.arange(10, dtype=np.float32) - 5
    r = poisoned(10, np.float32)
    f[1, 1](r, x)
    assert_matches(r, np.sin(x))


# -- 18. Mandelbrot with complex numbers (numba's examples, mandel; the GTC
#        tutorial's 2-D grid-stride loops) -------------------------------------------


@cuda.jit(device=True)
def mandel(x, y, max_iters):
    c = complex(x, y)
    z = 0.0j
    for i in range(max_iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return max_iters


def test_mandelbrot(target):
    @cuda.jit
    def create_fractal_kernel(min_x, max_x, min_y, max_y, image, iters):
        height = image.shape[0]
        width = image.shape[1]
        pixel_size_x = (max_x - min_x) / width
        pixel_size_y = (max_y - min_y) / height
        startX, startY = cuda.grid(2)
        gridX = cuda.gridDim.x * cuda.blockDim.x
        gridY = cuda.gridDim.y * cuda.blockDim.y
        for x in range(startX, width, gridX):
            real = min_x + x * pixel_size_x
            for y in range(startY, height, gridY):
                imag = min_y + y * pixel_size_y
                image[y, x] = mandel(real, imag, iters)

    image = poisoned((96, 144), np.uint8)
    d_image = cuda.to_device(image)
    create_fractal_kernel[(4, 4), (8, 8)](-2.0, 1.0, -1.0, 1.0, d_image, 20)
    got = d_image.copy_to_host()
    expected = np.empty_like(image)
    for y in range(96):
        for x in range(144):
            expected[y, x] = mandel.py_func(-2.0 + x * (3.0 / 144), -1.0 + y * (2.0 / 96), 20)
    # Iteration counts at the set's edge may move by contraction into FMA on the GPU.
    assert np.count_nonzero(got != expected) <= got.size // 1000


# -- 22. math, cmath and NumPy scalar functions in a kernel (numba-cuda docs,
#        "Supported Python features in CUDA Python": math, cmath, NumPy) --------------


def test_math_functions(target):
    @cuda.jit
    def functions(x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            a = x[i]
            b = y[i]
            out[i, 0] = math.erf(a) + math.erfc(b)
            out[i, 1] = math.atan2(a, b) + math.hypot(a, b)
            out[i, 2] = math.copysign(math.fabs(a) * 7.0 % 1.5, b)
            out[i, 3] = math.pow(b + 2.0, a) + math.floor(a * 3.0) + math.ceil(b * 3.0)
            out[i, 4] = math.tanh(a) + math.sinh(b) + math.log10(b + 2.0) + math.log2(a + 2.0)
            out[i, 5] = math.degrees(a) + math.radians(b) + math.trunc(a * 5.0)
            out[i, 6] = np.exp(a) + np.arctan(b) + np.sqrt(np.abs(a))
            out[i, 7] = math.isnan(a) + math.isinf(b) + math.isfinite(a) + (a**2) + pi

    @cuda.jit
    def complexes(z, out):
        i = cuda.grid(1)
        if i < z.size:
            w = z[i]
            out[i, 0] = cmath.exp(w) + cmath.sqrt(w)
            out[i, 1] = cmath.log(w) + abs(w) + w.conjugate()
            out[i, 2] = cmath.rect(abs(w), cmath.phase(w)) * 1j

    r = rng()
    x = r.uniform(-1.5, 1.5, 500)
    y = r.uniform(-1.5, 1.5, 500)
    out = poisoned((500, 8), np.float64)
    functions.forall(500)(x, y, out)
    erf, erfc = np.vectorize(math.erf), np.vectorize(math.erfc)
    expected = np.stack(
        [
            erf(x) + erfc(y),
            np.arctan2(x, y) + np.hypot(x, y),
            np.copysign(np.fmod(np.abs(x) * 7.0, 1.5), y),
            np.power(y + 2.0, x) + np.floor(x * 3.0) + np.ceil(y * 3.0),
            np.tanh(x) + np.sinh(y) + np.log10(y + 2.0) + np.log2(x + 2.0),
            np.degrees(x) + np.radians(y) + np.trunc(x * 5.0),
            np.exp(x) + np.arctan(y) + np.sqrt(np.abs(x)),
            np.isnan(x) + np.isinf(y) + np.isfinite(x) + x**2 + pi,
        ],
        axis=1,
    )
    assert_matches(out, expected)

    z = (r.standard_normal(300) + 1j * r.standard_normal(300)).astype(np.complex128)
    cout = poisoned((300, 3), np.complex128)
    complexes.forall(300)(z, cout)
    cexpected = np.stack(
        [
            np.exp(z) + np.sqrt(z),
            np.log(z) + np.abs(z) + np.conj(z),
            np.abs(z) * np.exp(1j * np.angle(z)) * 1j,
        ],
        axis=1,
    )
    assert_matches(cout, cexpected)


def test_special_math_functions(target):

    @cuda.jit
    def special(x, out):
        i = cuda.grid(1)
        if i < x.size:
            a = x[i]
            out[i, 0] = math.gamma(a + 3.0) + math.lgamma(a + 3.0)
            out[i, 1] = math.expm1(a) * math.log1p(a + 1.0)
            out[i, 2] = math.asinh(a) + math.acosh(a + 3.0) + math.atanh(a * 0.5)
            out[i, 3] = math.fmod(a * 7.0, 1.5)

    x = rng().uniform(-1.5, 1.5, 500)
    out = poisoned((500, 4), np.float64)
    special.forall(500)(x, out)
    gamma, lgamma = np.vectorize(math.gamma), np.vectorize(math.lgamma)
    expected = np.stack(
        [
            gamma(x + 3.0) + lgamma(x + 3.0),
            np.expm1(x) * np.log1p(x + 1.0),
            np.arcsinh(x) + np.arccosh(x + 3.0) + np.arctanh(x * 0.5),
            np.fmod(x * 7.0, 1.5),
        ],
        axis=1,
    )
    assert_matches(out, expected)
