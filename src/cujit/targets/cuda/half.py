"""Native float16 instructions for ``codegen/half.py`` (``Target.half``): inline PTX
on the ``.b16`` register of a ``half`` (constraint ``h``), the instructions numba's
float16 operators and casts emit ("PTX ISA", Half Precision Floating-Point
Instructions; ``cvt`` for the conversions, sm_53 and later)."""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.context import FunctionLowering
from cujit.types import Scalar

I16 = ll.IntType(16)
HALF = ll.HalfType()
# Register constraints by int width ("Inline PTX Assembly in CUDA": c is .b8).
_INT_CONSTRAINT = {8: "c", 16: "h", 32: "r", 64: "l"}
# Python's comparisons: ordered, except != (true when either side is NaN).
_SETP = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "neu"}


def _asm(ctx: FunctionLowering, text: str, constraints: str, ret: ll.Type, args) -> ll.Value:
    fnty = ll.FunctionType(ret, [a.type for a in args])
    return ctx.builder.call(ll.InlineAsm(fnty, text, constraints), list(args))


def _bits(ctx: FunctionLowering, x: ll.Value) -> ll.Value:
    return ctx.builder.bitcast(x, I16)


def _unary(instr: str):
    def lower(ctx: FunctionLowering, x: ll.Value) -> ll.Value:
        out = _asm(ctx, f"{instr}.f16 $0, $1;", "=h,h", I16, [_bits(ctx, x)])
        return ctx.builder.bitcast(out, HALF)

    return lower


def compare(ctx: FunctionLowering, cmp: str, a: ll.Value, b: ll.Value) -> ll.Value:
    text = f"{{ .reg .pred %cmp; setp.{_SETP[cmp]}.f16 %cmp, $1, $2; selp.u16 $0, 1, 0, %cmp; }}"
    flag = _asm(ctx, text, "=h,h,h", I16, [_bits(ctx, a), _bits(ctx, b)])
    return ctx.builder.icmp_unsigned("!=", flag, ll.Constant(I16, 0))


def to_int(ctx: FunctionLowering, dst: Scalar, x: ll.Value) -> ll.Value:
    sign = "s" if dst.kind == "i" else "u"
    reg = _INT_CONSTRAINT[dst.bits]
    text = f"cvt.rni.{sign}{dst.bits}.f16 $0, $1;"
    return _asm(ctx, text, f"={reg},h", ll.IntType(dst.bits), [_bits(ctx, x)])


def from_int(ctx: FunctionLowering, src: Scalar, x: ll.Value) -> ll.Value:
    sign = "s" if src.kind == "i" else "u"
    text = f"cvt.rn.f16.{sign}{src.bits} $0, $1;"
    out = _asm(ctx, text, f"=h,{_INT_CONSTRAINT[src.bits]}", I16, [x])
    return ctx.builder.bitcast(out, HALF)


HALF_LOWERINGS = {
    "neg": _unary("neg"),
    "abs": _unary("abs"),
    "compare": compare,
    "to_int": to_int,
    "from_int": from_int,
}
