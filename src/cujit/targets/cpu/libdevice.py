"""The CPU target's libdevice: each ``cuda.libdevice`` function on the host.

Most are the C library's function of the same name and prototype (``C_LIBRARY``:
libm and libc are loaded in every CPython process, so the JIT resolves them);
``fast_*`` are the precise functions; the rest are formulas (``formulas.F``) in
``IMPLEMENTATIONS``: bit manipulation, integer helpers, float classification and
reinterpretation, the rounding-mode arithmetic and conversions (``rounding.py``)
and the special functions the C library lacks (``specfun.py``).  Every name of
``cujit.libdevice.FUNCTIONS`` is served by exactly one of the three.
"""

from __future__ import annotations

import re

from llvmlite import ir as ll

from cujit.codegen.context import FunctionLowering
from cujit.codegen.libdevice import call_with_outputs
from cujit.codegen.lltypes import F16, F32, F64, I32, I64
from cujit.libdevice import FUNCTIONS, LibdeviceFunction
from cujit.targets.cpu import rounding, specfun
from cujit.targets.cpu.formulas import F, intrinsic, libc

# Functions the C library has with libdevice's name and prototype.
C_LIBRARY = frozenset(
    [
        "abs",
        "llabs",
        "acos",
        "acosf",
        "acosh",
        "acoshf",
        "asin",
        "asinf",
        "asinh",
        "asinhf",
        "atan",
        "atan2",
        "atan2f",
        "atanf",
        "atanh",
        "atanhf",
        "cbrt",
        "cbrtf",
        "ceil",
        "ceilf",
        "copysign",
        "copysignf",
        "cos",
        "cosf",
        "cosh",
        "coshf",
        "erf",
        "erfc",
        "erfcf",
        "erff",
        "exp",
        "exp10",
        "exp10f",
        "exp2",
        "exp2f",
        "expf",
        "expm1",
        "expm1f",
        "fabs",
        "fabsf",
        "fdim",
        "fdimf",
        "ffs",
        "ffsll",
        "floor",
        "floorf",
        "fma",
        "fmaf",
        "fmax",
        "fmaxf",
        "fmin",
        "fminf",
        "fmod",
        "fmodf",
        "frexp",
        "frexpf",
        "hypot",
        "hypotf",
        "ilogb",
        "ilogbf",
        "j0",
        "j0f",
        "j1",
        "j1f",
        "jn",
        "jnf",
        "ldexp",
        "ldexpf",
        "lgamma",
        "lgammaf",
        "llrint",
        "llrintf",
        "llround",
        "llroundf",
        "log",
        "log10",
        "log10f",
        "log1p",
        "log1pf",
        "log2",
        "log2f",
        "logb",
        "logbf",
        "logf",
        "modf",
        "modff",
        "nearbyint",
        "nearbyintf",
        "nextafter",
        "nextafterf",
        "pow",
        "powf",
        "remainder",
        "remainderf",
        "remquo",
        "remquof",
        "rint",
        "rintf",
        "round",
        "roundf",
        "scalbn",
        "scalbnf",
        "sin",
        "sincos",
        "sincosf",
        "sinf",
        "sinh",
        "sinhf",
        "sqrt",
        "sqrtf",
        "tan",
        "tanf",
        "tanh",
        "tanhf",
        "tgamma",
        "tgammaf",
        "trunc",
        "truncf",
        "y0",
        "y0f",
        "y1",
        "y1f",
        "yn",
        "ynf",
    ]
)


def _i(v: F, bits: int = 32) -> F:  # a predicate as an int32 0/1
    return F(v.ctx, v.b.zext(v.v, ll.IntType(bits)))


def _u(x: F) -> F:
    return F(x.ctx, x.v, True)


def _mulhi(unsigned: bool):
    def impl(x: F, y: F) -> F:
        width = x.v.type.width
        wide = ll.IntType(2 * width)
        a, c = (F(v.ctx, v.v, unsigned).to(wide) for v in (x, y))
        return F(x.ctx, x.b.trunc(F(x.ctx, (a * c).v, True).__rshift__(width).v, x.v.type))

    return impl


def _average(unsigned: bool, up: int):
    def impl(x: F, y: F) -> F:  # (x + y + up) >> 1 without overflow: in int64
        a, c = (F(v.ctx, v.v, unsigned).to(I64) for v in (x, y))
        s = F(x.ctx, (a + c + up).v, unsigned) >> 1
        return s.to(I32)

    return impl


def _mul24(unsigned: bool):
    def impl(x: F, y: F) -> F:
        if unsigned:
            return (x & 0xFFFFFF) * (y & 0xFFFFFF)
        return ((x << 8) >> 8) * ((y << 8) >> 8)

    return impl


def _sad(unsigned: bool):
    def impl(x: F, y: F, z: F) -> F:  # |x - y| + z
        a, c = (F(v.ctx, v.v, unsigned).to(I64) for v in (x, y))
        d = a - c
        return ((d < 0).where(-d, d) + _u(z).to(I64)).to(I32)

    return impl


def _byte_perm(x: F, y: F, s: F) -> F:
    pool = (_u(y).to(I64) << 32) | _u(x).to(I64)
    out = None
    for n in range(4):
        sel = _u(((_u(s) >> (4 * n)) & 7).to(I64))
        byte = (_u(pool) >> (sel * 8)) & 0xFF
        byte = byte.to(I32) << (8 * n)
        out = byte if out is None else out | byte
    return out


def _select(pick: str, unsigned: bool):
    def impl(x: F, y: F) -> F:
        a, c = F(x.ctx, x.v, unsigned), F(y.ctx, y.v, unsigned)
        return (a < c if pick == "min" else a > c).where(a, c)

    return impl


def _classify(test: str):
    def impl(x: F) -> F:
        if test == "nan":  # unordered: true only for NaN
            return _i(F(x.ctx, x.b.fcmp_unordered("uno", x.v, x.v)))
        mag = intrinsic(f"fabs.{'f32' if x.v.type == F32 else 'f64'}", x.v.type, x)
        return _i(mag < float("inf") if test == "finite" else mag.eq(float("inf")))

    return impl


def _signbit(x: F) -> F:
    bits = x.bitcast(ll.IntType(64 if x.v.type == F64 else 32))
    return _i(bits < 0)


def _saturate(x: F) -> F:
    return (x > 0.0).where((x < 1.0).where(x, 1.0), 0.0)  # NaN -> 0


def _in_double(fn):
    """A float32 function computed by its float64 formula and rounded."""

    def impl(x: F) -> F:
        return fn(x.to(F64)).to(F32)

    return impl


def _sincospi(x: F) -> list[F]:
    return [specfun.sinpi(x), specfun.cospi(x)]


def _sincospif(x: F) -> list[F]:
    return [v.to(F32) for v in _sincospi(x.to(F64))]


def _half_bits(x: F) -> F:
    return x.to(F16).bitcast(ll.IntType(16))


def _bits_half(x: F) -> F:
    return x.bitcast(F16).to(F32)


def _hiloint2double(hi: F, lo: F) -> F:
    return ((_u(hi).to(I64) << 32) | _u(lo).to(I64)).bitcast(F64)


def _double2hiint(x: F) -> F:
    return (_u(x.bitcast(I64)) >> 32).to(I32)


def _powi(x: F, n: F) -> F:
    return libc("pow" if x.v.type == F64 else "powf", x, n.to(x.v.type))


def _fixed() -> dict:
    d = {
        "brev": lambda x: intrinsic("bitreverse.i32", I32, x),
        "brevll": lambda x: intrinsic("bitreverse.i64", I64, x),
        "clz": lambda x: intrinsic("ctlz.i32", I32, x, extra=(ll.Constant(ll.IntType(1), 0),)),
        "clzll": lambda x: intrinsic("ctlz.i64", I64, x, extra=(ll.Constant(ll.IntType(1), 0),)).to(
            I32
        ),
        "popc": lambda x: intrinsic("ctpop.i32", I32, x),
        "popcll": lambda x: intrinsic("ctpop.i64", I64, x).to(I32),
        "byte_perm": _byte_perm,
        "mulhi": _mulhi(False),
        "umulhi": _mulhi(True),
        "mul64hi": _mulhi(False),
        "umul64hi": _mulhi(True),
        "mul24": _mul24(False),
        "umul24": _mul24(True),
        "hadd": _average(False, 0),
        "rhadd": _average(False, 1),
        "uhadd": _average(True, 0),
        "urhadd": _average(True, 1),
        "sad": _sad(False),
        "usad": _sad(True),
        "isnand": _classify("nan"),
        "isinfd": _classify("inf"),
        "isfinited": _classify("finite"),
        "isnanf": _classify("nan"),
        "isinff": _classify("inf"),
        "finitef": _classify("finite"),
        "signbitd": _signbit,
        "signbitf": _signbit,
        "saturatef": _saturate,
        "double_as_longlong": lambda x: x.bitcast(I64),
        "longlong_as_double": lambda x: x.bitcast(F64),
        "float_as_int": lambda x: x.bitcast(I32),
        "int_as_float": lambda x: x.bitcast(F32),
        "double2loint": lambda x: x.bitcast(I64).to(I32),
        "double2hiint": _double2hiint,
        "hiloint2double": _hiloint2double,
        "float2half_rn": _half_bits,
        "half2float": _bits_half,
        "rsqrt": lambda x: 1.0 / intrinsic("sqrt.f64", F64, x),
        "rsqrtf": lambda x: 1.0 / intrinsic("sqrt.f32", F32, x),
        "frsqrt_rn": lambda x: 1.0 / intrinsic("sqrt.f32", F32, x),
        "rcbrt": lambda x: 1.0 / libc("cbrt", x),
        "rcbrtf": lambda x: 1.0 / libc("cbrtf", x),
        "fast_fdividef": lambda x, y: x / y,
        "powi": _powi,
        "powif": _powi,
        "sincospi": _sincospi,
        "sincospif": _sincospif,
    }
    for name in ("min", "max", "llmin", "llmax", "umin", "umax", "ullmin", "ullmax"):
        d[name] = _select(name[-3:], name.startswith("u"))
    for name in ("normcdf", "normcdfinv", "erfinv", "erfcinv", "erfcx", "sinpi", "cospi"):
        d[name] = getattr(specfun, name)
        d[name + "f"] = _in_double(getattr(specfun, name))
    return d


_FLOAT = {"d": F64, "f": F32, "double": F64, "float": F32}
_INT = {"int": (I32, False), "uint": (I32, True), "ll": (I64, False), "ull": (I64, True)}
_ROUNDED_OPS = {
    "add": rounding.add,
    "sub": rounding.sub,
    "mul": rounding.mul,
    "div": rounding.div,
    "rcp": rounding.rcp,
    "sqrt": rounding.sqrt,
}


def _rounded(name: str):
    """The implementation of a ``..._r[nzdu]`` function, or None."""
    m = re.fullmatch(r"(.+)_(r[nzdu])", name)
    if m is None:
        return None
    stem, mode = m.groups()
    if op := re.fullmatch(r"[df](add|sub|mul|div|rcp|sqrt)", stem):
        fn = _ROUNDED_OPS[op.group(1)]
        return lambda *xs: fn(*xs, mode)
    if stem in ("fma", "fmaf"):
        return lambda a, b, c: rounding.fma(a, b, c, mode)
    if stem == "double2float":
        return lambda x: rounding.narrow(x, mode)
    src, _, dst = stem.partition("2")
    if src in _FLOAT and dst in _INT:
        ty, unsigned = _INT[dst]
        return lambda x: rounding.to_int(x, ty, unsigned, mode)
    if src in _INT and dst in _FLOAT:
        return lambda x: rounding.from_int(x, _FLOAT[dst], _INT[src][1], mode)
    return None


def _formula(name: str):
    fixed = _FIXED.get(name)
    if fixed is not None:
        return fixed
    return _rounded(name)


_FIXED = _fixed()
IMPLEMENTATIONS = {
    name: impl
    for name in FUNCTIONS
    if name not in C_LIBRARY and (impl := _formula(name)) is not None
}


def _c_name(name: str) -> str | None:
    if name in C_LIBRARY:
        return name
    if name.startswith("fast_") and name[5:] in C_LIBRARY:
        return name[5:]  # the precise function serves the fast one
    return None


def lower_host(ctx: FunctionLowering, fn: LibdeviceFunction, args: list) -> list:
    """The CPU target's ``implement`` for ``codegen.libdevice.libdevice_lowerings``."""
    symbol = _c_name(fn.name)
    if symbol is not None:
        return call_with_outputs(ctx, fn, symbol, args)
    out = IMPLEMENTATIONS[fn.name](*(F(ctx, a) for a in args))
    return [v.v for v in (out if isinstance(out, list) else [out])]


def prototype(fn: LibdeviceFunction) -> ll.FunctionType:
    """libdevice's LLVM prototype of ``fn``: the C arguments, outputs as pointers."""
    from cujit.codegen.lltypes import scalar_type

    args, outs = iter(fn.args), iter(fn.outs)
    params = [
        scalar_type(next(outs)).as_pointer() if k in fn.out_positions else scalar_type(next(args))
        for k in range(len(fn.args) + len(fn.outs))
    ]
    ret = scalar_type(fn.result) if fn.result is not None else ll.VoidType()
    return ll.FunctionType(ret, params)


class _Emitter:
    """What the formulas use of a FunctionLowering: a builder and declarations."""

    def __init__(self, builder: ll.IRBuilder, module: ll.Module):
        self.builder, self.module = builder, module

    def declare(self, name, ret, args, attrs=("nounwind",)):
        f = self.module.globals.get(name)
        if f is None:
            f = ll.Function(self.module, ll.FunctionType(ret, args), name)
            for a in attrs:
                f.attributes.add(a)
        return f


def define_host(fn: LibdeviceFunction, llfn: ll.Function) -> None:
    """Give ``llfn``, a declaration of libdevice's ``__nv_<name>`` with its prototype
    (an extension's LLVM calls it), the body that runs it on the host: the C library's
    function, or its formula.  It becomes internal to its module."""
    llfn.linkage = "internal"
    b = ll.IRBuilder(llfn.append_basic_block("entry"))
    emit = _Emitter(b, llfn.module)
    symbol = _c_name(fn.name)
    if symbol is not None:
        result = b.call(
            emit.declare(symbol, llfn.function_type.return_type, list(llfn.function_type.args)),
            list(llfn.args),
        )
        b.ret_void() if fn.result is None else b.ret(result)
        return
    ins = [a for k, a in enumerate(llfn.args) if k not in fn.out_positions]
    out = IMPLEMENTATIONS[fn.name](*(F(emit, a) for a in ins))
    values = [v.v for v in (out if isinstance(out, list) else [out])]
    if fn.result is not None:
        result, values = values[0], values[1:]
    for k, v in zip(fn.out_positions, values, strict=True):
        b.store(v, llfn.args[k])
    b.ret_void() if fn.result is None else b.ret(result)


def served(name: str) -> bool:
    """Whether the CPU target implements libdevice's ``name``."""
    return _c_name(name) is not None or name in IMPLEMENTATIONS


__all__ = ["C_LIBRARY", "IMPLEMENTATIONS", "define_host", "lower_host", "prototype", "served"]
