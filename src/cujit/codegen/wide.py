"""Lowering of the coarsened variant's wide accesses (``passes/coarsen.py``).

``wide.load(a, base)`` reads ``a[base:base + k]`` of a 1-D C-contiguous array as one
``<k x T>`` load aligned to 16 bytes and gives the k elements as a tuple;
``wide.store(a, base, v0, ..., vk-1)`` writes them back as one vector store.  The
alignment is a promise the launch keeps: the coarsened variant runs only when each
array's address is a multiple of 16 and ``base`` a multiple of k, with
``k * itemsize`` a multiple of 16.  NVVM turns the vectors into ``ld.global.v4.f32``
(``v2`` for 8-byte elements), the host's LLVM into SSE/AVX moves.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import build_struct
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import ARRAY_DATA, memory_type

ALIGN = 16  # bytes: the launch checks each array's address against it


def _vector_pointer(ctx: FunctionLowering, op: ir.Intrinsic, arr, base, k: int) -> ll.Value:
    b = ctx.builder
    data = b.extract_value(arr, ARRAY_DATA)
    elem = memory_type(op.args[0].type.dtype)
    start = b.gep(data, [base], inbounds=True)
    return b.bitcast(start, ll.PointerType(ll.VectorType(elem, k), data.type.addrspace))


def lower_wide_load(ctx: FunctionLowering, op: ir.Intrinsic, args) -> ll.Value:
    arr, base = args
    k = len(op.result.type.items)
    vec = ctx.builder.load(_vector_pointer(ctx, op, arr, base, k), align=ALIGN)
    lanes = [ctx.builder.extract_element(vec, ll.Constant(ll.IntType(32), j)) for j in range(k)]
    return build_struct(ctx, op.result.type, lanes)


def lower_wide_store(ctx: FunctionLowering, op: ir.Intrinsic, args):
    arr, base, *lanes = args
    k = len(lanes)
    ptr = _vector_pointer(ctx, op, arr, base, k)
    vec = ll.Constant(ptr.type.pointee, ll.Undefined)
    for j, v in enumerate(lanes):
        vec = ctx.builder.insert_element(vec, v, ll.Constant(ll.IntType(32), j))
    ctx.builder.store(vec, ptr, align=ALIGN)
    return None


WIDE_INTRINSICS = {"wide.load": lower_wide_load, "wide.store": lower_wide_store}
