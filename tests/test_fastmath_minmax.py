"""numba's ``fastmath=True`` and float ``min``/``max`` in the code cujit generates.

The PTX checks compile through libNVVM only (no GPU); the value checks run on the
CPU target against NumPy.
"""

from __future__ import annotations

import math
import operator
import re

import numpy as np
import pytest

from cujit import cuda, float32, float64

F32_ARRAY = float32[::1]


def _unary(op):
    def kernel(r, x):
        r[0] = op(x)

    return kernel


def _binary(op):
    def kernel(r, x, y):
        r[0] = op(x, y)

    return kernel


def _ptx(pyfunc, sig, **options) -> str:
    return cuda.jit(sig, target="cuda", **options)(pyfunc).inspect_asm(sig)


# (function, instructions only the fast version has)
FAST_UNARY = {
    "cos": (math.cos, ["cos.approx.ftz.f32 "]),
    "sin": (math.sin, ["sin.approx.ftz.f32 "]),
    "tan": (math.tan, ["sin.approx.ftz.f32 ", "cos.approx.ftz.f32 ", "div.approx.ftz.f32 "]),
    "tanh": (math.tanh, ["tanh.approx.f32 "]),
    # log2(x) times ln(2) and log10(2): the conversion constants show the fast path.
    "log": (math.log, ["lg2.approx.ftz.f32 ", "0f3F317218"]),
    "log10": (math.log10, ["lg2.approx.ftz.f32 ", "0f3E9A209B"]),
    "log2": (math.log2, ["lg2.approx.ftz.f32 "]),
}


@pytest.mark.parametrize("name", list(FAST_UNARY))
def test_fastmath_float32_functions_use_approximate_instructions(name):
    fn, fast_only = FAST_UNARY[name]
    sig = (F32_ARRAY, float32)
    fast = _ptx(_unary(fn), sig, fastmath=True)
    precise = _ptx(_unary(fn), sig)
    for instr in fast_only:
        assert instr in fast, (name, instr)
    assert fast_only[0] not in precise


def test_fastmath_exp_drops_the_precise_polynomial():
    sig = (F32_ARRAY, float32)
    assert "fma.rn.f32 " not in _ptx(_unary(math.exp), sig, fastmath=True)
    assert "fma.rn.f32 " in _ptx(_unary(math.exp), sig)


def test_fastmath_exp2_flushes_denormals():
    sig = (F32_ARRAY, float32)
    assert "ex2.approx.ftz.f32 " in _ptx(_unary(math.exp2), sig, fastmath=True)
    precise = _ptx(_unary(math.exp2), sig)
    assert "ex2.approx.f32 " in precise and "ex2.approx.ftz.f32 " not in precise


def test_fastmath_division_and_pow():
    sig = (F32_ARRAY, float32, float32)
    fast = _ptx(_binary(operator.truediv), sig, fastmath=True)
    precise = _ptx(_binary(operator.truediv), sig)
    assert "div.approx.ftz.f32 " in fast and "div.rn.f32" not in fast
    assert "div.rn.f32" in precise and "div.approx" not in precise
    assert "lg2.approx.ftz.f32 " in _ptx(_binary(math.pow), sig, fastmath=True)
    assert "lg2.approx.ftz.f32 " not in _ptx(_binary(math.pow), sig)


def test_fastmath_keeps_float64_precise():
    sig = (float64[::1], float64, float64)
    fast = _ptx(_binary(operator.truediv), sig, fastmath=True)
    assert "div.rn.f64" in fast and "approx" not in fast


def test_fastmath_tanh_before_sm75_is_libdevice():
    # libNVVM 13 compiles for sm_75 and later only: check the NVVM IR for sm_70.
    from cujit.options import Options
    from cujit.pipeline import compile_kernel

    sig = (F32_ARRAY, float32)
    for arch, hardware in (((7, 0), False), ((7, 5), True)):
        options = Options(arch=arch, fastmath=True)
        llvm = compile_kernel(_unary(math.tanh), sig, options, stop_after="llvm").outputs["llvm"]
        assert ("tanh.approx.f32" in str(llvm)) is hardware
        assert ("__nv_tanhf" in str(llvm)) is not hardware


def _divide(r, x, y):
    r[0] = x / y


@pytest.mark.parametrize("target", ["cpu"])
def test_debug_division_by_zero_raises_unless_fastmath(target):
    sig = (F32_ARRAY, float32, float32)
    precise = cuda.jit(sig, debug=True, opt=False, target=target)(_divide)
    fast = cuda.jit(sig, debug=True, opt=False, fastmath=True, target=target)(_divide)
    out = np.full(4, -3.0, np.float32)
    with pytest.raises(ZeroDivisionError, match="float division by zero"):
        precise[1, 4](out, np.float32(10.0), np.float32(0.0))
    fast[1, 4](out, np.float32(10.0), np.float32(0.0))
    assert out[0] == np.inf
    precise[1, 4](out, np.float32(3.0), np.float32(-4.0))
    assert out[0] == np.float32(-0.75)


def _floor_ops(r, x, y):
    r[0] = x // y
    r[1] = x % y


def test_debug_float_floor_division_by_zero_raises():
    sig = (float64[::1], float64, float64)
    k = cuda.jit(sig, debug=True, opt=False, target="cpu")(_floor_ops)
    out = np.full(2, -3.0)
    with pytest.raises(ZeroDivisionError, match="float floor division by zero"):
        k[1, 1](out, 1.0, 0.0)
    k[1, 1](out, -7.5, 2.0)
    assert list(out) == [-7.5 // 2.0, -7.5 % 2.0]
    release = cuda.jit(sig, target="cpu")(_floor_ops)
    release[1, 1](out, 1.0, 0.0)  # NumPy's results, no exception
    assert out[0] == np.inf and np.isnan(out[1])


def _builtin_max(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = max(a[i], b[i])


def _builtin_min(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = min(a[i], b[i])


@pytest.mark.parametrize("which", ["min", "max"])
@pytest.mark.parametrize("left, right", [("f4", "f4"), ("f4", "f8"), ("f8", "f4"), ("f8", "f8")])
def test_float_min_max_are_ptx_min_max(which, left, right):
    from cujit.types import typeof

    wide = "f8" in (left, right)
    arrays = [np.zeros(2, left), np.zeros(2, right), np.zeros(2, "f8" if wide else "f4")]
    sig = tuple(typeof(a) for a in arrays)
    fn = _builtin_min if which == "min" else _builtin_max
    ptx = _ptx(fn, sig)
    assert f"{which}.f{64 if wide else 32} " in ptx
    assert not re.search(r"setp\.\w+\.f(32|64)", ptx)  # no compare-and-select


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_min_max_ignore_nan_like_fmin_fmax(dtype):
    a = np.array([1.0, np.nan, 3.0, np.nan, -0.5, np.inf, -2.0], dtype)
    b = np.array([np.nan, 2.0, 1.0, np.nan, 0.25, 5.0, -np.inf], dtype)
    for fn, ref in ((_builtin_max, np.fmax), (_builtin_min, np.fmin)):
        out = np.full(a.size, 99.0, dtype)
        cuda.jit(target="cpu")(fn)[1, a.size](a, b, out)
        np.testing.assert_array_equal(out, ref(a, b))


def test_int_min_max_keep_python_rule():
    a = np.array([5, -3, 7, 2**40], np.int64)
    b = np.array([2, -3, 9, -(2**40)], np.int64)
    out = np.full(4, 11, np.int64)
    cuda.jit(target="cpu")(_builtin_max)[1, 4](a, b, out)
    assert list(out) == [max(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)]


# Two zeros of either sign, in both orders: PTX's min/max.f32/f64 take -0.0 as the
# smaller ("-0.0 < +0.0"), so min gives -0.0 and max +0.0 whichever comes first.
ZERO_PAIRS = ([0.0, -0.0, 0.0, -0.0], [-0.0, 0.0, 0.0, -0.0])
ZERO_MIN = [-0.0, -0.0, 0.0, -0.0]
ZERO_MAX = [0.0, 0.0, 0.0, -0.0]


def _zero_results(target: str, dtype):
    a, b = (np.array(v, dtype) for v in ZERO_PAIRS)
    got = {}
    for name, fn in (("min", _builtin_min), ("max", _builtin_max)):
        out = np.full(a.size, 99.0, dtype)
        cuda.jit(target=target)(fn)[1, a.size](a, b, out)
        got[name] = out
    return got


def _same_bits(got, want):
    return [(float(g), bool(np.signbit(g))) for g in got] == [
        (float(w), bool(np.signbit(w))) for w in np.array(want, got.dtype)
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_min_max_order_zeros_as_ptx_on_the_cpu_target(dtype):
    got = _zero_results("cpu", dtype)
    assert _same_bits(got["min"], ZERO_MIN), got["min"]
    assert _same_bits(got["max"], ZERO_MAX), got["max"]


def test_the_gpu_takes_minnum_alone_and_the_cpu_target_fixes_the_tie():
    from cujit.options import Options
    from cujit.pipeline import compile_kernel

    sig = (F32_ARRAY, F32_ARRAY, F32_ARRAY)
    gpu = compile_kernel(_builtin_min, sig, Options(arch=(9, 0)), stop_after="llvm")
    cpu = compile_kernel(_builtin_min, sig, Options(target="cpu"), stop_after="llvm")
    gpu_ir, cpu_ir = gpu.outputs["llvm"], cpu.outputs["llvm"]
    assert '@"llvm.minnum.f32"' in gpu_ir and "fcmp" not in gpu_ir  # PTX's min orders zeros
    assert '@"llvm.minnum.f32"' in cpu_ir and "fcmp oeq" in cpu_ir and " or i32 " in cpu_ir


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_min_max_order_zeros_alike_on_the_gpu_and_the_cpu_target(dtype):
    gpu, cpu = _zero_results("cuda", dtype), _zero_results("cpu", dtype)
    for name, want in (("min", ZERO_MIN), ("max", ZERO_MAX)):
        assert _same_bits(gpu[name], want), (name, gpu[name])
        assert _same_bits(cpu[name], want), (name, cpu[name])
