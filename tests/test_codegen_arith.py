"""Stage 6 on hand-built typed IR: Python arithmetic (``//``, ``%``, ``**``, shifts, wrap-around)
checked on the host against Python, and its PTX."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from codegen_helpers import (
    elementwise,
    nvvm_text,
    run_elementwise,
    same_float,
    to_ptx,
    wrap,
)

from cujit.types import (
    Scalar,
    float32,
    float64,
    int8,
    int32,
    int64,
    uint8,
    uint32,
    uint64,
)

# == Python arithmetic: // % ** shifts, checked on the host against Python ============

INT_EDGES = [0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100]


def int_operands(t: Scalar, rng) -> tuple[np.ndarray, np.ndarray]:
    signed = t.kind == "i"
    lo, hi = (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if signed else (0, (1 << t.bits) - 1)
    edges = [v for v in INT_EDGES + [lo, hi, lo + 1, hi - 1] if lo <= v <= hi]
    pairs = [(a, b) for a in edges for b in edges]
    randoms = [rng.integers(lo, hi, 300, endpoint=True, dtype=t.dtype).tolist() for _ in "ab"]
    pairs += list(zip(*randoms, strict=True))
    a, b = zip(*pairs, strict=True)
    return np.array(a, dtype=t.dtype), np.array(b, dtype=t.dtype)


def py_floordiv(a: int, b: int, t: Scalar) -> int:
    return 0 if b == 0 else wrap(a // b, t)


def py_mod(a: int, b: int, t: Scalar) -> int:
    return 0 if b == 0 else wrap(a % b, t)


@pytest.mark.parametrize("t", [int8, int32, int64, uint8, uint32, uint64], ids=str)
@pytest.mark.parametrize("op", ["//", "%"])
def test_int_floor_division_on_host(op, t):
    a, b = int_operands(t, np.random.default_rng(2))
    fn = elementwise("idiv", t, t, lambda fb, x, y: fb.binop(op, x, y))
    got = run_elementwise(fn, a, b, t.dtype, 99)
    ref = py_floordiv if op == "//" else py_mod
    expect = [ref(int(x), int(y), t) for x, y in zip(a, b, strict=True)]
    assert got.tolist() == expect


CONSTANT_DIVISORS = [1, 2, 3, 7, 16, 32, 100, -2, -3, -16, -100, 127, -128, -1, 0]


@pytest.mark.parametrize("t", [int8, int32, int64, uint8, uint32, uint64], ids=str)
@pytest.mark.parametrize("op", ["//", "%"])
def test_int_floor_division_by_a_constant_on_host(op, t):
    """A constant divisor takes a shorter lowering (no zero or ``MIN // -1`` case to
    patch, unless the constant is one of those): the same results as Python's."""
    a, _ = int_operands(t, np.random.default_rng(3))
    ref = py_floordiv if op == "//" else py_mod
    for d in CONSTANT_DIVISORS:
        d = wrap(d, t)  # as the int type holds it (-1 as uint8 is 255)
        fn = elementwise("idivc", t, t, lambda fb, x, y, d=d: fb.binop(op, x, fb.const(t, d)))
        got = run_elementwise(fn, a, a, t.dtype, 99)
        expect = [ref(int(x), d, t) for x in a]
        assert got.tolist() == expect, (t, op, d)


def _by_constant(op: str, d: int, t: Scalar = int64) -> str:
    return nvvm_text(elementwise("idivc", t, t, lambda fb, x, y: fb.binop(op, x, fb.const(t, d))))


def test_a_constant_divisor_leaves_no_zero_or_overflow_case():
    # 2**k: shifts and a mask, no division
    assert "ashr i64" in _by_constant("//", 16) and "div i64" not in _by_constant("//", 16)
    assert "and i64" in _by_constant("%", 16) and "rem i64" not in _by_constant("%", 16)
    assert "lshr i64" in _by_constant("//", 16, uint64) and "ashr" not in _by_constant(
        "//", 16, uint64
    )
    # another divisor: one division, no check of the divisor
    for op, wanted, unwanted in (("//", "sdiv i64", "icmp eq"), ("%", "srem i64", "sdiv")):
        text = _by_constant(op, 7)
        assert wanted in text and unwanted not in text and "icmp eq" not in text
    # -1 and 0 keep the general lowering, with its cases
    assert "icmp eq" in _by_constant("//", -1) and "icmp eq" in _by_constant("//", 0)


def test_int_floor_division_llvm_ir_and_ptx():
    fn = elementwise(
        "idiv",
        int32,
        int32,
        lambda fb, x, y: fb.binop("+", fb.binop("//", x, y), fb.binop("%", x, y)),
    )
    text = nvvm_text(fn)
    assert "sdiv i32" in text and "srem i32" in text
    assert re.search(r"icmp eq i32 %\"v\d+\", 0", text)  # the zero-divisor guard
    ptx = to_ptx(fn)
    assert "div.s32" in ptx
    fn = elementwise("udiv", uint32, uint32, lambda fb, x, y: fb.binop("//", x, y))
    assert "udiv i32" in nvvm_text(fn) and "div.u32" in to_ptx(fn)


def py_float_divmod(a: float, b: float) -> tuple[float, float]:
    if b == 0.0:  # NumPy's answers where Python raises
        with np.errstate(all="ignore"):
            return float(np.float64(a) / np.float64(b)), math.nan
    return a // b, a % b


FLOAT_EDGES = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.5,
    -2.5,
    3.0,
    -3.0,
    7.25,
    -7.25,
    1e300,
    -1e300,
    5e-324,
    math.inf,
    -math.inf,
    math.nan,
    0.1,
    -0.1,
    1e-300,
]


@pytest.mark.parametrize("op", ["//", "%"])
def test_float_floor_division_on_host(op):
    rng = np.random.default_rng(3)
    pairs = [(a, b) for a in FLOAT_EDGES for b in FLOAT_EDGES]
    pairs += list(
        zip(
            (rng.standard_normal(300) * 100).tolist(),
            (rng.standard_normal(300) * 10).tolist(),
            strict=True,
        )
    )
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    fn = elementwise("fdiv", float64, float64, lambda fb, x, y: fb.binop(op, x, y))
    got = run_elementwise(fn, a, b, np.float64, 12345.0)
    k = 0 if op == "//" else 1
    bad = [
        (x, y, g, py_float_divmod(x, y)[k])
        for x, y, g in zip(a, b, got, strict=True)
        if not same_float(g, py_float_divmod(float(x), float(y))[k])
    ]
    assert not bad, bad[:5]


def test_float_floor_division_ptx():
    for t in (float32, float64):
        fn = elementwise(
            "fdiv", t, t, lambda fb, x, y: fb.binop("+", fb.binop("//", x, y), fb.binop("%", x, y))
        )
        suffix = "f" if t is float32 else ""
        text = nvvm_text(fn)
        for name in ("fmod", "floor", "copysign"):
            assert f'declare {"float" if suffix else "double"} @"__nv_{name}{suffix}"' in text
        to_ptx(fn)


def clamped_shift(op: str, a: int, n: int, t: Scalar) -> int:
    """The documented shift semantics: counts outside [0, bits) clamp, as PTX shl/shr."""
    n &= (1 << t.bits) - 1  # the count is read as unsigned
    if n >= t.bits:
        return 0 if op == "<<" or a >= 0 else -1
    return wrap(a << n, t) if op == "<<" else a >> n


@pytest.mark.parametrize("t", [int8, int32, int64, uint32, uint64], ids=str)
@pytest.mark.parametrize("op", ["<<", ">>"])
def test_shifts_on_host(op, t):
    rng = np.random.default_rng(4)
    a, _ = int_operands(t, rng)
    counts = [0, 1, 3, t.bits - 1, t.bits, t.bits + 1, 2 * t.bits, 255]
    if t.kind == "i":
        counts += [-1, -t.bits]
    n = np.array([counts[k % len(counts)] for k in range(len(a))]).astype(t.dtype)
    fn = elementwise("shift", t, t, lambda fb, x, y: fb.binop(op, x, y))
    got = run_elementwise(fn, a, n, t.dtype, 7)
    assert got.tolist() == [clamped_shift(op, int(x), int(c), t) for x, c in zip(a, n, strict=True)]


def test_shifts_ptx():
    fn = elementwise(
        "shift",
        int32,
        int32,
        lambda fb, x, y: fb.binop("^", fb.binop("<<", x, y), fb.binop(">>", x, y)),
    )
    text = nvvm_text(fn)
    assert "shl i32" in text and "ashr i32" in text and "icmp uge i32" in text
    ptx = to_ptx(fn)
    assert "shl.b32" in ptx and "shr.s32" in ptx


def py_int_pow(a: int, n: int, t: Scalar) -> int:
    if n >= 0:
        return wrap(a**n, t)
    return 1 if a == 1 else (-1 if n % 2 else 1) if a == -1 else 0


@pytest.mark.parametrize("t", [int32, int64, uint8], ids=str)
def test_int_power_on_host(t):
    bases = [0, 1, -1, 2, -2, 3, -3, 7, 10, -5, 255] if t.kind == "i" else [0, 1, 2, 3, 7, 255]
    exps = [0, 1, 2, 3, 5, 8, 13, 31, 63, 64, 100] + ([-1, -2, -3] if t.kind == "i" else [])
    pairs = [(b, e) for b in bases for e in exps if wrap(b, t) == b]
    a = np.array([p[0] for p in pairs], dtype=t.dtype)
    n = np.array([p[1] for p in pairs], dtype=t.dtype)
    fn = elementwise("ipow", t, t, lambda fb, x, y: fb.binop("**", x, y))
    got = run_elementwise(fn, a, n, t.dtype, 3)
    assert got.tolist() == [py_int_pow(int(x), int(e), t) for x, e in zip(a, n, strict=True)]
    assert "cujit.ipow" in nvvm_text(fn)
    to_ptx(fn)


def test_float_power_uses_libdevice():
    fn = elementwise("fpow", float32, float32, lambda fb, x, y: fb.binop("**", x, y))
    assert 'call float @"__nv_powf"' in nvvm_text(fn)
    to_ptx(fn)
    x = np.array([2.0, 0.5, 9.0], np.float32)
    y = np.array([10.0, -1.0, 0.5], np.float32)
    np.testing.assert_allclose(run_elementwise(fn, x, y, np.float32, np.nan), x**y, rtol=1e-6)


def test_int_arithmetic_wraps():
    fn = elementwise(
        "wrapadd",
        int8,
        int8,
        lambda fb, x, y: fb.binop("-", fb.binop("*", x, y), fb.unary("-", fb.binop("+", x, y))),
    )
    text = nvvm_text(fn)
    assert "nsw" not in text.replace("add nsw i64", "")  # only the range advance has a flag
    a = np.array([127, -128, 100, -1], np.int8)
    b = np.array([1, -1, 3, -128], np.int8)
    expect = [wrap(x * y + (x + y), int8) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    assert run_elementwise(fn, a, b, np.int8, 0).tolist() == expect
