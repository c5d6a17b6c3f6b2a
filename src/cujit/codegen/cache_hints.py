"""Lowering of ``cache.ld*``/``cache.st*`` (``cuda.ldcg`` and friends).

``lower_plain`` is a target without cache operators (the CPU target): the hinted load
or store is the plain one.  ``lower_ptx`` (the CUDA target) emits PTX's
``ld.global.<op>.b<bits>``/``st.global.<op>.b<bits>`` as inline assembly on the
element's global address, the value moved as an integer of its width (PTX has no
8-bit registers: bytes travel in 32-bit ones, as CUDA's headers move them).  On a
pointer (an address) the element is the one its index places on, as ``p[i]``.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import element_pointer, index_values, load_scalar, store_scalar
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import memory_type, scalar_type
from cujit.types import CPointer

NAMES = ("ldca", "ldcg", "ldcs", "ldlu", "ldcv", "stcg", "stcs", "stwb", "stwt")
_CONSTRAINT = {16: "h", 32: "r", 64: "l"}


def _pointer(ctx: FunctionLowering, op: ir.Intrinsic) -> ll.Value:
    t = op.args[0].type
    if isinstance(t, CPointer):
        base = ctx.builder.inttoptr(ctx.get(op.args[0]), ll.PointerType(memory_type(t.dtype)))
        return ctx.builder.gep(base, [ctx.get(op.args[1])])
    return element_pointer(ctx, t, ctx.get(op.args[0]), index_values(ctx, op.args[1]))


def lower_plain(ctx: FunctionLowering, op: ir.Intrinsic, args):
    dtype = op.args[0].type.dtype
    ptr = _pointer(ctx, op)
    if op.name.startswith("cache.ld"):
        return load_scalar(ctx, dtype, ptr)
    store_scalar(ctx, dtype, ptr, args[2])
    return None


def lower_ptx(ctx: FunctionLowering, op: ir.Intrinsic, args):
    dtype = op.args[0].type.dtype
    b = ctx.builder
    bits = dtype.bits
    reg = ll.IntType(32 if bits == 8 else bits)  # a byte in a 32-bit register, as CUDA's own
    ptr = b.ptrtoint(_pointer(ctx, op), ll.IntType(64))
    kind, hint = op.name[len("cache.") :][:2], op.name[len("cache.") :][2:]
    if kind == "ld":
        asm = ll.InlineAsm(
            ll.FunctionType(reg, [ptr.type]),
            f"ld.global.{hint}.b{bits} $0, [$1];",
            f"={_CONSTRAINT[reg.width]},l",
            side_effect=True,
        )
        raw = b.call(asm, [ptr])
        if bits < reg.width:
            raw = b.trunc(raw, ll.IntType(bits))
        return b.bitcast(raw, scalar_type(dtype)) if dtype.kind == "f" else raw
    value = args[2]
    if dtype.kind == "f":
        value = b.bitcast(value, ll.IntType(bits))
    if bits < reg.width:
        value = b.zext(value, reg)
    asm = ll.InlineAsm(
        ll.FunctionType(ll.VoidType(), [ptr.type, reg]),
        f"st.global.{hint}.b{bits} [$0], $1;",
        f"l,{_CONSTRAINT[reg.width]},~{{memory}}",
        side_effect=True,
    )
    b.call(asm, [ptr, value])
    return None


def cache_hint_lowerings(lower) -> dict:
    return {f"cache.{n}": lower for n in NAMES}


__all__ = ["NAMES", "cache_hint_lowerings", "lower_plain", "lower_ptx"]
