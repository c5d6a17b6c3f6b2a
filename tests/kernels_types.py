"""Kernels on complex, float16 and NumPy scalar math, in the Case format of
``kernels.py``: each case is a kernel, inputs, a launch shape and a NumPy reference.
``test_types_kernels.py`` runs them on the CPU target (and the GPU, marked ``gpu``) and
compiles them to sm_90 cubins.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
from kernels import Case

from cujit import cuda

TYPE_CASES: list[Case] = []


def case(setup, reference, rtol=1e-6):
    def register(kernel):
        TYPE_CASES.append(Case(kernel.__name__, kernel, setup, reference, rtol))
        return kernel

    return register


def poison(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.full(shape, np.nan, dtype)
    return np.full(shape, -77, dtype)


# -- complex --------------------------------------------------------------------------

MANDEL_ITERS = 40


def _mandel_setup(rng):
    h, w = 96, 128
    re = np.linspace(-2.2, 0.8, w)
    im = np.linspace(-1.2, 1.2, h)
    c = (re[None, :] + 1j * im[:, None]).astype(np.complex128)
    return (
        [c, poison((h, w), np.float64), MANDEL_ITERS],
        ((w + 15) // 16, (h + 15) // 16),
        (16, 16),
        0,
    )


def _mandel_ref(args):
    c, _, iters = args
    z = np.zeros_like(c)
    count = np.full(c.shape, iters, np.float64)
    for k in range(iters):
        live = count == iters
        z[live] = z[live] * z[live] + c[live]
        count[live & (np.abs(z) > 2.0)] = k
    return {1: count}


# Points right on the set's boundary may take one step more or less (the GPU contracts
# a * b + c into an fma); the counts must agree almost everywhere.
@case(_mandel_setup, _mandel_ref, rtol=5e-2)
@cuda.jit
def mandelbrot(c, out, iters):
    x, y = cuda.grid(2)
    if y < c.shape[0] and x < c.shape[1]:
        z = 0j
        cc = c[y, x]
        n = iters
        for k in range(iters):
            z = z * z + cc
            if abs(z) > 2.0:
                n = k
                break
        out[y, x] = n


def _carith_setup(rng):
    n = 1000
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    b[::7] = a[::7]  # some equal pairs for ==
    return (
        [
            a,
            b,
            np.float32(0.5),
            1.5 - 2j,
            poison(n, np.complex64),
            poison(n, np.complex128),
            poison((n, 4), np.float32),
            poison((n, 2), np.int32),
        ],
        (n + 127) // 128,
        128,
        0,
    )


def _carith_ref(args):
    a, b, s, w, *_ = args
    a64, b64 = a.astype(np.complex128), b.astype(np.complex128)
    out1 = a64 * b64 + a64 / b64 - np.conj(a64) * s + (-a64)
    out2 = a64 * w - 3 + 2.5 * b64
    parts = np.stack([a.real, a.imag, np.abs(a64), np.abs(b64)], axis=1)
    flags = np.stack([a == b, a != b], axis=1).astype(np.int32)
    return {4: out1, 5: out2, 6: parts, 7: flags}


@case(_carith_setup, _carith_ref, rtol=1e-5)
@cuda.jit
def complex_arithmetic(a, b, s, w, out1, out2, parts, flags):
    i = cuda.grid(1)
    if i < a.size:
        x, y = a[i], b[i]
        out1[i] = x * y + x / y - x.conjugate() * s + (-x)  # stays complex64
        out2[i] = x * w - 3 + 2.5 * y  # complex64 * complex128 -> complex128
        parts[i, 0] = x.real
        parts[i, 1] = x.imag
        parts[i, 2] = abs(x)
        parts[i, 3] = abs(y)
        flags[i, 0] = x == y
        flags[i, 1] = x != y


def _cmath_setup(rng):
    n = 500
    z = rng.standard_normal(n) * 2 + 1j * rng.standard_normal(n) * 2
    z[0] = -4.0  # sqrt/log on the negative real axis
    z[1] = 0.0
    z[2] = 1j * -3
    return [z, poison((n, 8), np.complex128), poison((n, 5), np.float64)], (n + 63) // 64, 64, 0


def _cmath_ref(args):
    z = args[0]
    with np.errstate(all="ignore"):
        out = np.stack(
            [
                np.sqrt(z),
                np.exp(z),
                np.log(z),
                np.log10(z),
                np.sin(z),
                np.cos(z),
                np.array([cmath.rect(abs(v), cmath.phase(v)) for v in z]),
                np.array([complex(math.hypot(v.real, v.imag), 2.0) for v in z]),
            ],
            axis=1,
        )
    reals = np.stack(
        [
            np.angle(z),
            np.abs(z),
            np.angle(z),
            np.isnan(z).astype(float),
            np.isfinite(z).astype(float),
        ],
        axis=1,
    )
    return {1: out, 2: reals}


@case(_cmath_setup, _cmath_ref, rtol=1e-12)
@cuda.jit
def cmath_functions(z, out, reals):
    i = cuda.grid(1)
    if i < z.size:
        v = z[i]
        out[i, 0] = cmath.sqrt(v)
        out[i, 1] = cmath.exp(v)
        out[i, 2] = cmath.log(v) if abs(v) > 0 else complex(-math.inf, 0.0)
        out[i, 3] = cmath.log10(v) if abs(v) > 0 else complex(-math.inf, 0.0)
        out[i, 4] = cmath.sin(v)
        out[i, 5] = cmath.cos(v)
        r, phi = cmath.polar(v)
        out[i, 6] = cmath.rect(r, phi)
        out[i, 7] = complex(abs(v), 2)
        reals[i, 0] = cmath.phase(v)
        reals[i, 1] = r
        reals[i, 2] = phi
        reals[i, 3] = cmath.isnan(v)
        reals[i, 4] = cmath.isfinite(v)


# -- float16 --------------------------------------------------------------------------


def _haxpy_setup(rng):
    n = 4096
    x = rng.uniform(-4, 4, n).astype(np.float16)
    y = rng.uniform(-4, 4, n).astype(np.float16)
    return [np.float16(1.75), x, y, poison(n, np.float16)], (n + 255) // 256, 256, 0


# NumPy rounds a * x to half, then the sum; the GPU may fuse them into one fma.f16:
# the results agree to a couple of half ulps (2**-10 relative).
@case(_haxpy_setup, lambda a: {3: (a[0] * a[1] + a[2]).astype(np.float16)}, rtol=2e-3)
@cuda.jit
def fp16_axpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def _hfuncs_setup(rng):
    n = 1024
    x = rng.uniform(0.25, 4, n).astype(np.float16)
    y = rng.uniform(-4, 4, n).astype(np.float16)
    y[::5] = x[::5]  # some equal pairs for heq
    return [x, y, poison((n, 10), np.float16), poison((n, 3), np.int32)], (n + 127) // 128, 128, 0


def _hfuncs_ref(args):
    x, y = (v.astype(np.float32) for v in args[:2])
    h = np.float16
    out = np.stack(
        [
            x + y,
            x - y,
            x * y,
            x / y,
            -x,
            np.abs(y),
            x * y + x,
            np.maximum(x, y),
            np.sqrt(x),
            np.exp(x * 0.5),
        ],
        axis=1,
    ).astype(h)
    flags = np.stack([x < y, x == y, x >= y], axis=1).astype(np.int32)
    return {2: out, 3: flags}


@case(_hfuncs_setup, _hfuncs_ref, rtol=2e-3)
@cuda.jit
def fp16_functions(x, y, out, flags):
    i = cuda.grid(1)
    if i < x.size:
        a, b = x[i], y[i]
        out[i, 0] = cuda.fp16.hadd(a, b)
        out[i, 1] = cuda.fp16.hsub(a, b)
        out[i, 2] = cuda.fp16.hmul(a, b)
        out[i, 3] = cuda.fp16.hdiv(a, b)
        out[i, 4] = cuda.fp16.hneg(a)
        out[i, 5] = cuda.fp16.habs(b)
        out[i, 6] = cuda.fp16.hfma(a, b, a)
        out[i, 7] = cuda.fp16.hmax(a, b)
        out[i, 8] = cuda.fp16.hsqrt(a)
        out[i, 9] = cuda.fp16.hexp(a * np.float16(0.5))
        flags[i, 0] = cuda.fp16.hlt(a, b)
        flags[i, 1] = cuda.fp16.heq(a, b)
        flags[i, 2] = cuda.fp16.hge(a, b)


def _hmix_setup(rng):
    n = 512
    x = rng.uniform(-2, 2, n).astype(np.float16)
    return [x, poison((n, 3), np.float32), poison(n, np.float16)], (n + 127) // 128, 128, 0


def _hmix_ref(args):
    x = args[0]
    out = np.stack(
        [
            x.astype(np.float32) * np.float32(3.0),
            np.sin(x.astype(np.float32)),
            np.floor(x.astype(np.float32)),
        ],
        axis=1,
    )
    return {1: out, 2: (x * np.float16(2) - np.float16(1)).astype(np.float16)}


@case(_hmix_setup, _hmix_ref, rtol=2e-3)
@cuda.jit
def fp16_conversions(x, out, halves):
    i = cuda.grid(1)
    if i < x.size:
        h = x[i]
        out[i, 0] = h * np.float32(3.0)  # float16 * float32 -> float32
        out[i, 1] = math.sin(h)  # half math computes in float32, rounds to half
        out[i, 2] = math.floor(h)
        halves[i] = h * np.float16(2) - np.float16(1)


# -- NumPy scalar math ----------------------------------------------------------------


def _npmath_setup(rng):
    n = 1000
    x = rng.uniform(-3, 3, n)
    y = rng.uniform(-3, 3, n)
    x[0] = np.nan
    return [x, y, poison((n, 15), np.float64), poison((n, 2), np.float32)], (n + 127) // 128, 128, 0


def _npmath_ref(args):
    x, y = args[:2]
    ax = np.abs(x)
    out = np.stack(
        [
            np.sin(x),
            np.cos(x),
            np.exp(x),
            np.log(ax),
            np.sqrt(ax),
            np.abs(y),
            np.floor(x),
            np.ceil(y),
            np.tanh(x),
            np.arctan2(x, y),
            np.hypot(x, y),
            np.minimum(x, y),
            np.maximum(x, y),
            np.isnan(x).astype(float),
            np.absolute(y) + np.fabs(x),
        ],
        axis=1,
    )
    xf = x.astype(np.float32)
    out32 = np.stack([np.sin(xf), np.floor(xf)], axis=1)
    return {2: out, 3: out32}


@case(_npmath_setup, _npmath_ref, rtol=1e-6)
@cuda.jit
def numpy_scalar_math(x, y, out, out32):
    i = cuda.grid(1)
    if i < x.size:
        a, b = x[i], y[i]
        out[i, 0] = np.sin(a)
        out[i, 1] = np.cos(a)
        out[i, 2] = np.exp(a)
        out[i, 3] = np.log(np.abs(a))
        out[i, 4] = np.sqrt(np.abs(a))
        out[i, 5] = np.abs(b)
        out[i, 6] = np.floor(a)
        out[i, 7] = np.ceil(b)
        out[i, 8] = np.tanh(a)
        out[i, 9] = np.arctan2(a, b)
        out[i, 10] = np.hypot(a, b)
        out[i, 11] = np.minimum(a, b)
        out[i, 12] = np.maximum(a, b)
        out[i, 13] = np.isnan(a)
        out[i, 14] = np.absolute(b) + np.fabs(a)
        f = np.float32(a)
        out32[i, 0] = np.sin(f)
        out32[i, 1] = np.floor(f)
