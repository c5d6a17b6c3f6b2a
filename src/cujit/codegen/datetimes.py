"""datetime64 / timedelta64 on int64 counts: arithmetic, comparisons and unit casts.

NaT (the smallest int64) is kept as NumPy keeps it: an operation with a NaT time
operand gives NaT, a comparison with one is False (``!=``: True), and a cast keeps it.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I64, i64
from cujit.diagnostics import TypingError
from cujit.types import Scalar, int64
from cujit.types.datetimes import NAT, common_unit, is_datetime_kind, scale, unit_of


def _is_nat(ctx: FunctionLowering, v: ll.Value) -> ll.Value:
    return ctx.builder.icmp_signed("==", v, i64(NAT))


def _scaled(ctx: FunctionLowering, v: ll.Value, s: int) -> ll.Value:
    return v if s == 1 else ctx.builder.mul(v, i64(s))


def _floor_div(ctx: FunctionLowering, x: ll.Value, y: ll.Value) -> ll.Value:
    """Python's ``x // y`` on int64 (``y`` is not zero: the caller selects NaT then)."""
    b = ctx.builder
    safe = b.select(b.icmp_signed("==", y, i64(0)), i64(1), y)
    q, r = b.sdiv(x, safe), b.srem(x, safe)
    adjust = b.and_(
        b.icmp_signed("!=", r, i64(0)),
        b.icmp_signed("!=", b.icmp_signed("<", r, i64(0)), b.icmp_signed("<", safe, i64(0))),
    )
    return b.sub(q, b.zext(adjust, I64))


def lower_arith(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    (sa, sb), times = op.attr("scales"), op.attr("times")
    x, y = _scaled(ctx, args[0], sa), _scaled(ctx, args[1], sb)
    kind = op.attr("op")
    if kind == "//":  # NumPy's timedelta // int truncates toward zero
        value = b.sdiv(x, b.select(b.icmp_signed("==", y, i64(0)), i64(1), y))
    else:
        value = {"+": b.add, "-": b.sub, "*": b.mul}[kind](x, y)
    nat = ll.Constant(ll.IntType(1), 0)
    for v, is_time in zip(args, times, strict=True):
        if is_time:
            nat = b.or_(nat, _is_nat(ctx, v))
    if kind == "//":
        nat = b.or_(nat, b.icmp_signed("==", y, i64(0)))
    return b.select(nat, i64(NAT), value)


def lower_compare(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    sa, sb = op.attr("scales")
    kind = op.attr("op")
    result = b.icmp_signed(kind, _scaled(ctx, args[0], sa), _scaled(ctx, args[1], sb))
    nat = b.or_(_is_nat(ctx, args[0]), _is_nat(ctx, args[1]))
    return b.select(nat, ll.Constant(ll.IntType(1), kind == "!="), result)


def cast(ctx: FunctionLowering, src: Scalar, dst: Scalar, x: ll.Value, scalar_cast):
    """``x`` from ``src`` to ``dst`` where either is a datetime kind: between units by
    exact factors (to a coarser unit: floor division, as NumPy's casts), to and from
    numbers as the count."""
    if not is_datetime_kind(src):
        return scalar_cast(ctx, src, int64, x)
    if not is_datetime_kind(dst):
        return scalar_cast(ctx, int64, dst, x)
    us, ud = unit_of(src), unit_of(dst)
    if src.kind != dst.kind or common_unit(us, ud) is None:
        raise TypingError(f"cannot convert {src} to {dst}", ctx.loc)
    if not us or not ud or us == ud:
        return x
    b = ctx.builder
    if common_unit(us, ud) == ud:  # to a finer unit
        value = b.mul(x, i64(scale(us, ud)))
    else:
        value = _floor_div(ctx, x, i64(scale(ud, us)))
    return b.select(_is_nat(ctx, x), i64(NAT), value)


DATETIME_INTRINSICS = {"datetime.arith": lower_arith, "datetime.compare": lower_compare}
