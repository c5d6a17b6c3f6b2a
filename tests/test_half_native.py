"""float16 negation, ``abs``, comparisons and int conversions: native PTX instructions
on the CUDA target (checked in the PTX, through libNVVM and nvJitLink, no GPU), and
the same values on the CPU target (against NumPy, or against round-to-nearest for
float16 -> int, which is what numba's float16 casts do)."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from cujit import cuda
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import typeof


def _sig(*arrays):
    return tuple(typeof(a) for a in arrays)


def _neg_abs(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = -x[i]
        out[1, i] = abs(x[i])


def _compare_int8(out, x, y):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = x[i] > y[i]
        out[1, i] = x[i] >= y[i]
        out[2, i] = x[i] < y[i]
        out[3, i] = x[i] <= y[i]
        out[4, i] = x[i] == y[i]
        out[5, i] = x[i] != y[i]


def _to_ints(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = np.int8(x[i])
        out[1, i] = np.uint8(x[i])
        out[2, i] = np.int16(x[i])
        out[3, i] = np.int32(x[i])
        out[4, i] = np.int64(x[i])
        out[5, i] = np.uint64(x[i])


def _from_ints(out, a, b):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = np.float16(a[i])
        out[1, i] = np.float16(b[i])


H = np.zeros(4, np.float16)
H2 = np.zeros((2, 4), np.float16)


def _ptx(fn, sig) -> str:
    return compile_kernel(fn, sig, Options()).ptx  # through the cubin: ptxas accepts it


def test_negation_and_abs_are_neg_abs_f16():
    ptx = _ptx(_neg_abs, _sig(H2, H))
    assert "neg.f16" in ptx and "abs.f16" in ptx
    assert "cvt.f32.f16" not in ptx  # not computed in float32


def test_comparisons_with_int8_are_setp_f16():
    ptx = _ptx(_compare_int8, _sig(np.zeros((6, 4), np.bool_), H, np.zeros(4, np.int8)))
    for op in ("gt", "ge", "lt", "le", "eq", "neu"):
        assert f"setp.{op}.f16" in ptx, op
    assert "cvt.rn.f16.s8" in ptx


def test_int_conversions_are_cvt_f16():
    ptx = _ptx(_to_ints, _sig(np.zeros((6, 4), np.int64), H))
    for instr in ("s8", "u8", "s16", "s32", "s64", "u64"):
        assert f"cvt.rni.{instr}.f16" in ptx, instr
    ptx = _ptx(_from_ints, _sig(H2, np.zeros(4, np.int8), np.zeros(4, np.uint32)))
    assert "cvt.rn.f16.s8" in ptx and "cvt.rn.f16.u32" in ptx


X = np.array([1.5, -2.25, 0.0, -0.0, np.inf, np.nan, 65504.0, -3.0], np.float16)
Y = np.array([1.0, -2.25, -1.0, 0.0, -np.inf, np.nan, 3.0, 5.0], np.float16)


def test_cpu_negation_and_abs_match_numpy():
    out = np.full((2, X.size), 7.0, np.float16)
    cuda.jit(target="cpu")(_neg_abs)[1, X.size](out, X)
    np.testing.assert_array_equal(out[0], -X)
    np.testing.assert_array_equal(np.signbit(out[0]), np.signbit(-X))
    np.testing.assert_array_equal(out[1], np.abs(X))


def test_cpu_comparisons_match_numpy():
    y = np.array([1, -2, -1, 0, -128, 3, 127, 5], np.int8)
    out = np.zeros((6, X.size), np.bool_)
    cuda.jit(target="cpu")(_compare_int8)[1, X.size](out, X, y)
    ops = (operator.gt, operator.ge, operator.lt, operator.le, operator.eq, operator.ne)
    for row, op in zip(out, ops, strict=True):
        np.testing.assert_array_equal(row, op(X, y.astype(np.float16)), str(op))


def test_cpu_float16_to_int_rounds_to_nearest_even():
    x = np.array([12.3, 12.7, -12.7, 2.5, 3.5, -0.5, 100.0, 0.0], np.float16)
    out = np.full((6, x.size), -99, np.int64)
    cuda.jit(target="cpu")(_to_ints)[1, x.size](out, x)
    nearest = np.rint(x.astype(np.float64))  # ties to even, as cvt.rni
    np.testing.assert_array_equal(out[0], nearest.astype(np.int8))
    np.testing.assert_array_equal(out[3], nearest.astype(np.int32))
    np.testing.assert_array_equal(out[4], nearest.astype(np.int64))
    pos = nearest >= 0
    np.testing.assert_array_equal(out[1][pos], nearest[pos].astype(np.uint8))


def test_cpu_int_to_float16_matches_numpy():
    a = np.array([-128, -1, 0, 1, 7, 100, 127, -77], np.int8)
    b = np.array([0, 1, 2049, 65504, 4097, 3, 1000, 12345], np.uint32)
    out = np.full((2, a.size), 9.0, np.float16)
    cuda.jit(target="cpu")(_from_ints)[1, a.size](out, a, b)
    np.testing.assert_array_equal(out[0], a.astype(np.float16))
    np.testing.assert_array_equal(out[1], b.astype(np.float16))


@pytest.mark.gpu
def test_gpu_float16_ops_match_cpu_target():
    out_gpu = np.full((2, X.size), 7.0, np.float16)
    cuda.jit(_neg_abs)[1, X.size](out_gpu, X)
    np.testing.assert_array_equal(out_gpu[0], -X)
    np.testing.assert_array_equal(out_gpu[1], np.abs(X))
    x = np.array([12.3, 12.7, -12.7, 2.5, 3.5, -0.5, 100.0, 0.0], np.float16)
    ints = np.full((6, x.size), -99, np.int64)
    cuda.jit(_to_ints)[1, x.size](ints, x)
    np.testing.assert_array_equal(ints[4], np.rint(x.astype(np.float64)).astype(np.int64))


def _hfma(r, a, b, c):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = cuda.fp16.hfma(a[i], b[i], c[i])


def _rounding(r, x):
    i = cuda.grid(1)
    if i < x.size:
        r[0, i] = cuda.fp16.htrunc(x[i])
        r[1, i] = cuda.fp16.hrint(x[i])


def _exps(r, x):
    i = cuda.grid(1)
    if i < x.size:
        r[0, i] = cuda.fp16.hexp2(x[i])
        r[1, i] = cuda.fp16.hexp10(x[i])


def test_hfma_is_fma_rn_f16():
    ptx = _ptx(_hfma, _sig(H, H, H, H))
    assert "fma.rn.f16" in ptx and "cvt.f32.f16" not in ptx


def test_cpu_hfma_rounds_once():
    a = np.array([1.5, -2.0, 0.1, 3.0, 1000.0], np.float16)
    b = np.array([3.25, 0.5, 0.3, -3.0, 64.0], np.float16)
    c = np.array([-0.125, 7.0, 0.01, 9.0, 1.0], np.float16)
    r = np.full(a.size, 5.0, np.float16)
    cuda.jit(target="cpu")(_hfma)[1, a.size](r, a, b, c)
    # a * b is exact in float64 and so is its sum with a half here: one rounding to half.
    want = (a.astype(np.float64) * b + c).astype(np.float16)
    np.testing.assert_array_equal(r, want)


def test_cpu_htrunc_hrint_match_numpy():
    x = np.array([1.5, 2.5, -2.5, -0.7, 12.3, 65504.0, -3.5, 0.49], np.float16)
    r = np.full((2, x.size), 9.0, np.float16)
    cuda.jit(target="cpu")(_rounding)[1, x.size](r, x)
    np.testing.assert_array_equal(r[0], np.trunc(x))
    np.testing.assert_array_equal(r[1], np.rint(x))


def test_cpu_hexp2_hexp10_match_numpy():
    x = np.array([0.5, 1.0, 2.25, -1.5, 3.0, 0.1, 4.0, -0.3], np.float16)
    r = np.full((2, x.size), 9.0, np.float16)
    cuda.jit(target="cpu")(_exps)[1, x.size](r, x)
    np.testing.assert_allclose(r[0], np.exp2(x.astype(np.float64)), rtol=1e-3)
    np.testing.assert_allclose(r[1], 10.0 ** x.astype(np.float64), rtol=1e-3)
