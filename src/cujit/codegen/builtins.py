"""Lowering of the target-independent intrinsics: ``abs``, ``min``, ``max``,
``range``, ``array.shape``, ``array.size``, ``local.array`` and ``math.*``.

Each function has the intrinsic-table signature ``lower(ctx, op, args)``
(``args`` are the LLVM values of ``op.args``) and returns the result's LLVM value,
or None for an intrinsic without one.  Targets list them in their tables.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen import half
from cujit.codegen.arrays import build_struct, c_strides, lower_global_array, make_array
from cujit.codegen.bits import BIT_INTRINSICS
from cujit.codegen.context import FunctionLowering
from cujit.codegen.datetimes import DATETIME_INTRINSICS
from cujit.codegen.extension import EXTENSION_INTRINSICS
from cujit.codegen.lltypes import (
    ARRAY_DATA,
    ARRAY_SHAPE,
    I64,
    RANGE_STRUCT,
    const_int,
    i64,
    memory_type,
    scalar_type,
    value_type,
)
from cujit.codegen.pointers import POINTER_INTRINSICS
from cujit.codegen.records import RECORD_INTRINSICS
from cujit.codegen.scalars import compare
from cujit.codegen.slicing import lower_array_slice, lower_array_view
from cujit.codegen.wide import WIDE_INTRINSICS
from cujit.ir import intrinsics
from cujit.types import Array, Record, Scalar


def lower_abs(ctx: FunctionLowering, op: ir.Intrinsic, args):
    (x,) = args
    t: Scalar = op.result.type
    if t.kind == "f":
        native = half.absolute(ctx, t, x) if t.bits == 16 and t.name == "float16" else None
        return native if native is not None else ctx.call_math("fabs", t, [x])
    if t.kind == "u":
        return x
    b = ctx.builder
    # abs(INT_MIN) wraps to INT_MIN, as NumPy.
    return b.select(b.icmp_signed("<", x, const_int(x.type, 0)), b.sub(const_int(x.type, 0), x), x)


def _float_min_max(ctx: FunctionLowering, which: str, t: Scalar, a, b, zeros: bool):
    """numba's min/max of two float32 or float64 numbers: C's fmin/fmax (LLVM's
    minnum/maxnum, which libNVVM makes PTX's min/max.f32/f64), whose NaN operand loses
    to a number: max(nan, 1.0) and max(1.0, nan) are both 1.0.  PTX's min/max also
    take -0.0 as below +0.0; minnum leaves two zeros to the backend (x86's minss gives
    its second operand), so with ``zeros`` two equal operands give their bits or'd
    (min: -0.0 if either is) or and'ed (max: +0.0 if either is)."""
    ty = scalar_type(t)
    f = ctx.module.declare_intrinsic(f"llvm.{which}num", [ty], ll.FunctionType(ty, [ty, ty]))
    b_ = ctx.builder
    r = b_.call(f, [a, b])
    if not zeros:
        return r
    bits = ll.IntType(t.bits)
    x, y = b_.bitcast(a, bits), b_.bitcast(b, bits)
    tie = b_.bitcast(b_.or_(x, y) if which == "min" else b_.and_(x, y), ty)
    return b_.select(b_.fcmp_ordered("==", a, b), tie, r)


def min_max_lowerings(zeros: bool) -> dict:
    """The ``min`` and ``max`` intrinsics, floats through ``_float_min_max(zeros)``.
    Other types take Python's rule: min(a, b) is ``b if b < a else a``, max(a, b)
    ``b if b > a else a`` (a tie keeps a)."""

    def lowering(which: str, relation: str):
        def lower(ctx: FunctionLowering, op: ir.Intrinsic, args):
            a, b = args
            t: Scalar = op.result.type
            if t.kind == "f" and t.bits in (32, 64):
                return _float_min_max(ctx, which, t, a, b, zeros)
            return ctx.builder.select(compare(ctx, t, relation, b, a), b, a)

        return lower

    return {"min": lowering("min", "<"), "max": lowering("max", ">")}


def lower_range(ctx: FunctionLowering, op: ir.Intrinsic, args):
    start, stop, step = args
    v = ll.Constant(RANGE_STRUCT, ll.Undefined)
    for k, part in enumerate((start, stop, step)):
        v = ctx.builder.insert_value(v, part, k)
    return v


def lower_array_shape(ctx: FunctionLowering, op: ir.Intrinsic, args):
    (arr,) = args
    t: Array = op.args[0].type
    dims = [ctx.builder.extract_value(arr, [ARRAY_SHAPE, k]) for k in range(t.ndim)]
    return build_struct(ctx, op.result.type, dims)


def lower_array_size(ctx: FunctionLowering, op: ir.Intrinsic, args):
    (arr,) = args
    t: Array = op.args[0].type
    size = None
    for k in range(t.ndim):
        n = ctx.builder.extract_value(arr, [ARRAY_SHAPE, k])
        size = n if size is None else ctx.builder.mul(size, n)
    return i64(1) if size is None else size


def lower_array_address(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``a.ctypes.data``: the address of the array's first element, as a uint64."""
    (arr,) = args
    return ctx.builder.ptrtoint(ctx.builder.extract_value(arr, ARRAY_DATA), I64)


def lower_local_array(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.local.array``: a per-thread array, an alloca in the entry block.

    NVVM places allocas in the ``.local`` state space (NVVM IR spec, "Address
    Spaces": allocas are in the generic space, backed by local memory); after
    optimisation small ones live in registers.  The alloca is named as numba names it
    (``_cudapy_lmem``) and states an alignment only where ``alignment=`` asks for one
    (never less than its elements need): otherwise its type carries what its elements'
    accesses assume (``local_slot_type``).
    """
    t: Array = op.result.type
    shape = tuple(op.attr("shape"))
    count = 1
    for n in shape:
        count *= n
    align = op.attr("alignment")
    if align is not None:
        align = max(align, access_alignment(t.dtype))
    slot = ctx.alloca(local_slot_type(t.dtype, count), align=align, name="_cudapy_lmem")
    data = ctx.builder.bitcast(slot, ll.PointerType(memory_type(t.dtype)))
    return make_array(ctx, t, data, [i64(n) for n in shape], c_strides(t, shape))


def access_alignment(dtype) -> int:
    """The alignment loads and stores of an array element promise: a scalar's size (a
    complex number's whole size), a record's ``alignment``, a string's size's low bit;
    at most 16."""
    if isinstance(dtype, Record):
        return dtype.alignment
    size = dtype.itemsize
    return max(1, min(size & -size, 16))


def local_slot_type(dtype, count: int) -> ll.Type:
    """The type of a slot for ``count`` elements whose ABI alignment is their
    ``access_alignment``: a scalar's own type, except a complex number (a struct only
    as aligned as its parts) and a record or a string (bytes): those are held as
    integers as wide as that alignment."""
    if isinstance(dtype, Scalar) and dtype.kind != "c":
        return ll.ArrayType(memory_type(dtype), count)
    size = dtype.itemsize if isinstance(dtype, Scalar) else dtype.size
    align = access_alignment(dtype)
    return ll.ArrayType(ll.IntType(8 * align), count * size // align)


def lower_math(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``math.<f>(x[, y])`` through the target's math table."""
    name = op.name.split(".", 1)[1]
    return ctx.call_math(name, op.result.type, list(args))


def lower_float_class(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``math.isnan``/``isinf``/``isfinite`` as float compares (no library call)."""
    (x,) = args
    b = ctx.builder
    if op.name == "math.isnan":
        return b.fcmp_unordered("uno", x, x)
    inf = ll.Constant(x.type, float("inf"))
    magnitude = ctx.call_math("fabs", op.args[0].type, [x])
    if op.name == "math.isinf":
        return b.fcmp_ordered("==", magnitude, inf)
    return b.fcmp_ordered("<", magnitude, inf)  # isfinite: false for inf and nan


_GRID_AXES = ("x", "y", "z")
# nuw/nsw hold by CUDA's limits (gridDim < 2**31, blockDim <= 1024), which every target
# enforces at launch: the index is then known non-negative, and LLVM drops the
# negative-index wrapping of the accesses it feeds.
_NO_WRAP = ("nuw", "nsw")


def grid_lowerings(read):
    """``cuda.grid`` and ``cuda.gridsize`` for a target whose ``read(ctx, register, axis)``
    gives ``threadIdx``/``blockIdx``/``blockDim``/``gridDim`` along ``axis`` as an i32.
    Both compute in int64, so large grids cannot overflow."""

    def per_axis(ctx: FunctionLowering, op: ir.Intrinsic, one_axis):
        ndim = op.attr("ndim")
        values = [one_axis(axis) for axis in _GRID_AXES[:ndim]]
        if ndim == 1:
            return values[0]
        v = ll.Constant(value_type(op.result.type), ll.Undefined)
        for k, x in enumerate(values):
            v = ctx.builder.insert_value(v, x, k)
        return v

    def lower_grid(ctx: FunctionLowering, op: ir.Intrinsic, args):
        b = ctx.builder

        def axis(a: str) -> ll.Value:  # blockIdx * blockDim + threadIdx
            ctaid, ntid, tid = (
                b.zext(read(ctx, r, a), I64) for r in ("blockIdx", "blockDim", "threadIdx")
            )
            return b.add(b.mul(ctaid, ntid, flags=_NO_WRAP), tid, flags=_NO_WRAP)

        return per_axis(ctx, op, axis)

    def lower_gridsize(ctx: FunctionLowering, op: ir.Intrinsic, args):
        b = ctx.builder

        def axis(a: str) -> ll.Value:  # blockDim * gridDim
            ntid, nctaid = (b.zext(read(ctx, r, a), I64) for r in ("blockDim", "gridDim"))
            return b.mul(ntid, nctaid, flags=_NO_WRAP)

        return per_axis(ctx, op, axis)

    return lower_grid, lower_gridsize


# The intrinsics every target lowers the same way (a target's table spreads this in).
# The math functions lowered through the target's math table (``Target.math``): a
# target without an entry for one says so at the call's line (``call_math``).
MATH_FUNCTIONS = intrinsics.MATH_UNARY + intrinsics.MATH_BINARY  # the table's names


def lower_this_grid(ctx, op, args) -> None:
    """``cuda.this_grid``: nothing to emit; the kernel is marked cooperative from it."""


COMMON_INTRINSICS = {
    "cuda.this_grid": lower_this_grid,
    **RECORD_INTRINSICS,
    **EXTENSION_INTRINSICS,
    **POINTER_INTRINSICS,
    **DATETIME_INTRINSICS,
    **{f"math.{f}": lower_math for f in MATH_FUNCTIONS},
    **BIT_INTRINSICS,
    "cuda.cbrt": lower_math,  # ("cbrt", float type) in the target's math table
    "local.array": lower_local_array,
    "global.array": lower_global_array,
    "array.shape": lower_array_shape,
    "array.size": lower_array_size,
    "array.address": lower_array_address,
    "array.slice": lower_array_slice,
    "array.view": lower_array_view,
    "abs": lower_abs,
    **min_max_lowerings(zeros=False),  # PTX's min/max order zeros (targets/cpu: its own)
    "range": lower_range,
    "math.isnan": lower_float_class,
    "math.isinf": lower_float_class,
    "math.isfinite": lower_float_class,
    **WIDE_INTRINSICS,
    "enum.convert": lambda ctx, op, args: args[0],  # a run-time enum member is its value
}
