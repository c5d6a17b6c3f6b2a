"""Typing rules for ``cuda.bf16`` and for bfloat16 in ``math``, ``abs`` and constructors.

Operands convert to bfloat16 first (as numba-cuda's functions take ``nv_bfloat16``).
Arithmetic is the ordinary bfloat16 ops (``BinOp`` on bfloat16: stage 6 rounds
once from float32); the math functions, saturation, ``fma`` and the conversions to
integers compute in float32 through ``cuda.libdevice``'s functions and round back;
conversions with a directed rounding, the reinterpretations and the NaN-propagating
min/max are the ``bf16.*`` intrinsics (``codegen/bf16.py``).

    %4 = call %3(%1, %2)             # bf16.hadd_sat(a, b)
  becomes
    %5: float32 = cast %1 ... %7: float32 = %5 + %6
    %8: float32 = intrinsic libdevice.fmaxf (%7, 0.0) ... %4: bfloat16 = cast %9
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from cujit import bf16 as api
from cujit.diagnostics import TypingError, UnsupportedError
from cujit.infer.context import Typer
from cujit.ir import BinOp, Compare, Intrinsic, UnaryOp, Value
from cujit.types import (
    SCALAR_BY_NAME,
    PyObject,
    Scalar,
    bfloat16,
    boolean,
    float32,
    float64,
    int32,
    int64,
    uint16,
)
from cujit.types.bf16 import is_bfloat16
from cujit.types.core import loaded_module

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def _operands(t: Typer, site: CallSite, n: int, to=bfloat16) -> list[Value]:
    site.expect(n, n)
    out = []
    for v in site.args:
        ty = t.scalar(v, site.loc, f"cuda.bf16.{site.name}()")
        if ty.is_complex:
            raise TypingError(f"cuda.bf16.{site.name}() takes bfloat16, not {ty}", site.loc)
        out.append(t.cast(t.cast(v, bfloat16, site.loc), to, site.loc))
    return out


def _libdevice(t: Typer, site: CallSite, name: str, *args: Value) -> Value:
    from cujit.libdevice import FUNCTIONS  # its table loads with the first such call

    fn = FUNCTIONS[name]
    return t.emit(
        Intrinsic(loc=site.loc, result=t.fresh(fn.returns), name=f"libdevice.{name}", args=args)
    )


def _intrinsic(t: Typer, site: CallSite, name: str, result, *args: Value) -> Value:
    return t.emit(Intrinsic(loc=site.loc, result=t.fresh(result), name=name, args=args))


def _binop(t: Typer, site: CallSite, op: str, a: Value, b: Value) -> Value:
    return t.emit(BinOp(loc=site.loc, result=t.fresh(a.type), op=op, lhs=a, rhs=b))


def _compare(t: Typer, site: CallSite, op: str, a: Value, b: Value) -> Value:
    if op == "<>":  # ordered not-equal: false where either is NaN (Python's != is true)
        lt = _compare(t, site, "<", a, b)
        return _binop(t, site, "|", lt, _compare(t, site, ">", a, b))
    return t.emit(Compare(loc=site.loc, result=t.fresh(boolean), op=op, lhs=a, rhs=b))


def _f32(t: Typer, site: CallSite, value: float) -> Value:
    return t.cast(t.const(value, site.loc), float32, site.loc)


def _saturate(t: Typer, site: CallSite, x: Value) -> Value:
    """``x`` (float32) clamped to [0, 1]; NaN gives 0 (fmaxf ignores a NaN)."""
    low = _libdevice(t, site, "fmaxf", x, _f32(t, site, 0.0))
    return _libdevice(t, site, "fminf", low, _f32(t, site, 1.0))


def _arith(t: Typer, site: CallSite, op: str) -> Value:
    a, b = _operands(t, site, 2)
    return _binop(t, site, op, a, b)


def _arith_rn(t: Typer, site: CallSite, op: str) -> Value:
    """Rounded once from float32 and never fused with another op (``__hadd_rn``)."""
    a, b = _operands(t, site, 2, float32)
    return t.cast(_binop(t, site, op, a, b), bfloat16, site.loc)


def _sat(t: Typer, site: CallSite, op: str) -> Value:
    a, b = _operands(t, site, 2, float32)
    return t.cast(_saturate(t, site, _binop(t, site, op, a, b)), bfloat16, site.loc)


def _fma(t: Typer, site: CallSite, mode: str) -> Value:
    a, b, c = _operands(t, site, 3, float32)
    # a * b of two bfloat16s is exact in float32; fmaf rounds the sum once
    r = _libdevice(t, site, "fmaf", a, b, c)
    if mode == "sat":
        r = _saturate(t, site, r)
    r = t.cast(r, bfloat16, site.loc)
    if mode == "relu":  # negative -> 0, NaN stays NaN
        zero = t.cast(t.const(0.0, site.loc), bfloat16, site.loc)
        r = _intrinsic(t, site, "bf16.max_nan", bfloat16, r, zero)
    return r


def _unary(kind: str, t: Typer, site: CallSite, detail) -> Value:
    if kind == "math":
        (x,) = _operands(t, site, 1, float32)
        return t.cast(_libdevice(t, site, detail, x), bfloat16, site.loc)
    if kind == "hrcp":
        (x,) = _operands(t, site, 1, float32)
        return t.cast(_binop(t, site, "/", _f32(t, site, 1.0), x), bfloat16, site.loc)
    (x,) = _operands(t, site, 1)
    if kind == "hneg":
        return t.emit(UnaryOp(loc=site.loc, result=t.fresh(bfloat16), op="-", operand=x))
    if kind == "habs":  # the sign bit cleared: max(x, -x) would lose a NaN's sign only
        bits = _intrinsic(t, site, "bf16.bits", uint16, x)
        mask = t.cast(t.const(0x7FFF, site.loc), uint16, site.loc)
        cleared = t.cast(_binop(t, site, "&", bits, mask), uint16, site.loc)
        return _intrinsic(t, site, "bf16.from_bits", bfloat16, cleared)
    if kind == "isnan":
        return _compare(t, site, "!=", x, x)
    # isinf: 1 for +inf, -1 for -inf, else 0 (CUDA's __hisinf)
    inf = t.cast(t.const(math.inf, site.loc), bfloat16, site.loc)
    ninf = t.cast(t.const(-math.inf, site.loc), bfloat16, site.loc)
    pos = t.cast(_compare(t, site, "==", x, inf), int32, site.loc)
    neg = t.cast(_compare(t, site, "==", x, ninf), int32, site.loc)
    return t.cast(_binop(t, site, "-", pos, neg), int32, site.loc)


def _from(t: Typer, site: CallSite, detail) -> Value:
    src, mode = detail
    site.expect(1, 1)
    t.scalar(site.args[0], site.loc, f"cuda.bf16.{site.name}()")
    x = t.cast(site.args[0], SCALAR_BY_NAME[src], site.loc)
    if mode == "rn":
        return t.cast(x, bfloat16, site.loc)  # stage 6's conversion rounds to nearest even
    if src != "float32":  # an integer: exact in float64 up to 2**53
        x = t.cast(x, float64, site.loc)
        return _intrinsic(t, site, f"bf16.from_f64.{mode}", bfloat16, x)
    return _intrinsic(t, site, f"bf16.from_f32.{mode}", bfloat16, x)


def _to(t: Typer, site: CallSite, detail) -> Value:
    dst, mode = detail
    (x,) = _operands(t, site, 1, float32)
    dst_t = SCALAR_BY_NAME[dst]
    if not mode:
        return t.cast(x, dst_t, site.loc)
    # libdevice's float2int/uint/ll/ull: the 32-bit ones serve the narrower types too
    c = ("u" if dst_t.kind == "u" else "") + ("ll" if dst_t.bits == 64 else "int")
    out = _libdevice(t, site, f"float2{c}_{mode}", x)
    if dst_t.bits < 32:  # saturated to the narrow type's range, as CUDA's conversions
        lo, hi = (
            (0, 2**dst_t.bits - 1)
            if dst_t.kind == "u"
            else (-(2 ** (dst_t.bits - 1)), 2 ** (dst_t.bits - 1) - 1)
        )
        if dst_t.kind == "u":  # libdevice's float2uint is typed int32: its bits are a uint32
            out = t.cast(out, SCALAR_BY_NAME["uint32"], site.loc)
        out = t.cast(out, int64, site.loc)
        for name, bound in (("max", lo), ("min", hi)):
            limit = t.cast(t.const(bound, site.loc), int64, site.loc)
            out = _intrinsic(t, site, name, int64, out, limit)
    return t.cast(out, dst_t, site.loc)


def _reinterpret(kind: str, t: Typer, site: CallSite, detail) -> Value:
    site.expect(1, 1)
    x = site.args[0]
    if kind == "as_int":
        (x,) = _operands(t, site, 1)
        bits = _intrinsic(t, site, "bf16.bits", uint16, x)
        return t.cast(bits, SCALAR_BY_NAME[detail], site.loc)
    t.scalar(x, site.loc, f"cuda.bf16.{site.name}()")
    bits = t.cast(t.cast(x, SCALAR_BY_NAME[detail], site.loc), uint16, site.loc)
    return _intrinsic(t, site, "bf16.from_bits", bfloat16, bits)


_TWO_KINDS = ("compare", "unordered", "libdevice2", "intrinsic2")
_AS_KINDS = ("as_int", "as_bf16")


def _two(kind: str, t: Typer, site: CallSite, detail) -> Value:
    if kind == "compare":
        a, b = _operands(t, site, 2)
        return _compare(t, site, detail, a, b)
    if kind == "unordered":
        a, b = _operands(t, site, 2)
        test = _compare(t, site, detail, a, b)
        return t.emit(UnaryOp(loc=site.loc, result=t.fresh(boolean), op="not", operand=test))
    if kind == "libdevice2":
        a, b = _operands(t, site, 2, float32)
        return t.cast(_libdevice(t, site, detail, a, b), bfloat16, site.loc)
    a, b = _operands(t, site, 2)
    return _intrinsic(t, site, detail, bfloat16, a, b)


_BY_KIND: dict[str, Callable] = {
    "arith": _arith,
    "arith_rn": _arith_rn,
    "sat": _sat,
    "fma": _fma,
    "from": _from,
    "to": _to,
    **{k: functools.partial(_two, k) for k in _TWO_KINDS},
    **{k: functools.partial(_reinterpret, k) for k in _AS_KINDS},
}


def _rule(kind: str, detail) -> Callable:
    typer = _BY_KIND.get(kind)

    def rule(t: Typer, site: CallSite) -> Value:
        if typer is None:
            return _unary(kind, t, site, detail)
        return typer(t, site, detail)

    return rule


# math.* functions that numba-cuda overloads for bfloat16 (they return bfloat16),
# and abs(); any other argument type keeps the rule the call table had.
_MATH = {
    math.trunc: "htrunc",
    math.ceil: "hceil",
    math.floor: "hfloor",
    math.sqrt: "hsqrt",
    math.log: "hlog",
    math.log10: "hlog10",
    math.cos: "hcos",
    math.sin: "hsin",
    math.tanh: "htanh",
    math.exp: "hexp",
    math.exp2: "hexp2",
    abs: "habs",
}


def _bf16_or(previous: Callable | None, bf16_rule: Callable) -> Callable:
    def rule(t: Typer, site: CallSite) -> Value:
        if previous is None or (
            len(site.args) == 1 and is_bfloat16(getattr(site.args[0], "type", None))
        ):
            return bf16_rule(t, site)
        return previous(t, site)

    return rule


def _cast_to_bf16(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    t.scalar(site.args[0], site.loc, "bfloat16()")
    return t.cast(site.args[0], bfloat16, site.loc)


def _isinstance_of_scalar(previous: Callable | None) -> Callable:
    """``isinstance(x, bfloat16)`` (or another cujit scalar type): a constant, from
    ``x``'s compile-time type, as numba decides it."""

    def rule(t: Typer, site: CallSite) -> Value:
        cls = site.args[1].type if len(site.args) == 2 else None
        if isinstance(cls, PyObject) and isinstance(cls.value, Scalar):
            return t.const(site.args[0].type == cls.value, site.loc)
        if previous is None:
            raise UnsupportedError("isinstance() is supported for scalar types only", site.loc)
        return previous(t, site)

    return rule


def ml_dtypes_rule(fn: object):
    """The rule of ``ml_dtypes.bfloat16(x)`` if ``fn`` is that class, else None.  Not in
    the call table: building the table would import ml_dtypes for every kernel, and a
    kernel that names ``ml_dtypes.bfloat16`` has imported ml_dtypes already."""
    ml = loaded_module("ml_dtypes")
    return _cast_to_bf16 if ml is not None and fn is getattr(ml, "bfloat16", None) else None


def bf16_rules(calls: dict) -> dict:
    """The call table's bfloat16 entries: ``cuda.bf16``'s functions, cujit's bfloat16
    constructor, and ``math``/``abs`` on a bfloat16 (``calls`` is the table so far: other
    argument types keep its rules); ml_dtypes' constructor: ``ml_dtypes_rule``."""
    rules: dict = {f: _rule(*api.KINDS[name]) for name, f in api.FUNCTIONS.items()}
    rules[bfloat16] = _cast_to_bf16
    rules[isinstance] = _isinstance_of_scalar(calls.get(isinstance))
    for fn, name in _MATH.items():
        rules[fn] = _bf16_or(calls.get(fn), rules[api.FUNCTIONS[name]])
    return rules
