"""The 32-bit index variant's integer arithmetic (``Options(index32=True)``,
docs/index32.md).

The variant runs only where its launch checked that every array argument holds
1..``abi.INDEX32_LIMIT`` elements and the grid spans at most that many threads along
each axis (``cujit.index_width``).  Under those facts the value ranges of
``params.value_ranges(fn, limit)`` are tighter: an argument's extents and size lie in
``[1, limit]``, ``cuda.grid``'s values in ``[0, limit - 1]``.

An int64 ``+``, ``-`` or ``*`` whose operands and result all lie within int32 has the
value of its int32 form, sign-extended; an int64 comparison of two such values gives
the answer of the int32 comparison; ``//`` and ``%`` of such values (the dividend above
int32's minimum, so no quotient overflows) give the int32 result.  So lowering keeps
each int64 sum or product as written (element addresses use it, and LLVM folds its
constant part into the access) and makes an int32 form beside it (``nsw``: it cannot
wrap); comparisons, divisions, conversions to float and the negative-index wrap of an
element access read the int32 forms, the wrap so that LLVM sees it decided by the
guards the kernel wrote.  A GPU compares, adds and divides 32-bit integers in one
instruction where 64-bit ones take two or more; forms nothing reads, LLVM drops.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.abi import shape_groups
from cujit.codegen.lltypes import I32, I64
from cujit.codegen.params import value_ranges
from cujit.types import Scalar, int64

_INT32 = (-(2**31), 2**31 - 1)
_MIN_COMPARES = 3


class Narrowing:
    """The int32 forms of one kernel's int64 values under the variant's facts."""

    def __init__(self, fn: ir.Function, limit: int):
        self.ranges = value_ranges(fn, limit)
        self.forms: dict[int, ll.Value] = {}  # value id -> its int32 form, where made
        # array argument id -> the first argument of its shape group (abi.shape_groups),
        # whose extents its element addresses read: the launch checked them equal.
        self.extents_of: dict[int, ir.Value] = {}
        for group in shape_groups([p.type for p in fn.args]):
            for pos in group[1:]:
                self.extents_of[fn.args[pos].id] = fn.args[group[0]]

    def fits(self, v: ir.Value) -> bool:
        """Whether int64 value ``v`` lies within int32 under the variant's facts."""
        return _within(self.ranges, v)

    def form(self, ctx, v: ir.Value) -> ll.Value:
        """``v``'s int32 form (``fits(v)`` holds): the one made beside it, else its
        truncation here (LLVM narrows the arithmetic a truncation reads)."""
        made = self.forms.get(v.id)
        if made is not None:
            return made
        value = ctx.get(v)
        if isinstance(value, ll.Constant):
            return ll.Constant(I32, value.constant)
        return ctx.builder.trunc(value, I32)


def binop_form(ctx, op: ir.BinOp) -> None:
    """Beside int64 ``op`` (``+``, ``-``, ``*``; lowered already), its int32 form,
    where its operands and result fit (``nsw``: it cannot wrap)."""
    n: Narrowing | None = ctx.narrow
    if n is None or op.op not in ("+", "-", "*") or not _all_fit(n, op.result, op.lhs, op.rhs):
        return
    a, b = n.form(ctx, op.lhs), n.form(ctx, op.rhs)
    method = {"+": "add", "-": "sub", "*": "mul"}[op.op]
    n.forms[op.result.id] = getattr(ctx.builder, method)(a, b, flags=("nsw",))


def is_negative(ctx, access: ir.Op | None, axis: int) -> ll.Value | None:
    """``index < 0`` for axis ``axis`` of element access ``access``, asked of the index's
    int32 form where it has one (the wrap of negative indices then reads the same int32
    value the kernel's guards compared, so LLVM sees it decided by them)."""
    n: Narrowing | None = ctx.narrow
    index = getattr(access, "index", None)
    if n is None or index is None:
        return None
    made = n.ranges.defs.get(index.id)
    if isinstance(made, ir.BuildTuple):
        index = made.items[axis] if axis < len(made.items) else None
    elif axis:
        index = None
    form = n.forms.get(index.id) if index is not None else None
    if form is None:
        return None
    return ctx.builder.icmp_signed("<", form, ll.Constant(I32, 0))


def compare_operands(ctx, op: ir.Compare) -> tuple[ll.Value, ll.Value] | None:
    """The int32 forms of an int64 comparison's operands, where both fit."""
    n: Narrowing | None = ctx.narrow
    if n is None or not _all_fit(n, op.lhs, op.rhs):
        return None
    return n.form(ctx, op.lhs), n.form(ctx, op.rhs)


def division(ctx, op: ir.BinOp, lower) -> ll.Value | None:
    """Int64 ``//`` or ``%`` computed in int32 (``lower(t, a, b)``: Python's meaning for
    type ``t``) and sign-extended, where both operands fit and no quotient overflows."""
    n: Narrowing | None = ctx.narrow
    if n is None or op.op not in ("//", "%") or not _all_fit(n, op.lhs, op.rhs):
        return None
    if n.ranges.range(op.lhs)[0] == _INT32[0]:
        return None  # INT32_MIN // -1 would overflow int32
    from cujit.types import int32

    out = lower(int32, n.form(ctx, op.lhs), n.form(ctx, op.rhs))
    n.forms[op.result.id] = out
    return ctx.builder.sext(out, I64)


def float_operand(ctx, src: Scalar, dst: Scalar, v: ir.Value) -> ll.Value | None:
    """An int64 value's int32 form for a conversion to float, where it fits."""
    n: Narrowing | None = ctx.narrow
    if n is None or dst.kind != "f" or src != int64 or not n.fits(v):
        return None
    return n.form(ctx, v)


def extents_source(ctx, access: ir.Op | None) -> ll.Value | None:
    """The array whose extents element access ``access`` may read instead of its own
    (the first of its shape group), or None."""
    n: Narrowing | None = ctx.narrow
    obj = getattr(access, "obj", None)
    first = n.extents_of.get(obj.id) if n is not None and obj is not None else None
    return ctx.get(first) if first is not None else None


def _all_fit(n: Narrowing, *values: ir.Value) -> bool:
    return all(n.fits(v) for v in values)


def worth_narrowing(fn: ir.Function, limit: int) -> bool:
    """Whether the variant's facts let kernel ``fn`` compare or divide enough int64 values
    in int32 that it cannot without them to pay for a second compile: a division, or
    ``_MIN_COMPARES`` comparisons (a lone bounds check ``i < n`` saves one instruction)."""
    divisions = [op for op in fn.all_ops() if isinstance(op, ir.BinOp) and op.op in ("//", "%")]
    compared = [op for op in fn.all_ops() if isinstance(op, ir.Compare)]
    if not divisions and len(compared) < _MIN_COMPARES:
        return False  # too few to pay, whatever the ranges: neither analysis runs
    facts, plain = value_ranges(fn, limit), value_ranges(fn)
    compares = 0
    for op in divisions + compared:
        division = isinstance(op, ir.BinOp) and op.op in ("//", "%")
        pair = (op.lhs, op.rhs)
        if all(_within(facts, v) for v in pair) and not all(_within(plain, v) for v in pair):
            if division:
                return True
            compares += 1
    return compares >= _MIN_COMPARES


def _within(ranges, v: ir.Value) -> bool:
    if v.type != int64:
        return False
    lo, hi = ranges.range(v)
    return lo is not None and hi is not None and _INT32[0] <= lo and hi <= _INT32[1]
