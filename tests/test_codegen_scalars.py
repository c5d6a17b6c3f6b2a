"""Stage 6 on hand-built typed IR: min, max, abs, compares, casts (NumPy's astype), bools
and unary ops, run on the host against Python and NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from codegen_helpers import (
    FunctionBuilder,
    arr,
    elementwise,
    host_compile,
    nvvm_text,
    run_elementwise,
    same_float,
    to_ptx,
)

from cujit.types import (
    Scalar,
    boolean,
    float32,
    float64,
    int8,
    int32,
    int64,
    uint8,
    uint32,
    uint64,
)

# == min, max, abs, compares, casts, bools ============================================


def test_min_max_of_floats_are_fmin_fmax_on_host():
    # numba's float min/max: a nan loses to a number; of 0.0 and -0.0 either comes back.
    vals = [1.0, -1.0, 0.0, -0.0, math.nan, math.inf, -math.inf, 2.5]
    a = np.array([x for x in vals for _ in vals])
    b = np.array([y for _ in vals for y in vals])
    for name, ref in (("min", np.fmin), ("max", np.fmax)):
        fn = elementwise(
            name, float64, float64, lambda fb, x, y, name=name: fb.intrinsic(name, (x, y), float64)
        )
        got = run_elementwise(fn, a, b, np.float64, 42.0)
        bad = [
            (x, y)
            for x, y, g in zip(a, b, got, strict=True)
            if not (same_float(g, ref(x, y)) or (x == y == 0 and g == 0))
        ]
        assert not bad, (name, bad)
    fn = elementwise("imin", int32, int32, lambda fb, x, y: fb.intrinsic("min", (x, y), int32))
    a32 = np.array([-5, 3, 2**31 - 1, -(2**31)], np.int32)
    b32 = np.array([2, -7, 0, 5], np.int32)
    assert run_elementwise(fn, a32, b32, np.int32, 0).tolist() == [-5, -7, 0, -(2**31)]
    assert "icmp slt i32" in nvvm_text(fn)


def test_abs_on_host():
    fn = elementwise("iabs", int8, int8, lambda fb, x, y: fb.intrinsic("abs", (x,), int8))
    a = np.array([-5, 5, 0, -128, 127], np.int8)
    assert run_elementwise(fn, a, a, np.int8, 1).tolist() == [5, 5, 0, -128, 127]
    fn = elementwise("fabs", float32, float32, lambda fb, x, y: fb.intrinsic("abs", (x,), float32))
    assert 'call float @"__nv_fabsf"' in nvvm_text(fn)
    to_ptx(fn)


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_compares_on_host(op):
    ops = {
        "<": lambda x, y: x < y,
        "<=": lambda x, y: x <= y,
        ">": lambda x, y: x > y,
        ">=": lambda x, y: x >= y,
        "==": lambda x, y: x == y,
        "!=": lambda x, y: x != y,
    }
    vals = [1.0, -1.0, 0.0, -0.0, math.nan, math.inf]
    a = np.array([x for x in vals for _ in vals])
    b = np.array([y for _ in vals for y in vals])
    fn = elementwise("fcmp", float64, boolean, lambda fb, x, y: fb.compare(op, x, y))
    got = run_elementwise(fn, a, b, np.bool_, True)
    assert got.tolist() == [ops[op](x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    fn = elementwise("ucmp", uint32, boolean, lambda fb, x, y: fb.compare(op, x, y))
    ua = np.array([0, 1, 2**32 - 1, 7], np.uint32)
    ub = np.array([2**32 - 1, 1, 0, 7], np.uint32)
    got = run_elementwise(fn, ua, ub, np.bool_, True)
    assert got.tolist() == [ops[op](x, y) for x, y in zip(ua.tolist(), ub.tolist(), strict=True)]


CASTS = [
    (float64, int32, [2.9, -2.9, 0.5, -0.0, 1e9]),
    (float32, uint8, [2.9, 255.0, 0.0, 17.5]),
    (float64, boolean, [0.0, -0.0, 1.5, math.nan, math.inf]),
    (int32, boolean, [0, 1, -1, 7]),
    (boolean, int64, [True, False]),
    (boolean, float32, [True, False]),
    (int8, int64, [-1, 127, -128]),
    (uint8, int64, [255, 0, 128]),
    (int64, int8, [257, -129, 128]),
    (uint64, float64, [2**64 - 1, 0, 2**63]),
    (int64, float32, [-(2**40) - 1, 3]),
    (float64, float32, [1.1, 1e300, -0.0]),
    (float32, float64, [1.1, -2.5]),
]


@pytest.mark.parametrize(
    "src,dst,values", CASTS, ids=lambda v: str(v) if isinstance(v, Scalar) else ""
)
def test_casts_follow_numpy_astype_on_host(src, dst, values):
    a = np.array(values, dtype=src.dtype)
    fn = elementwise("cast", src, dst, lambda fb, x, y: fb.cast(dst, x))
    with np.errstate(all="ignore"):
        expect = a.astype(dst.dtype)
    got = run_elementwise(fn, a, a, dst.dtype, 0)
    np.testing.assert_array_equal(got, expect)
    to_ptx(fn)


def test_bool_params_arrays_and_logic():
    """bool params travel as i8, bool elements are bytes, bool & | ^ and not stay i1."""
    fb = FunctionBuilder("bools", flag=boolean, a=arr(boolean), out=arr(boolean))
    flag, a, out = fb.args
    for k, op in enumerate(("&", "|", "^")):
        i = fb.const(int64, k)
        fb.setitem(out, i, fb.binop(op, flag, fb.getitem(a, i)))
    fb.setitem(out, fb.const(int64, 3), fb.unary("not", flag))
    fb.ret()
    fn = fb.finish()
    text = nvvm_text(fn)
    assert 'define void @"bools"(i8 %"flag", i8* %"a.data"' in text
    assert "zext i1" in text and "load i8, i8*" in text
    to_ptx(fn)
    run = host_compile(fn)
    for f in (False, True):
        a = np.array([True, False, True], np.bool_)
        out = np.zeros(4, np.uint8).view(np.bool_)
        run(f, a, out)
        assert out.view(np.uint8).tolist() == [f & a[0], f | a[1], f ^ a[2], not f]


def test_unary_ops_on_host():
    fn = elementwise("neg", float64, float64, lambda fb, x, y: fb.unary("-", x))
    a = np.array([0.0, -0.0, 1.5, math.inf])
    got = run_elementwise(fn, a, a, np.float64, 9.0)
    assert [math.copysign(1, g) for g in got] == [-1, 1, -1, -1]
    assert "fsub double -0.0" in nvvm_text(fn) or "fsub double 0x8000000000000000" in nvvm_text(fn)
    fn = elementwise("inv", int32, int32, lambda fb, x, y: fb.unary("~", x))
    ia = np.array([0, -1, 5], np.int32)
    assert run_elementwise(fn, ia, ia, np.int32, 9).tolist() == [-1, 0, -6]
