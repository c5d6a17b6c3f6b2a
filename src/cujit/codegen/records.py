"""Records (structured dtypes): field addresses, loads, stores and copies.

A record value is an ``i8*`` to its bytes (``lltypes``); a field is at its NumPy byte
offset.  Loads and stores promise only the alignment the offset and the record's size
keep (``types.field_alignment``): a packed record's fields may sit at any byte, and
an element of a record array at any multiple of the itemsize.  On the GPU a field whose
offset its type's alignment does not divide is refused, as numba refuses it.  Whole
records are copied with ``llvm.memmove`` (``a[i] = a[j]`` may copy a record onto itself).
"""

from __future__ import annotations

import itertools

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import c_strides, element_pointer, make_array
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I1, I8, I64, RECORD_POINTER, const_int, i64, memory_type
from cujit.codegen.scalars import cast
from cujit.diagnostics import TypingError
from cujit.types import Array, CharSeq, Record, Scalar, field_alignment


def natural_alignment(t) -> int:
    """A scalar's alignment in memory (a complex number's: its parts')."""
    if isinstance(t, Scalar):
        return t.part_type.itemsize if t.kind == "c" else t.itemsize
    return 1


def field_pointer(ctx: FunctionLowering, rec: ll.Value, offset: int, elem: ll.Type) -> ll.Value:
    """The address of the field at byte ``offset`` of record ``rec``, as an ``elem*``."""
    b = ctx.builder
    raw = b.gep(rec, [i64(offset)]) if offset else rec
    return b.bitcast(raw, ll.PointerType(elem))


def load_field(ctx: FunctionLowering, t: Scalar, ptr: ll.Value, align: int) -> ll.Value:
    v = ctx.builder.load(ptr, align=align)
    return ctx.builder.icmp_unsigned("!=", v, const_int(I8, 0)) if t.kind == "b" else v


def store_field(ctx: FunctionLowering, t: Scalar, ptr: ll.Value, v: ll.Value, align: int) -> None:
    if t.kind == "b":
        v = ctx.builder.zext(v, I8)
    ctx.builder.store(v, ptr, align=align)


def copy_record(ctx: FunctionLowering, dst: ll.Value, src: ll.Value, rec: Record | CharSeq) -> None:
    """Copy ``rec.size`` bytes from record ``src`` to record ``dst`` (i8 pointers)."""
    b = ctx.builder
    move = ctx.module.declare_intrinsic("llvm.memmove", [RECORD_POINTER, RECORD_POINTER, I64])
    b.call(
        move,
        [
            b.bitcast(dst, RECORD_POINTER),
            b.bitcast(src, RECORD_POINTER),
            i64(rec.size),
            ll.Constant(I1, 0),
        ],
    )


def record_of_element(ctx: FunctionLowering, ptr: ll.Value) -> ll.Value:
    """The record value of an element address (a ``[size x i8]*``)."""
    return ctx.builder.bitcast(ptr, RECORD_POINTER)


def check_aligned(ctx: FunctionLowering, op: ir.Intrinsic, t) -> None:
    """numba's rule on the GPU: a field whose offset its type's alignment does not divide
    is refused.  The CPU target, which could read it at any offset, refuses it too: a
    kernel it runs is one a GPU runs."""
    offset = op.attr("offset")
    if offset % natural_alignment(t):
        raise TypingError(
            f"field '{op.attr('field')}' of type {t} is not aligned: it is at "
            f"offset {offset} of {op.args[0].type}",
            op.loc,
            hint="build the dtype with np.dtype(..., align=True)",
        )


def lower_record_get(ctx: FunctionLowering, op: ir.Intrinsic, args):
    rec: Record = op.args[0].type
    t: Scalar = op.result.type
    offset = op.attr("offset")
    check_aligned(ctx, op, t)
    ptr = field_pointer(ctx, args[0], offset, memory_type(t))
    return load_field(ctx, t, ptr, field_alignment(rec, offset, natural_alignment(t)))


def lower_record_view(ctx: FunctionLowering, op: ir.Intrinsic, args):
    offset = op.attr("offset")
    t = op.result.type
    if isinstance(t, Array):
        check_aligned(ctx, op, t.dtype)
    if not isinstance(t, Array):  # a nested record or string: its address
        return ctx.builder.gep(args[0], [i64(offset)]) if offset else args[0]
    shape = op.attr("shape")
    data = field_pointer(ctx, args[0], offset, memory_type(t.dtype))
    return make_array(ctx, t, data, [i64(n) for n in shape], c_strides(t, shape))


def lower_record_set(ctx: FunctionLowering, op: ir.Intrinsic, args):
    rec: Record = op.args[0].type
    t = op.args[1].type
    offset = op.attr("offset")
    if isinstance(t, (Record, CharSeq)):
        dst = ctx.builder.gep(args[0], [i64(offset)]) if offset else args[0]
        copy_record(ctx, dst, args[1], t)
        return
    check_aligned(ctx, op, t)
    ptr = field_pointer(ctx, args[0], offset, memory_type(t))
    store_field(ctx, t, ptr, args[1], field_alignment(rec, offset, natural_alignment(t)))
    return


def lower_assign_array(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """Every element of an array field from the same element of an array (or from one
    scalar), unrolled: a field's shape is a constant of the record."""
    dest_t: Array = op.args[0].type
    src_v = op.args[1]
    shape, align = op.attr("shape"), op.attr("align")
    for index in itertools.product(*(range(n) for n in shape)):
        idx = [i64(k) for k in index]
        dst = element_pointer(ctx, dest_t, args[0], idx)
        if isinstance(src_v.type, Array):
            src_t: Array = src_v.type
            sp = element_pointer(ctx, src_t, args[1], idx)
            value = load_field(ctx, src_t.dtype, sp, natural_alignment(src_t.dtype))
            value = cast(ctx, src_t.dtype, dest_t.dtype, value)
        else:
            value = args[1]
        store_field(ctx, dest_t.dtype, dst, value, align)


def lower_chars_set(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """A constant string's bytes (already padded to the type's size) stored whole."""
    data = bytes(op.attr("data"))
    ty = ll.ArrayType(I8, len(data))
    ptr = ctx.builder.bitcast(args[0], ll.PointerType(ty))
    ctx.builder.store(ll.Constant(ty, bytearray(data)), ptr, align=1)


RECORD_INTRINSICS = {
    "chars.set": lower_chars_set,
    "record.get": lower_record_get,
    "record.view": lower_record_view,
    "record.set": lower_record_set,
    "record.assign_array": lower_assign_array,
}
