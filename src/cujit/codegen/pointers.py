"""Stage 6 for pointers (``types.CPointer``, held as their address, an i64):
``pointer.load`` and ``pointer.store`` reach the element ``i`` places on;
``pointer.array`` (numba's ``carray``/``farray``) is a contiguous array over it.

    %p = inttoptr i64 %addr to float*
    %e = getelementptr float, float* %p, i64 %i
    %v = load float, float* %e
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import contiguous_strides, make_array
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


def lower_pointer_array(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """An array over ``ptr``'s memory with the given extents, C or F contiguous."""
    addr, *extents = args
    t = op.result.type
    data = ctx.builder.inttoptr(addr, ll.PointerType(memory_type(t.dtype)))
    return make_array(ctx, t, data, extents, contiguous_strides(ctx, t, extents))


POINTER_INTRINSICS = {
    "pointer.array": lower_pointer_array,
    "pointer.load": lower_pointer_load,
    "pointer.store": lower_pointer_store,
}
