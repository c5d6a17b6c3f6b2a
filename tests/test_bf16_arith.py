"""bfloat16 arithmetic, comparisons and math (``cuda.bf16``, operators, ``math.*``)
against NumPy: each result is the float32 result rounded to bfloat16 (nearest-even),
which for ``+ - * /`` and ``sqrt`` is the correctly rounded bfloat16 one."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import bf16

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def jit(fn, target):
    return cuda.jit(target="cpu")(fn) if target == "cpu" else cuda.jit(fn)


def rne(x) -> np.ndarray:
    """float32 ``x`` rounded to the nearest bfloat16, as float32 (NaN stays NaN)."""
    x = np.asarray(x, np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), r)


def operands(n=600, seed=5):
    rng = np.random.default_rng(seed)
    a = rne(rng.uniform(-50, 50, n).astype(np.float32) * rng.choice([1e-3, 1, 1e3], n))
    b = rne(rng.uniform(-50, 50, n).astype(np.float32))
    return a, np.where(b == 0, np.float32(1.5), b)


def arith(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        x = cuda.bfloat16(a[i])
        y = cuda.bfloat16(b[i])
        out[i, 0] = cuda.float32(x + y)
        out[i, 1] = cuda.float32(x - y)
        out[i, 2] = cuda.float32(x * y)
        out[i, 3] = cuda.float32(x / y)
        out[i, 4] = cuda.float32(bf16.hadd_rn(x, y))
        out[i, 5] = cuda.float32(bf16.hmul_rn(x, y))
        out[i, 6] = cuda.float32(bf16.hfma(x, y, x))
        out[i, 7] = cuda.float32(-x)
        out[i, 8] = cuda.float32(bf16.habs(x))
        out[i, 9] = cuda.float32(bf16.hsqrt(bf16.habs(x)))
        out[i, 10] = cuda.float32(math.sqrt(bf16.habs(y)))


def launch(kernel, cols, *args):
    n = args[0].shape[0]
    out = np.full((n, cols), np.nan, np.float32)
    kernel[(n + 127) // 128, 128](out, *args)
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_operators_round_once(target):
    a, b = operands()
    out = launch(jit(arith, target), 11, a, b)
    want = [a + b, a - b, a * b, a / b, a + b, a * b]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(out[:, k], rne(w), err_msg=f"column {k}")
    fma = (a.astype(np.float64) * b + a).astype(np.float32)  # a*b exact; one rounding
    np.testing.assert_array_equal(out[:, 6], rne(fma))
    np.testing.assert_array_equal(out[:, 7], -a)
    np.testing.assert_array_equal(out[:, 8], np.abs(a))
    np.testing.assert_array_equal(out[:, 9], rne(np.sqrt(np.abs(a))))
    np.testing.assert_array_equal(out[:, 10], rne(np.sqrt(np.abs(b))))


def special(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        x = cuda.bfloat16(a[i])
        y = cuda.bfloat16(b[i])
        out[i, 0] = cuda.float32(bf16.hadd_sat(x, y))
        out[i, 1] = cuda.float32(bf16.hmul_sat(x, y))
        out[i, 2] = cuda.float32(bf16.hfma_sat(x, y, x))
        out[i, 3] = cuda.float32(bf16.hfma_relu(x, y, x))
        out[i, 4] = cuda.float32(bf16.hmax(x, y))
        out[i, 5] = cuda.float32(bf16.hmin(x, y))
        out[i, 6] = cuda.float32(bf16.hmax_nan(x, y))
        out[i, 7] = cuda.float32(bf16.hmin_nan(x, y))
        out[i, 8] = bf16.hisnan(x)
        out[i, 9] = bf16.hisinf(x)


@pytest.mark.parametrize("target", TARGETS)
def test_saturation_relu_and_nan_handling(target):
    a = np.array([0.75, 1.5, -0.5, np.nan, 2.0, np.inf, -np.inf, 0.25], np.float32)
    b = np.array([0.5, 0.75, 0.25, 2.0, np.nan, 1.0, 3.0, -8.0], np.float32)
    out = launch(jit(special, target), 10, a, b)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out[:, 0], np.clip(np.nan_to_num(rne(a + b)), 0, 1))
        np.testing.assert_array_equal(out[:, 1], np.clip(np.nan_to_num(rne(a * b)), 0, 1))
        fma = rne(a * b + a)
        np.testing.assert_array_equal(out[:, 2], np.clip(np.nan_to_num(fma), 0, 1))
        np.testing.assert_array_equal(out[:, 3], np.where(fma < 0, 0, fma))
    np.testing.assert_array_equal(out[:, 4], np.fmax(a, b))
    np.testing.assert_array_equal(out[:, 5], np.fmin(a, b))
    np.testing.assert_array_equal(out[:, 6], np.maximum(a, b))
    np.testing.assert_array_equal(out[:, 7], np.minimum(a, b))
    np.testing.assert_array_equal(out[:, 8], np.isnan(a))
    np.testing.assert_array_equal(out[:, 9], np.where(np.isinf(a), np.sign(a), 0))


def compare(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        x = cuda.bfloat16(a[i])
        y = cuda.bfloat16(b[i])
        out[i, 0] = bf16.heq(x, y)
        out[i, 1] = bf16.hne(x, y)
        out[i, 2] = bf16.hlt(x, y)
        out[i, 3] = bf16.hge(x, y)
        out[i, 4] = bf16.hequ(x, y)
        out[i, 5] = bf16.hneu(x, y)
        out[i, 6] = bf16.hltu(x, y)
        out[i, 7] = bf16.hgeu(x, y)
        out[i, 8] = x != y
        out[i, 9] = x <= y


@pytest.mark.parametrize("target", TARGETS)
def test_ordered_and_unordered_comparisons(target):
    a = np.array([1.0, 2.0, 3.0, np.nan, 1.0, np.nan, 1.001], np.float32)
    b = np.array([1.0, 1.0, 4.0, 1.0, np.nan, np.nan, 1.0], np.float32)
    out = launch(jit(compare, target), 10, a, b)
    x, y = rne(a), rne(b)  # 1.001 rounds to 1.0
    nan = np.isnan(x) | np.isnan(y)
    with np.errstate(invalid="ignore"):
        want = [x == y, (x < y) | (x > y), x < y, x >= y]
    want += [w | nan for w in (x == y, ~nan & (x != y), x < y, x >= y)]
    want += [x != y, x <= y]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(out[:, k], w, err_msg=f"column {k}")


def maths(out, a):
    i = cuda.grid(1)
    if i < a.size:
        x = cuda.bfloat16(a[i])
        out[i, 0] = cuda.float32(bf16.htrunc(x))
        out[i, 1] = cuda.float32(bf16.hfloor(x))
        out[i, 2] = cuda.float32(math.ceil(x))
        out[i, 3] = cuda.float32(bf16.hrint(x))
        out[i, 4] = cuda.float32(bf16.hrcp(x))
        out[i, 5] = cuda.float32(bf16.hexp(x))
        out[i, 6] = cuda.float32(bf16.hlog2(bf16.habs(x)))
        out[i, 7] = cuda.float32(math.sin(x))
        out[i, 8] = cuda.float32(bf16.htanh(x))
        out[i, 9] = cuda.float32(bf16.hexp10(x))


@pytest.mark.parametrize("target", TARGETS)
def test_math_functions_compute_in_float32(target):
    a = rne(np.array([3.14, -2.5, 0.5, 1.5, -0.3, 2.0, 7.9], np.float32))
    out = launch(jit(maths, target), 10, a)
    np.testing.assert_array_equal(out[:, 0], np.trunc(a))
    np.testing.assert_array_equal(out[:, 1], np.floor(a))
    np.testing.assert_array_equal(out[:, 2], np.ceil(a))
    np.testing.assert_array_equal(out[:, 3], np.rint(a))
    np.testing.assert_array_equal(out[:, 4], rne(np.float32(1) / a))
    # transcendental functions: within one bfloat16 ulp of the exact value
    for k, f in ((5, np.exp), (6, lambda v: np.log2(np.abs(v))), (7, np.sin), (8, np.tanh)):
        exact = f(a.astype(np.float64))
        np.testing.assert_allclose(out[:, k], exact, rtol=2**-7, atol=1e-30, err_msg=str(k))
    np.testing.assert_allclose(out[:, 9], 10.0 ** a.astype(np.float64), rtol=2**-7)


def bits_roundtrip(out, bits):
    i = cuda.grid(1)
    if i < bits.size:
        out[i, 0] = bf16.bfloat16_as_int16(bf16.int16_as_bfloat16(bits[i]))
        out[i, 1] = bf16.bfloat16_as_int16(-bf16.int16_as_bfloat16(bits[i]))


@pytest.mark.parametrize("target", TARGETS)
def test_reinterpretation_keeps_every_bit(target):
    bits = np.array([0x3FC0, 0x7F81, -0x0040, 0x0001, 0x7F80, 0], np.int16)  # NaN too
    out = np.zeros((bits.size, 2), np.int16)
    jit(bits_roundtrip, target)[1, 32](out, bits)
    np.testing.assert_array_equal(out[:, 0], bits)
    np.testing.assert_array_equal(out[:, 1], bits ^ np.int16(-0x8000))  # the sign flipped


def test_sm90_uses_native_instructions_and_sm80_does_not():
    from cujit.types import float32

    def add(out, a, b):
        out[0] = float32(cuda.bfloat16(a[0]) + cuda.bfloat16(b[0]))
        out[1] = float32(cuda.bfloat16(a[0]) * cuda.bfloat16(b[0]))
        out[2] = float32(bf16.hadd_rn(cuda.bfloat16(a[0]), cuda.bfloat16(b[0])))

    sig = (float32[:], float32[:], float32[:])
    ptx90, _ = cuda.compile_ptx(add, sig, cc=(9, 0))
    ptx80, _ = cuda.compile_ptx(add, sig, cc=(8, 0))
    assert "add.bf16" in ptx90 and "mul.bf16" in ptx90
    assert ".bf16" not in ptx80


def test_promotion_rules():
    from cujit.infer.numeric import arith_type, unify
    from cujit.types import bfloat16, float16, float32, float64, int8, int16, int64

    assert arith_type("+", bfloat16, bfloat16)[2] == bfloat16
    assert arith_type("*", bfloat16, int8)[2] == bfloat16
    assert arith_type("*", int16, bfloat16)[2] == float32
    assert arith_type("+", bfloat16, int64)[2] == float64
    assert arith_type("+", bfloat16, float32)[2] == float32
    assert arith_type("-", float16, bfloat16)[2] == float32
    assert arith_type("//", bfloat16, bfloat16)[2] == float32
    assert unify(bfloat16, float16) == float32


@pytest.mark.parametrize("kernel", [special, compare])
def test_kernels_compile_to_ptx_through_libnvvm(kernel):
    # Compile-only (no GPU needed): bfloat16 compares and min/max must not take float16's
    # native-instruction path (a float -> i16 bitcast libNVVM refuses).
    from cujit.types import typeof

    out, x = np.zeros((8, 10), np.float32), np.ones(8, np.float32)
    ptx, _ = cuda.compile_ptx(kernel, (typeof(out), typeof(x), typeof(x)))
    assert ".entry" in ptx and "setp.eq.f16" not in ptx
