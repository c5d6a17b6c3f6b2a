"""Lowering of the coarsened variant's wide accesses (``passes/coarsen.py``).

``wide.load(a, base)`` reads ``a[base:base + k]`` of a 1-D C-contiguous array as one
``<k x T>`` load aligned to 16 bytes and gives the k elements as a tuple;
``wide.store(a, base, v0, ..., vk-1)`` writes them back as one vector store.  The
alignment is a promise the launch keeps: the coarsened variant runs only when each
array's address is a multiple of 16 and ``base`` a multiple of k, with
``k * itemsize`` a multiple of 16.  NVVM turns the vectors into ``ld.global.v4.f32``
(``v2`` for 8-byte elements), the host's LLVM into SSE/AVX moves.  A complex
element is its two parts side by side: k complex64 are a ``<2k x float>``.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import build_struct
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import ARRAY_DATA, memory_type

ALIGN = 16  # bytes: the launch checks each array's address against it


def _lanes_type(dtype) -> tuple[ll.Type, int]:
    """The vector element and how many of them make one array element: a complex is
    its two parts side by side."""
    elem = memory_type(dtype)
    if isinstance(elem, ll.LiteralStructType):  # complex64 / complex128
        return elem.elements[0], 2
    return elem, 1


def _vector_pointer(ctx: FunctionLowering, op: ir.Intrinsic, arr, base, k: int) -> ll.Value:
    b = ctx.builder
    data = b.extract_value(arr, ARRAY_DATA)
    part, per = _lanes_type(op.args[0].type.dtype)
    start = b.gep(data, [base], inbounds=True)
    return b.bitcast(start, ll.PointerType(ll.VectorType(part, k * per), data.type.addrspace))


def _element(ctx: FunctionLowering, vec, j: int, per: int, elem: ll.Type) -> ll.Value:
    b = ctx.builder
    parts = [b.extract_element(vec, ll.Constant(ll.IntType(32), j * per + p)) for p in range(per)]
    if per == 1:
        return parts[0]
    value = ll.Constant(elem, ll.Undefined)
    for p, part in enumerate(parts):
        value = b.insert_value(value, part, p)
    return value


def lower_wide_load(ctx: FunctionLowering, op: ir.Intrinsic, args) -> ll.Value:
    arr, base = args
    k = len(op.result.type.items)
    dtype = op.args[0].type.dtype
    _, per = _lanes_type(dtype)
    vec = ctx.builder.load(_vector_pointer(ctx, op, arr, base, k), align=ALIGN)
    lanes = [_element(ctx, vec, j, per, memory_type(dtype)) for j in range(k)]
    return build_struct(ctx, op.result.type, lanes)


def lower_wide_store(ctx: FunctionLowering, op: ir.Intrinsic, args):
    arr, base, *lanes = args
    k = len(lanes)
    _, per = _lanes_type(op.args[0].type.dtype)
    b = ctx.builder
    ptr = _vector_pointer(ctx, op, arr, base, k)
    vec = ll.Constant(ptr.type.pointee, ll.Undefined)
    for j, v in enumerate(lanes):
        parts = [v] if per == 1 else [b.extract_value(v, p) for p in range(per)]
        for p, part in enumerate(parts):
            vec = b.insert_element(vec, part, ll.Constant(ll.IntType(32), j * per + p))
    b.store(vec, ptr, align=ALIGN)
    return None


WIDE_INTRINSICS = {"wide.load": lower_wide_load, "wide.store": lower_wide_store}
