"""Which of a kernel's flat parameters its code reads, decided on the typed IR.

The ABI (``cujit.abi``) gives an array argument its data pointer and every extent
(and, for layout 'A', its strides); much of that is never needed.  An extent is
read only by

- ``x.size`` and ``x.shape`` (``array.size``, ``array.shape``);
- an element address: a C array's address multiplies by every extent but the
  first (an F array's: every extent but the last), and Python's negative-index
  wrap ``i < 0 ? i + n : i`` reads axis ``k``'s extent unless the index on that
  axis is known to be non-negative;
- anything this module does not see through: the array passed to a device
  function, put in a tuple, passed along a block edge, or given to any other op.

Strides of a layout-'A' array are read by every element address.  A scalar is read
when anything uses it; a tuple argument's items are told apart through ``TupleGet``.
Debug builds read everything (bounds checks and debug info need the extents).

``read_params`` answers with a ``ParamUse``: the ``passed`` mask (one bool per flat
parameter, ``abi.flat_param_kinds``) that becomes the kernel's ``LaunchRecord.passed``,
and the (op, axis) pairs whose wrap lowering leaves out (of any array's accesses: a
shared or local array's too, though its extents are no parameters).  Stage 6 declares exactly
the passed parameters (``codegen.module``) and emits no wrap for those pairs
(``arrays.element_pointer``), so the kernel reads nothing it was not given.
Non-negativity comes from value ranges (``index_ranges``): constants, the special
registers' ranges (``ir.analysis.SPECIAL_REGISTER_RANGES``), ``cuda.grid``,
contiguous arrays' extents, ``range()`` loop values, casts, ``+``, ``-`` and ``*``,
and ``//``, ``%`` and ``&`` by a positive constant;
a value whose range leaves its type's (it could wrap) is unbounded.
"""

from __future__ import annotations

from cujit import ir
from cujit.abi import param_kinds, passes_strides, shape_groups
from cujit.frozen import frozen
from cujit.ir.analysis import MAX_CONTIGUOUS_EXTENT, SPECIAL_REGISTER_RANGES
from cujit.types import Array, Scalar, Tuple

_UNBOUNDED = (None, None)
_CYCLE = object()  # _Ranges._range_op: a loop's back edge, which adds no range of its own


@frozen
class ParamUse:
    """``passed``: per flat parameter, is it read?  ``unwrapped``: ``(id(op), axis)``
    of the kernel's element accesses whose index on ``axis`` is never negative.
    ``step_signs``: ``(id(op), sign)`` of the kernel's ``IterValid`` ops whose range's
    step is known to be positive (1) or negative (-1)."""

    passed: tuple[bool, ...]
    unwrapped: frozenset[tuple[int, int]] = frozenset()
    step_signs: frozenset[tuple[int, int]] = frozenset()


def value_ranges(fn: ir.Function, limit: int = 0) -> _Ranges:
    """The integer value ranges of ``fn`` (``range(v)``: ``(lo, hi)``, None unbounded);
    ``limit``: under the 32-bit index variant's launch facts (``abi.INDEX32_LIMIT``)."""
    return _Ranges(fn, limit)


def read_params(fn: ir.Function, debug: bool = False, index32: bool = False) -> ParamUse:
    """The parameters kernel ``fn`` reads, and the wraps it can leave out; ``index32``:
    the 32-bit index variant, whose element addresses of a shape group's arrays read
    the first member's extents (``abi.shape_groups``): it takes every member's."""
    total = sum(len(param_kinds(p.type)) for p in fn.args)
    if debug:
        return ParamUse((True,) * total)
    uses = _uses(fn)
    ranges = _Ranges(fn)
    unwrapped: set[tuple[int, int]] = set()
    passed: list[bool] = []
    starts: list[int] = []
    for p in fn.args:
        starts.append(len(passed))
        passed += _leaf_reads(p, p.type, uses, ranges, unwrapped)
    _other_arrays(fn, {p.id for p in fn.args}, ranges, unwrapped)
    if index32:
        for group in shape_groups([p.type for p in fn.args]):
            for pos in group:
                first = starts[pos] + 1  # the data pointer, then the extents
                passed[first : first + fn.args[pos].type.ndim] = [True] * fn.args[pos].type.ndim
    return ParamUse(tuple(passed), frozenset(unwrapped), _step_signs(fn, ranges))


def _step_signs(fn: ir.Function, ranges: _Ranges) -> frozenset[tuple[int, int]]:
    """``ParamUse.step_signs``: a loop's test then reads only ``next`` against ``stop``
    (one comparison where an unknown step's two directions take seven instructions)."""
    out = set()
    for op in fn.all_ops():
        if isinstance(op, ir.IterValid):
            rng = ranges._range_op(op.iter, frozenset())
            if isinstance(rng, ir.Intrinsic) and len(rng.args) == 3:
                lo, hi = ranges.range(rng.args[2])
                if lo is not None and lo > 0:
                    out.add((id(op), 1))
                elif hi is not None and hi < 0:
                    out.add((id(op), -1))
    return frozenset(out)


def _other_arrays(fn: ir.Function, args: set[int], ranges, unwrapped: set) -> None:
    """The unwrapped axes of element accesses of arrays that are not arguments (shared,
    local and const arrays, views): their extents are no parameters, but a wrap left
    out is instructions stage 6 need not build."""
    for op in fn.all_ops():
        if isinstance(op, (ir.GetItem, ir.SetItem)):
            arr = op.obj
        elif isinstance(op, ir.Intrinsic) and op.name.startswith("atomic.") and op.args:
            arr = op.args[0]
        else:
            continue
        if arr.id in args or not isinstance(arr.type, Array):
            continue
        index = _element_index(op, arr)
        if index is None:
            continue
        for axis, known in enumerate(_nonnegative_axes(index, arr.type.ndim, ranges)):
            if known:
                unwrapped.add((id(op), axis))


def _uses(fn: ir.Function) -> dict[int, list]:
    """Value id -> the ops (and terminators) that read it."""
    out: dict[int, list] = {}
    for op in fn.all_ops():
        for v in _read_values(op):
            out.setdefault(v.id, []).append(op)
    return out


def _read_values(op) -> list[ir.Value]:
    if isinstance(op, ir.Terminator):
        vals = list(ir.operands(op))
        for _, args in op.successors():
            vals += list(args)
        return vals
    return list(ir.operands(op))


def _leaf_reads(v: ir.Value, t, uses, ranges, unwrapped) -> list[bool]:
    """The read flags of the flat parameters of ``v`` (an argument or a tuple item)."""
    users = uses.get(v.id, [])
    if isinstance(t, Tuple):
        if any(not (isinstance(u, ir.TupleGet) and u.tuple.id == v.id) for u in users):
            return [True] * len(param_kinds(t))  # the whole tuple goes somewhere: all of it
        out: list[bool] = []
        for k, item in enumerate(t.items):
            gets = [u for u in users if u.index == k]
            flags = [False] * len(param_kinds(item))
            for g in gets:
                flags = [
                    a or b
                    for a, b in zip(
                        flags, _leaf_reads(g.result, item, uses, ranges, unwrapped), strict=True
                    )
                ]
            out += flags
        return out
    if isinstance(t, Array):
        return _array_reads(v, t, users, ranges, unwrapped)
    return [bool(users)] * len(param_kinds(t))


def _array_reads(v: ir.Value, t: Array, users, ranges, unwrapped) -> list[bool]:
    n = t.ndim
    data, shape = False, [False] * n
    strides = passes_strides(t)
    read_strides = False
    for u in users:
        index = _element_index(u, v)
        if index is None:
            if (
                isinstance(u, ir.Intrinsic)
                and u.name in ("array.size", "array.shape")
                and len(u.args) == 1
            ):
                shape = [True] * n
                continue
            return [True] * len(param_kinds(t))  # an op this module does not see through
        data = True
        read_strides = read_strides or (strides and n > 0)
        for axis, known in enumerate(_nonnegative_axes(index, n, ranges)):
            if known:
                unwrapped.add((id(u), axis))
            else:
                shape[axis] = True
        if t.layout == "C":
            shape[1:] = [True] * (n - 1)
        elif t.layout == "F":
            shape[:-1] = [True] * (n - 1)
    return [data, *shape] + ([read_strides] * n if strides else [])


def _element_index(op, arr: ir.Value) -> ir.Value | None:
    """The index of an element access of ``arr`` by ``op`` (only as the array accessed:
    an array stored as a value, or used as an index, is something else)."""
    if (
        isinstance(op, (ir.GetItem, ir.SetItem))
        and op.obj.id == arr.id
        and op.index.id != arr.id
        and not (isinstance(op, ir.SetItem) and op.value.id == arr.id)
    ):
        return op.index
    if (
        isinstance(op, ir.Intrinsic)
        and op.name.startswith("atomic.")
        and len(op.args) >= 2
        and op.args[0].id == arr.id
        and all(a.id != arr.id for a in op.args[1:])
    ):
        return op.args[1]
    return None


def _nonnegative_axes(index: ir.Value, ndim: int, ranges: _Ranges) -> list[bool]:
    """Per axis of an element access: is its index never negative?"""
    if not isinstance(index.type, Tuple):
        return [ranges.nonnegative(index)] if ndim == 1 else [False] * ndim
    parts = ranges.tuple_items(index)
    if parts is None or len(parts) != ndim:
        return [False] * ndim
    return [r[0] is not None and r[0] >= 0 for r in parts]


class _Ranges:
    """Integer value ranges ``(lo, hi)`` (None: unbounded) over one function's values."""

    def __init__(self, fn: ir.Function, limit: int = 0):
        self.defs = {op.result.id: op for op in fn.all_ops() if op.result is not None}
        # The 32-bit index variant's launch facts (``abi.INDEX32_LIMIT``; 0: none): every
        # array argument has 1..limit elements, the grid at most limit threads per axis.
        self.limit = limit
        self.arrays = frozenset(p.id for p in fn.args) if limit else frozenset()
        self.incoming: dict[int, list] = {}  # block parameter id -> the values passed to it
        for b in fn.blocks:
            for target, args in b.term.successors():
                for param, arg in zip(fn.block(target).params, args, strict=False):
                    self.incoming.setdefault(param.id, []).append(arg)
        self.memo: dict[int, tuple] = {}

    def nonnegative(self, v: ir.Value) -> bool:
        lo = self.range(v)[0]
        return lo is not None and lo >= 0

    def range(self, v: ir.Value) -> tuple:
        if v.id not in self.memo:
            self.memo[v.id] = _UNBOUNDED  # a cycle through block parameters: unbounded
            op = self.defs.get(v.id)
            r = self._op_range(op) if op is not None else _UNBOUNDED
            self.memo[v.id] = _clip(v.type, r)
        return self.memo[v.id]

    def tuple_items(self, v: ir.Value) -> list[tuple] | None:
        """The ranges of a tuple value's items, where its making is known."""
        op = self.defs.get(v.id)
        if isinstance(op, ir.BuildTuple):
            return [self.range(i) if _is_int(i.type) else _UNBOUNDED for i in op.items]
        if isinstance(op, ir.Intrinsic) and op.name == "cuda.grid":
            if self.limit:
                return [(0, self.limit - 1)] * op.attr("ndim")
            return [_grid_axis(k) for k in range(op.attr("ndim"))]
        return None

    def _item_range(self, op: ir.TupleGet) -> tuple:
        items = self.tuple_items(op.tuple)
        if items is not None and op.index < len(items):
            return items[op.index]
        src = self.defs.get(op.tuple.id)
        if isinstance(src, ir.Intrinsic) and src.name == "array.shape":
            if src.args[0].id in self.arrays:  # an argument's extent, under the facts
                return 1, self.limit
            if _contiguous(src.args[0]):
                return 0, MAX_CONTIGUOUS_EXTENT
        return _UNBOUNDED

    def _block_offset(self, op: ir.BinOp) -> bool:
        """Whether ``op`` multiplies ``blockIdx.k`` by ``blockDim.k`` (one axis ``k``)."""
        regs = []
        for v in (op.lhs, op.rhs):
            src = self.defs.get(v.id)
            while isinstance(src, ir.Cast) and _is_int(src.operand.type):
                src = self.defs.get(src.operand.id)
            is_reg = isinstance(src, ir.Intrinsic) and src.name == "cuda.sreg"
            regs.append(src.attr("reg") if is_reg else "")
        return any(regs == [f"blockIdx.{k}", f"blockDim.{k}"] for k in "xyz") or any(
            regs == [f"blockDim.{k}", f"blockIdx.{k}"] for k in "xyz"
        )

    def _limited(self, op: ir.Intrinsic) -> tuple | None:
        """The range the 32-bit index variant's launch facts give ``op``, if any."""
        if not self.limit:
            return None
        if op.name == "array.size" and op.args[0].id in self.arrays:
            return 1, self.limit
        if op.name == "cuda.grid" and op.attr("ndim") == 1:
            return 0, self.limit - 1
        if op.name == "cuda.gridsize" and op.attr("ndim") == 1:
            return 1, self.limit
        return None

    def _op_range(self, op) -> tuple:
        if isinstance(op, ir.Const):
            value = op.value
            ok = isinstance(value, int) and not isinstance(value, bool)
            return (value, value) if ok else _UNBOUNDED
        if isinstance(op, ir.Intrinsic) and op.name == "max" and len(op.args) == 2:
            a, b = (self.range(v) for v in op.args)
            return _UNBOUNDED if None in (*a, *b) else (max(a[0], b[0]), max(a[1], b[1]))
        if isinstance(op, ir.Intrinsic):
            return self._limited(op) or _intrinsic_range(op)
        if isinstance(op, ir.TupleGet):
            return self._item_range(op)
        if isinstance(op, ir.Cast) and _is_int(op.operand.type):
            # Whatever it is, the operand lies within its own type.
            r = self.range(op.operand)
            return _limits(op.operand.type) if r == _UNBOUNDED else r
        if isinstance(op, ir.BinOp) and op.op in ("+", "-", "*"):
            if self.limit and op.op == "*" and self._block_offset(op):
                # blockIdx.k * blockDim.k <= (gridDim.k - 1) * blockDim.k < the facts' limit
                return 0, self.limit - 1
            return _arith(op.op, self.range(op.lhs), self.range(op.rhs))
        if isinstance(op, ir.BinOp) and op.op in ("//", "%", "&"):
            return _by_constant(op.op, self.range(op.lhs), self.range(op.rhs))
        if isinstance(op, ir.IterValue):
            return self._loop_value(op.iter)
        return _UNBOUNDED

    def _loop_value(self, it: ir.Value) -> tuple:
        """What a ``for`` loop over ``range(start, stop, step)`` yields, for a constant
        positive step: from ``start`` up to below ``stop``."""
        rng = self._range_op(it, frozenset())
        if not isinstance(rng, ir.Intrinsic) or len(rng.args) != 3:
            return _UNBOUNDED
        step = self.range(rng.args[2])
        (lo, start_hi), stop_hi = self.range(rng.args[0]), self.range(rng.args[1])[1]
        if step[0] is None or step[0] <= 0 or None in (lo, start_hi, stop_hi):
            return _UNBOUNDED
        if stop_hi + step[1] > _limits(rng.result.type.itype)[1]:
            return _UNBOUNDED  # the last step could wrap round to a negative value
        return lo, max(start_hi, stop_hi - 1)

    def _range_op(self, it: ir.Value, seen: frozenset):
        """The ``range`` intrinsic an iterator value walks, if one alone (``_CYCLE``:
        ``it`` is being asked about already, round a loop)."""
        if it.id in seen:
            return _CYCLE
        seen = seen | {it.id}
        op = self.defs.get(it.id)
        if isinstance(op, ir.GetIter):
            src = self.defs.get(op.obj.id)
            return src if isinstance(src, ir.Intrinsic) and src.name == "range" else None
        if isinstance(op, ir.IterNext):
            return self._range_op(op.iter, seen)
        if op is None and it.id in self.incoming:  # a block parameter: one range on all edges
            found = [self._range_op(a, seen) for a in self.incoming[it.id]]
            real = {id(r): r for r in found if r is not _CYCLE}
            if any(r is None for r in found) or len(real) != 1:
                return None
            return next(iter(real.values()))
        return None


def _intrinsic_range(op: ir.Intrinsic) -> tuple:
    if op.name == "cuda.sreg":
        return SPECIAL_REGISTER_RANGES.get(op.attr("reg"), _UNBOUNDED)
    if op.name == "cuda.grid" and op.attr("ndim") == 1:
        return _grid_axis(0)
    if op.name == "cuda.gridsize" and op.attr("ndim") == 1:  # blockDim.x * gridDim.x
        return 1, SPECIAL_REGISTER_RANGES["blockDim.x"][1] * SPECIAL_REGISTER_RANGES["gridDim.x"][1]
    if op.name == "array.size" and _contiguous(op.args[0]):
        return 0, MAX_CONTIGUOUS_EXTENT
    return _UNBOUNDED


def _grid_axis(k: int) -> tuple[int, int]:
    """``cuda.grid``'s value along axis ``k``: blockIdx * blockDim + threadIdx."""
    axis = "xyz"[k]
    block = SPECIAL_REGISTER_RANGES[f"blockIdx.{axis}"][1]
    dim = SPECIAL_REGISTER_RANGES[f"blockDim.{axis}"][1]
    thread = SPECIAL_REGISTER_RANGES[f"threadIdx.{axis}"][1]
    return 0, block * dim + thread


def _arith(kind: str, a: tuple, b: tuple) -> tuple:
    if None in a or None in b:
        if kind == "+":  # a bound on both sides' lows (or highs) still bounds the sum's
            return (
                None if None in (a[0], b[0]) else a[0] + b[0],
                None if None in (a[1], b[1]) else a[1] + b[1],
            )
        return _UNBOUNDED
    if kind == "+":
        return a[0] + b[0], a[1] + b[1]
    if kind == "-":
        return a[0] - b[1], a[1] - b[0]
    products = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(products), max(products)


def _by_constant(kind: str, a: tuple, b: tuple) -> tuple:
    """``a // d``, ``a % d`` or ``a & d`` for a right operand ``b`` that is one value
    ``d > 0``: Python floors, so ``a % d`` lies in ``[0, d)`` and ``a // d`` keeps
    ``a``'s order; ``a & d`` lies in ``[0, d]``."""
    d = b[0]
    if d is None or d != b[1] or d <= 0:
        return _UNBOUNDED
    if kind == "%":
        return 0, d - 1
    if kind == "&":
        return 0, d
    return (None if a[0] is None else a[0] // d, None if a[1] is None else a[1] // d)


def _clip(t, r: tuple) -> tuple:
    """``r`` where it fits integer type ``t``; unbounded where it may wrap."""
    if not _is_int(t):
        return _UNBOUNDED
    lo, hi = r
    tmin, tmax = _limits(t)
    if lo is None or hi is None or lo < tmin or hi > tmax:
        return _UNBOUNDED  # a one-sided bound is no bound once the value may wrap
    return r


def _limits(t: Scalar) -> tuple[int, int]:
    return (0, 2**t.bits - 1) if t.kind == "u" else (-(2 ** (t.bits - 1)), 2 ** (t.bits - 1) - 1)


def _is_int(t) -> bool:
    return isinstance(t, Scalar) and t.kind in ("i", "u")


def _contiguous(v: ir.Value) -> bool:
    return isinstance(v.type, Array) and v.type.layout in ("C", "F")
