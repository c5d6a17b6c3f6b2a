"""Arrays and tuples: building array values, element addresses, indexing.

An array value is the struct ``{T* data, [n x i64] extents, [n x i64] byte
strides}`` (see ``lltypes``).  The element address depends on the layout
the type promises:

- 'C': row-major from the extents alone, ``i0*(n1*n2) + i1*n2 + i2`` elements, each
  index's constant part multiplied out (``addressing``: neighbouring accesses share
  one address); the passed strides are ignored, so LLVM sees a plain multiply-add it
  can strength-reduce and vectorise.  For a C-contiguous array the byte strides
  are exactly ``itemsize * prod(later extents)``, so both give one address.
- 'F': column-major likewise, ``i0 + i1*n0 + i2*(n0*n1)``.
- 'A': ``data + sum(i_k * stride_k)`` bytes, using the strides.

Negative indices count from the end (``i < 0 -> i + n`` per dimension, as
Python); there is no bounds check outside debug mode (``checks.py``).  Data pointers are generic
(address space 0)
and not ``noalias``: two array arguments may share memory.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen import addressing, checks
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import (
    ARRAY_DATA,
    ARRAY_SHAPE,
    ARRAY_STRIDES,
    I8,
    RECORD_POINTER,
    array_type,
    const_int,
    i64,
    memory_type,
    value_type,
)
from cujit.codegen.lltypes import (
    I64 as ARRAY_SHAPE_I64,
)
from cujit.types import Array, CharSeq, Record, Scalar, Tuple


def make_array(
    ctx: FunctionLowering, t: Array, data: ll.Value, shape: list[ll.Value], strides: list[ll.Value]
) -> ll.Value:
    """The array struct value from its parts."""
    b = ctx.builder
    v = ll.Constant(array_type(t), ll.Undefined)
    v = b.insert_value(v, data, ARRAY_DATA)
    for k, (n, s) in enumerate(zip(shape, strides, strict=True)):
        v = b.insert_value(v, n, [ARRAY_SHAPE, k])
        v = b.insert_value(v, s, [ARRAY_STRIDES, k])
    return v


def contiguous_strides(ctx: FunctionLowering, t: Array, shape: list[ll.Value]) -> list[ll.Value]:
    """Byte strides of a C- (row-major) or F-contiguous (column-major) array from its
    extents: what a kernel parameter of such a type leaves out (``abi.passes_strides``)."""
    order = list(range(t.ndim - 1, -1, -1) if t.layout == "C" else range(t.ndim))
    strides: list[ll.Value] = [i64(0)] * t.ndim
    step: ll.Value = i64(t.dtype.itemsize)
    for i, k in enumerate(order):
        if i:
            step = ctx.builder.mul(step, shape[order[i - 1]])
        strides[k] = step
    return strides


def c_strides(t: Array, shape: tuple[int, ...]) -> list[ll.Constant]:
    """Byte strides of a C-contiguous array with constant extents (row-major:
    the last dimension has stride ``itemsize``)."""
    strides = [t.dtype.itemsize]
    for n in reversed(shape[1:]):
        strides.insert(0, strides[0] * n)
    return [i64(s) for s in strides]


def extents(ctx: FunctionLowering, t: Array, arr: ll.Value) -> list[ll.Value]:
    return [ctx.builder.extract_value(arr, [ARRAY_SHAPE, k]) for k in range(t.ndim)]


def index_values(ctx: FunctionLowering, index: ir.Value) -> list[ll.Value]:
    """The per-dimension int64 indices of a GetItem/SetItem/atomic index operand."""
    if isinstance(index.type, Tuple):
        llv = ctx.get(index)
        return [ctx.builder.extract_value(llv, k) for k in range(len(index.type.items))]
    return [ctx.get(index)]


def element_pointer(
    ctx: FunctionLowering, t: Array, arr: ll.Value, indices: list[ll.Value], op: ir.Op | None = None
) -> ll.Value:
    """The address of ``arr[indices]`` (a pointer to the element's memory type); ``op``
    is the access, whose axes in ``ctx.unwrapped`` have indices that are never negative."""
    b = ctx.builder
    if len(indices) != t.ndim:
        raise AssertionError(f"{len(indices)} indices into a {t.ndim}-d array")
    # Extents are read only where needed: an extent a kernel never reads is not passed.
    needed = [
        t.layout == "C"
        and k > 0
        or t.layout == "F"
        and k < t.ndim - 1
        or (id(op), k) not in ctx.unwrapped
        for k in range(t.ndim)
    ]
    extents = arr
    if ctx.narrow is not None:  # the 32-bit index variant: the shape group's extents
        from cujit.codegen.narrow import extents_source

        extents = extents_source(ctx, op) or arr
    shape = [
        b.extract_value(extents, [ARRAY_SHAPE, k]) if need else None
        for k, need in enumerate(needed)
    ]
    # Python's negative indices: wrap once, per dimension.
    idx = [
        i
        if (id(op), k) in ctx.unwrapped
        else b.select(_negative(ctx, i, op, k), b.add(i, shape[k]), i)
        for k, i in enumerate(indices)
    ]
    checks.check_bounds(ctx, indices, idx, shape, op)  # debug mode only; else emits nothing
    data = b.extract_value(arr, ARRAY_DATA)
    if t.ndim == 0:
        return data
    if t.layout in ("C", "F"):
        return addressing.contiguous_pointer(b, data, t.layout, idx, shape)
    offset = None
    for k in range(t.ndim):
        term = b.mul(idx[k], b.extract_value(arr, [ARRAY_STRIDES, k]))
        offset = term if offset is None else b.add(offset, term)
    raw = b.bitcast(data, ll.PointerType(I8, data.type.addrspace))
    return b.bitcast(b.gep(raw, [offset]), data.type)


def _negative(ctx: FunctionLowering, i: ll.Value, op: ir.Op | None, axis: int) -> ll.Value:
    """``i < 0`` (``i``: axis ``axis``'s index of access ``op``); in the 32-bit index
    variant asked of the index's int32 form where it has one."""
    if ctx.narrow is not None:
        from cujit.codegen.narrow import is_negative

        asked = is_negative(ctx, op, axis)
        if asked is not None:
            return asked
    return ctx.builder.icmp_signed("<", i, i64(0))


def lower_global_array(ctx: FunctionLowering, op: ir.Intrinsic, args) -> ll.Value:
    """``global.array``: a device array read from a global or closure variable, by
    reference: its address, extents and strides are constants of the kernel."""
    return global_array_at(ctx, op, op.attr("array").address(ctx.target.name))


def global_array_at(ctx: FunctionLowering, op: ir.Intrinsic, address: int | None) -> ll.Value:
    """``global.array`` over its memory at ``address`` (None: memory this target cannot
    address, which is refused)."""
    from cujit.diagnostics import UnsupportedError

    g = op.attr("array")
    t: Array = op.result.type
    if address is None:
        where = "the CPU" if ctx.target.name == "cpu" else "the GPU"
        raise UnsupportedError(
            f"the global {type(g.array).__name__} lives in memory that "
            f"kernels on {where} cannot address",
            op.loc,
            hint="pass the array as a kernel argument",
        )
    ptr_type = ll.PointerType(memory_type(t.dtype))
    data = ll.Constant(ll.IntType(64), address).inttoptr(ptr_type)
    return make_array(ctx, t, data, [i64(n) for n in g.shape], [i64(s) for s in g.strides])


def load_scalar(ctx: FunctionLowering, t: Scalar, ptr: ll.Value) -> ll.Value:
    """Load an element; a stored bool byte becomes an i1 (any non-zero byte is True)."""
    v = ctx.builder.load(ptr, align=t.itemsize)
    if t.kind == "b":
        return ctx.builder.icmp_unsigned("!=", v, const_int(I8, 0))
    return v


def store_scalar(ctx: FunctionLowering, t: Scalar, ptr: ll.Value, v: ll.Value) -> None:
    """Store an element; an i1 bool is widened to a 0/1 byte.  A complex number is
    stored part by part: LLVM moves a whole-struct store of a loaded struct as integers
    (``ld/st.v2.u32``), the parts keep their float type (``ld/st.v2.f32``, as numba)."""
    b = ctx.builder
    if t.kind == "b":
        v = b.zext(v, I8)
    if t.kind == "c":
        zero = ll.Constant(ll.IntType(32), 0)
        for k, align in ((0, t.itemsize), (1, t.itemsize // 2)):
            part = b.gep(ptr, [zero, ll.Constant(ll.IntType(32), k)])
            b.store(b.extract_value(v, k), part, align=align)
        return
    b.store(v, ptr, align=t.itemsize)


def lower_getitem(ctx: FunctionLowering, op: ir.GetItem) -> None:
    t: Array = op.obj.type
    ptr = element_pointer(ctx, t, ctx.get(op.obj), index_values(ctx, op.index), op)
    if isinstance(t.dtype, (Record, CharSeq)):  # a reference to the element's bytes
        ctx.set(op.result, ctx.builder.bitcast(ptr, RECORD_POINTER))
        return
    ctx.set(op.result, load_scalar(ctx, t.dtype, ptr))


def lower_setitem(ctx: FunctionLowering, op: ir.SetItem) -> None:
    t: Array = op.obj.type
    ptr = element_pointer(ctx, t, ctx.get(op.obj), index_values(ctx, op.index), op)
    if isinstance(t.dtype, (Record, CharSeq)):  # a[i] = r copies the record's bytes
        b = ctx.builder
        move = ctx.module.declare_intrinsic(
            "llvm.memmove", [RECORD_POINTER, RECORD_POINTER, ARRAY_SHAPE_I64]
        )
        b.call(
            move,
            [
                b.bitcast(ptr, RECORD_POINTER),
                ctx.get(op.value),
                i64(t.dtype.size),
                ll.Constant(ll.IntType(1), 0),
            ],
        )
        return
    store_scalar(ctx, t.dtype, ptr, ctx.get(op.value))


def build_struct(ctx: FunctionLowering, t, items: list[ll.Value | None]) -> ll.Value:
    """A literal-struct value of type ``t`` (a Tuple); None items stay undef ``{}``."""
    v = ll.Constant(value_type(t), ll.Undefined)
    for k, item in enumerate(items):
        if item is not None:
            v = ctx.builder.insert_value(v, item, k)
    return v


def lower_build_tuple(ctx: FunctionLowering, op: ir.BuildTuple) -> None:
    items = [ctx.values[i.id] for i in op.items]
    ctx.set(op.result, build_struct(ctx, op.result.type, items))


def lower_tuple_get(ctx: FunctionLowering, op: ir.TupleGet) -> None:
    if value_type(op.result.type) is None:
        ctx.set(op.result, None)
        return
    ctx.set(op.result, ctx.builder.extract_value(ctx.get(op.tuple), op.index))
