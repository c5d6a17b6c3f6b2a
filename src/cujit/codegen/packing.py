"""Lowering of the register packing helpers, the same on every target.

- ``tc.pack2(lo, hi)``: two 16-bit values (bfloat16 is its ``i16`` bits, float16 a
  ``half``) in one ``i32``, ``lo`` in bits 0-15, as PTX's ``mov.b32 r, {lo, hi}``
  and the fragments of ``mma`` hold them;
- ``tc.unpack2(r)``: the two halves back, as a ``{lo, hi}`` tuple;
- ``tc.tf32`` on a target without ``cvt.rna.tf32.f32``: float32's bits rounded to
  tf32's 10 fraction bits, to nearest with ties away from zero (what ``.rna`` means),
  the 13 bits below them cleared; a NaN stays the NaN it was.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import F32, I32, value_type

I16 = ll.IntType(16)


def _bits16(b: ll.IRBuilder, v: ll.Value) -> ll.Value:
    return v if v.type == I16 else b.bitcast(v, I16)


def lower_pack2(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    lo, hi = (b.zext(_bits16(b, v), I32) for v in args)
    return b.or_(lo, b.shl(hi, ll.Constant(I32, 16)))


def lower_unpack2(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    ty = value_type(op.result.type)
    lo = b.trunc(args[0], I16)
    hi = b.trunc(b.lshr(args[0], ll.Constant(I32, 16)), I16)
    item = ty.elements[0]
    if item != I16:
        lo, hi = b.bitcast(lo, item), b.bitcast(hi, item)
    pair = ll.Constant(ty, None)
    return b.insert_value(b.insert_value(pair, lo, 0), hi, 1)


def lower_tf32_bits(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    x = args[0]
    bits = b.bitcast(x, I32)
    rounded = b.and_(b.add(bits, ll.Constant(I32, 0x1000)), ll.Constant(I32, -0x2000))
    return b.select(b.fcmp_unordered("uno", x, x), x, b.bitcast(rounded, F32))


PACKING_INTRINSICS = {"tc.pack2": lower_pack2, "tc.unpack2": lower_unpack2}

__all__ = ["PACKING_INTRINSICS", "lower_pack2", "lower_tf32_bits", "lower_unpack2"]
