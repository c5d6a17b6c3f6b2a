"""``array.slice``: a view of an array (layout 'A'), clipped as ``slice.indices`` clips.

Per source dimension of extent ``n`` and byte stride ``s``: an integer ``i`` (wrapped
once when negative) moves the data pointer by ``i * s`` and drops the dimension; a
slice with constant step ``k`` clips its start and stop to ``[0, n]`` (``k > 0``) or
``[-1, n - 1]`` (``k < 0``), moves the pointer by ``start * s`` and gives a dimension
of ``max(0, ceil((stop - start) / k))`` elements and stride ``s * k``.  The
attributes ``transpose`` (``a.T``: the dimensions reversed) and ``byte_offset`` with a
result of another element type (``a.imag`` of a complex array) make the other views.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import contiguous_strides, extents, make_array
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import ARRAY_DATA, ARRAY_STRIDES, I8, i64, memory_type
from cujit.types import Array


def _source_strides(ctx: FunctionLowering, t: Array, arr, shape) -> list:
    if t.layout == "A":
        return [ctx.builder.extract_value(arr, [ARRAY_STRIDES, k]) for k in range(t.ndim)]
    return contiguous_strides(ctx, t, shape)


def _clip(b: ll.IRBuilder, v, n, lo, hi):
    """A given slice bound: negative counts from the end, then clipped to [lo, hi]."""
    v = b.select(b.icmp_signed("<", v, i64(0)), b.add(v, n), v)
    v = b.select(b.icmp_signed("<", v, lo), lo, v)
    return b.select(b.icmp_signed(">", v, hi), hi, v)


def _slice_dim(b: ll.IRBuilder, n, spec, bounds):
    """(start, length) of one sliced dimension; ``bounds`` yields the given bounds."""
    _, has_start, has_stop, k = spec
    if k > 0:
        lo, hi = i64(0), n
        start = _clip(b, next(bounds), n, lo, hi) if has_start else lo
        stop = _clip(b, next(bounds), n, lo, hi) if has_stop else hi
        span, step = b.sub(stop, start), k
    else:
        lo, hi = i64(-1), b.sub(n, i64(1))
        start = _clip(b, next(bounds), n, lo, hi) if has_start else hi
        stop = _clip(b, next(bounds), n, lo, hi) if has_stop else lo
        span, step = b.sub(start, stop), -k
    count = b.sdiv(b.add(span, i64(step - 1)), i64(step))
    length = b.select(b.icmp_signed(">", span, i64(0)), count, i64(0))
    return start, length


def lower_array_slice(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    t: Array = op.args[0].type
    arr, operands = args[0], iter(args[1:])
    shape = extents(ctx, t, arr)
    strides = _source_strides(ctx, t, arr, shape)
    offset = i64(0)
    new_shape, new_strides = [], []
    for k, spec in enumerate(op.attr("spec")):
        if spec[0] == "i":
            i = next(operands)
            i = b.select(b.icmp_signed("<", i, i64(0)), b.add(i, shape[k]), i)
            offset = b.add(offset, b.mul(i, strides[k]))
            continue
        start, length = _slice_dim(b, shape[k], spec, operands)
        offset = b.add(offset, b.mul(start, strides[k]))
        new_shape.append(length)
        new_strides.append(b.mul(strides[k], i64(spec[3])))
    if op.attr("transpose"):
        new_shape, new_strides = new_shape[::-1], new_strides[::-1]
    offset = b.add(offset, i64(op.attr("byte_offset", 0)))  # a complex array's .imag
    data = b.extract_value(arr, ARRAY_DATA)
    raw = b.bitcast(data, ll.PointerType(I8, data.type.addrspace))
    elem = ll.PointerType(memory_type(op.result.type.dtype), data.type.addrspace)
    data = b.bitcast(b.gep(raw, [offset]), elem)
    return make_array(ctx, op.result.type, data, new_shape, new_strides)


def lower_array_view(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``array.view``: the source's data as a C-contiguous array of the result's element
    type and the given extents (``a.reshape(...)``, ``a.view(dtype)``)."""
    t: Array = op.result.type
    data = ctx.builder.extract_value(args[0], ARRAY_DATA)
    data = ctx.builder.bitcast(data, memory_type(t.dtype).as_pointer())
    shape = list(args[1:])
    return make_array(ctx, t, data, shape, contiguous_strides(ctx, t, shape))
