"""cuda.libdevice on the CPU target: the table against numba's, every function compiled and
run, and values checked per kind of signature against NumPy, math, SciPy or exact
rational arithmetic.  The GPU variants are in test_libdevice_gpu.py."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from libdevice_harness import NP, directed, outputs, run

from cujit.cuda import libdevice
from cujit.libdevice import FUNCTIONS

RNG = np.random.default_rng(13)


def test_table_has_every_numba_function_with_its_types():
    funcs = pytest.importorskip("numba.cuda.libdevicefuncs").functions
    assert len(funcs) == len(FUNCTIONS) == 317
    for symbol, (retty, args) in funcs.items():
        ours = FUNCTIONS[symbol[5:]]
        assert ours.symbol == symbol
        assert [str(a.ty) for a in args if not a.is_ptr] == [t.name for t in ours.args]
        assert [str(a.ty) for a in args if a.is_ptr] == [t.name for t in ours.outs]
        assert (None if str(retty) == "none" else str(retty)) == (
            ours.result.name if ours.result else None
        )
        assert callable(getattr(libdevice, symbol[5:]))


def test_every_function_compiles_and_runs_on_the_cpu_target():
    for name, fn in FUNCTIONS.items():
        args = [np.arange(1, 5) for _ in fn.args]
        results = run(name, *args)
        assert len(results) == len(outputs(name)), name


def test_host_call_raises():
    with pytest.raises(RuntimeError, match="inside a @cuda.jit kernel"):
        libdevice.sin(1.0)


X64 = RNG.uniform(-3, 3, 200)
POS = RNG.uniform(0.1, 5, 200)


@pytest.mark.parametrize(
    "name,ref,x",
    [
        ("sin", np.sin, X64),
        ("cosf", np.cos, X64),
        ("expm1", np.expm1, X64),
        ("exp10", lambda x: 10.0**x, X64),
        ("log2f", np.log2, POS),
        ("cbrt", np.cbrt, X64),
        ("rsqrt", lambda x: 1 / np.sqrt(x), POS),
        ("rcbrtf", lambda x: 1 / np.cbrt(x), POS),
        ("sinpi", lambda x: np.sin(np.pi * x), X64),
        ("cospif", lambda x: np.cos(np.pi * x), X64),
        ("fast_expf", np.exp, X64),
        ("tgamma", np.vectorize(math.gamma), POS),
        ("erfc", np.vectorize(math.erfc), X64),
        ("saturatef", lambda x: np.clip(x, 0, 1), X64),
    ],
)
def test_unary_float(name, ref, x):
    (r,) = run(name, x)
    tol = 1e-5 if r.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(r, ref(x.astype(r.dtype).astype(np.float64)), rtol=tol, atol=tol)


def test_special_functions_against_scipy():
    sp = pytest.importorskip("scipy.special")
    u = RNG.uniform(-0.999, 0.999, 300)
    p = RNG.uniform(1e-12, 1 - 1e-12, 300)
    for name, ref, x, tol in [
        ("erfinv", sp.erfinv, u, 1e-13),
        ("erfcinv", sp.erfcinv, u + 1, 1e-13),
        ("normcdfinv", sp.ndtri, p, 1e-13),
        ("normcdf", sp.ndtr, X64, 1e-14),
        ("erfcx", sp.erfcx, RNG.uniform(-3, 40, 300), 1e-12),
        ("erfinvf", sp.erfinv, u, 1e-6),
        ("j0", sp.j0, X64, 1e-13),
        ("y1f", sp.y1, POS, 1e-5),
    ]:
        (r,) = run(name, x)
        np.testing.assert_allclose(r, ref(x.astype(r.dtype)), rtol=tol, atol=tol, err_msg=name)


def test_binary_and_ternary():
    a, b, c = X64, POS, RNG.uniform(-1, 1, 200)
    checks = [
        ("atan2", np.arctan2(a, b), (a, b)),
        ("hypotf", np.hypot(a, b), (a, b)),
        ("fdim", np.maximum(a - b, 0), (a, b)),
        ("fmax", np.fmax(a, b), (a, b)),
        ("nextafter", np.nextafter(a, b), (a, b)),
        ("fmod", np.fmod(a, b), (a, b)),
        ("ldexp", np.ldexp(a, 3), (a, np.full(200, 3))),
        ("powi", a**3, (a, np.full(200, 3))),
        ("fma", a * b + c, (a, b, c)),
    ]
    for name, want, args in checks:
        (r,) = run(name, *args)
        tol = 1e-5 if r.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(r, want, rtol=tol, atol=tol, err_msg=name)


def test_pointer_outputs():
    x = X64
    s, c = run("sincos", x)
    np.testing.assert_allclose(s, np.sin(x), rtol=1e-14)
    np.testing.assert_allclose(c, np.cos(x), rtol=1e-14)
    frac, exp = run("frexpf", x)
    want_frac, want_exp = np.frexp(x.astype(np.float32))
    assert np.array_equal(frac, want_frac) and np.array_equal(exp, want_exp)
    frac, whole = run("modf", x)
    assert np.array_equal((frac, whole), np.modf(x))
    rem, quo = run("remquo", x, POS)
    np.testing.assert_allclose(rem, np.vectorize(math.remainder)(x, POS), atol=1e-14)
    assert np.array_equal(quo & 7, np.rint(x / POS).astype(np.int64) & 7)
    s, c = run("sincospif", x)
    np.testing.assert_allclose(s, np.sin(np.pi * x.astype(np.float32)), atol=1e-6)
    np.testing.assert_allclose(c, np.cos(np.pi * x.astype(np.float32)), atol=1e-6)


I32 = RNG.integers(-(2**31), 2**31, 300, dtype=np.int64)
J32 = RNG.integers(-(2**31), 2**31, 300, dtype=np.int64)
I64 = RNG.integers(-(2**63), 2**63, 300, dtype=np.int64)
J64 = RNG.integers(-(2**63), 2**63, 300, dtype=np.int64)


def _i32(values):
    return np.array([(v + 2**31) % 2**32 - 2**31 for v in values], np.int64)


def test_integer_functions():
    u32, v32 = I32 % 2**32, J32 % 2**32
    u64 = [int(v) % 2**64 for v in I64]
    w64 = [int(v) % 2**64 for v in J64]
    checks = {
        "mulhi": (I32 * J32) >> 32,
        "umulhi": _i32((u32 * v32) >> 32),
        "mul64hi": [(int(a) * int(b)) >> 64 for a, b in zip(I64, J64, strict=True)],
        "umul64hi": [
            ((a * b) >> 64) - (2**64 if (a * b) >> 127 else 0)
            for a, b in zip(u64, w64, strict=True)
        ],
        "hadd": (I32 + J32) >> 1,
        "rhadd": (I32 + J32 + 1) >> 1,
        "uhadd": _i32((u32 + v32) >> 1),
        "urhadd": _i32((u32 + v32 + 1) >> 1),
        "min": np.minimum(I32, J32),
        "umax": _i32(np.maximum(u32, v32)),
        "llmin": np.minimum(I64, J64),
    }
    for name, want in checks.items():
        wide = name in ("mul64hi", "umul64hi", "llmin")
        (r,) = run(name, I64 if wide else I32, J64 if wide else J32)
        assert np.array_equal(r, np.asarray(want, np.int64)), name
    a24 = ((I32 & 0xFFFFFF) ^ 0x800000) - 0x800000  # the low 24 bits, signed
    b24 = ((J32 & 0xFFFFFF) ^ 0x800000) - 0x800000
    (r,) = run("mul24", I32, J32)
    assert np.array_equal(r, _i32(a24 * b24))
    z = RNG.integers(0, 1000, 300)
    x, y = I32 >> 2, J32 >> 2
    (r,) = run("sad", x, y, z)
    assert np.array_equal(r, _i32(np.abs(x - y) + z))


def test_bit_functions():
    u32 = I32 % 2**32
    assert np.array_equal(run("popc", I32)[0], [int(v).bit_count() for v in u32])
    assert np.array_equal(run("popcll", I64)[0], [(int(v) % 2**64).bit_count() for v in I64])
    assert np.array_equal(run("clz", I32)[0], [32 - int(v).bit_length() for v in u32])
    assert np.array_equal(run("clzll", np.array([0, 1, -1, 2**40]))[0], [64, 63, 0, 23])
    assert np.array_equal(run("ffs", np.array([0, 1, 8, -(2**31)]))[0], [0, 1, 4, 32])
    assert np.array_equal(run("brev", I32)[0], _i32([int(f"{v:032b}"[::-1], 2) for v in u32]))
    x, y = 0x33221100, 0x77665544
    sels = np.array([0x3210, 0x7654, 0x0123, 0x4444, 0x1F2E])
    want = [
        sum(((y << 32 | x) >> (8 * ((s >> (4 * n)) & 7)) & 0xFF) << (8 * n) for n in range(4))
        for s in sels
    ]
    (r,) = run("byte_perm", np.full(5, x), np.full(5, y), sels)
    assert np.array_equal(r, _i32(want))


def test_classification_and_reinterpretation():
    x = np.array([1.5, -0.0, np.inf, -np.inf, np.nan, -2.0])
    assert np.array_equal(run("isnand", x)[0] != 0, np.isnan(x))
    assert np.array_equal(run("isinff", x)[0] != 0, np.isinf(x))
    assert np.array_equal(run("isfinited", x)[0] != 0, np.isfinite(x))
    assert np.array_equal(run("signbitf", x)[0] != 0, np.signbit(x))
    assert np.array_equal(run("double_as_longlong", x)[0], x.view(np.int64))
    bits = x.view(np.int64)
    assert np.array_equal(run("longlong_as_double", bits)[0].view(np.int64), bits)
    assert np.array_equal(run("double2hiint", x)[0], (bits >> 32))
    assert np.array_equal(run("double2loint", x)[0], _i32(bits & 0xFFFFFFFF))
    back = run("hiloint2double", bits >> 32, _i32(bits & 0xFFFFFFFF))[0]
    assert np.array_equal(back.view(np.int64), bits)
    f = np.array([1.0, 0.333, -65504.0, 1e-5], np.float32)
    h = run("float2half_rn", f)[0]
    assert np.array_equal(h, f.astype(np.float16).view(np.int16))
    assert np.array_equal(run("half2float", h)[0], f.astype(np.float16).astype(np.float32))


A = RNG.uniform(-1e3, 1e3, 120) * 10.0 ** RNG.integers(-5, 5, 120)
B = RNG.uniform(0.1, 1e3, 120) * RNG.choice([-1, 1], 120)


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
def test_rounding_mode_arithmetic(mode):
    fa, fb = A.astype(np.float32), B.astype(np.float32)
    exact = {
        "dadd": lambda a, b: Fraction(a) + Fraction(b),
        "dmul": lambda a, b: Fraction(a) * Fraction(b),
        "ddiv": lambda a, b: Fraction(a) / Fraction(b),
        "fsub": lambda a, b: Fraction(float(a)) - Fraction(float(b)),
        "fdiv": lambda a, b: Fraction(float(a)) / Fraction(float(b)),
    }
    for op, q in exact.items():
        single = op[0] == "f"
        a, b = (fa, fb) if single else (A, B)
        (r,) = run(f"{op}_{mode}", a, b)
        want = [
            directed(q(x, y), mode, np.float32 if single else np.float64)
            for x, y in zip(a, b, strict=True)
        ]
        assert np.array_equal(r, np.array(want)), op
    c = np.abs(A)
    (r,) = run(f"dsqrt_{mode}", c)
    for x, s in zip(c, r, strict=True):  # s is the right neighbour of sqrt(x) for the mode
        lo, hi = Fraction(float(np.nextafter(s, -np.inf))), Fraction(float(np.nextafter(s, np.inf)))
        q = Fraction(x)
        below = Fraction(float(s)) ** 2 <= q
        if mode == "rd":
            assert below and hi**2 > q
        elif mode == "ru":
            assert Fraction(float(s)) ** 2 >= q and lo**2 < q
    (r,) = run(f"fma_{mode}", A, B, A[::-1].copy())
    want = [
        directed(Fraction(x) * Fraction(y) + Fraction(z), mode, np.float64)
        for x, y, z in zip(A, B, A[::-1], strict=True)
    ]
    assert np.array_equal(r, want)
    (r,) = run(f"fmaf_{mode}", fa, fb, fa[::-1].copy())
    want = [
        directed(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), mode, np.float32)
        for x, y, z in zip(fa, fb, fa[::-1], strict=True)
    ]
    assert np.array_equal(r, want)


@pytest.mark.parametrize("mode", ["rn", "rz", "rd", "ru"])
def test_rounding_mode_conversions(mode):
    (r,) = run(f"double2float_{mode}", A)
    assert np.array_equal(r, [directed(Fraction(x), mode, np.float32) for x in A])
    (r,) = run(f"ll2double_{mode}", I64)
    assert np.array_equal(r, [directed(Fraction(int(x)), mode, np.float64) for x in I64])
    (r,) = run(f"ull2float_{mode}", I64)
    assert np.array_equal(r, [directed(Fraction(int(x) % 2**64), mode, np.float32) for x in I64])
    (r,) = run(f"int2float_{mode}", I32)
    assert np.array_equal(r, [directed(Fraction(int(x)), mode, np.float32) for x in I32])
    rounder = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode]
    x = RNG.uniform(-1e6, 1e6, 200)
    assert np.array_equal(run(f"double2int_{mode}", x)[0], rounder(x))
    assert np.array_equal(run(f"float2ll_{mode}", x)[0], rounder(x.astype(np.float32)))
    sat = np.array([1e300, -1e300, np.nan, 3e9])
    assert np.array_equal(run(f"double2int_{mode}", sat)[0], [2**31 - 1, -(2**31), 0, 2**31 - 1])
    assert np.array_equal(
        run(f"double2uint_{mode}", np.array([-5.0, 3e9]))[0], _i32([0, int(rounder(3e9))])
    )


def test_overflow_under_directed_rounding_stays_finite():
    big = np.array([1e308])
    assert run("dadd_rz", big, big)[0][0] == np.finfo(np.float64).max
    assert run("dadd_ru", big, big)[0][0] == np.inf
    assert run("dmul_rd", -big, big)[0][0] == -np.inf
    assert run("dmul_ru", -big, big)[0][0] == -np.finfo(np.float64).max


def test_arguments_convert_to_the_table_types():
    # numba's one signature per function: an int64 argument to sin converts to float64
    (r,) = run("sin", np.arange(1, 6))
    np.testing.assert_allclose(r, np.sin(np.arange(1, 6)), rtol=1e-15)
    assert r.dtype == NP[FUNCTIONS["sin"].result.name]


def test_libdevicefuncs_in_numbas_shape():
    from cujit import cuda
    from cujit.cuda.libdevicefuncs import create_signature, functions
    from cujit.types import void

    assert len(functions) == 317
    retty, args = functions["__nv_sincos"]
    assert retty == void and [a.is_ptr for a in args] == [False, True, True]
    sig = create_signature(retty, args)
    assert isinstance(sig.return_type, cuda.types.UniTuple) and len(sig.return_type) == 2
    assert [t[::1] for t in sig.return_type] == [cuda.float64[::1]] * 2
    sig = create_signature(*functions["__nv_frexp"])
    assert isinstance(sig.return_type, cuda.types.Tuple)
    assert not isinstance(sig.return_type, cuda.types.UniTuple)
    assert sig.args == (cuda.float64,)
    assert create_signature(*functions["__nv_sad"]).return_type == cuda.int32
