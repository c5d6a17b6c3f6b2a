"""Stage 6 for pointers (``types.CPointer``, held as their address, an i64):
``pointer.load`` and ``pointer.store`` reach the element ``i`` places on.

    %p = inttoptr i64 %addr to float*
    %e = getelementptr float, float* %p, i64 %i
    %v = load float, float* %e
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I1, I8, memory_type


def _element(ctx: FunctionLowering, op: ir.Intrinsic, addr, index) -> ll.Value:
    dtype = op.args[0].type.dtype
    ptr = ctx.builder.inttoptr(addr, ll.PointerType(memory_type(dtype)))
    return ctx.builder.gep(ptr, [index])


def lower_pointer_load(ctx: FunctionLowering, op: ir.Intrinsic, args):
    value = ctx.builder.load(_element(ctx, op, *args))
    # A bool's byte in memory: any non-zero byte reads as True.
    if value.type == I8 and op.result.type.kind == "b":
        return ctx.builder.icmp_unsigned("!=", value, ll.Constant(I8, 0))
    return value


def lower_pointer_store(ctx: FunctionLowering, op: ir.Intrinsic, args):
    addr, index, value = args
    if value.type == I1:
        value = ctx.builder.zext(value, I8)
    ctx.builder.store(value, _element(ctx, op, addr, index))


POINTER_INTRINSICS = {
    "pointer.load": lower_pointer_load,
    "pointer.store": lower_pointer_store,
}
