"""The rules of ``ir.independence``, op by op: the shape of the control flow (bounds
checks, then straight-line work) and what each op of the work may do."""

from __future__ import annotations

from cujit import ir
from cujit.ir.independence import (
    _EXIT,
    _SWAP,
    _UPPER,
    Bound,
    Refused,
    is_c_vector,
    is_pure_intrinsic,
)
from cujit.types import Array, NoneType, Scalar

_ARITH = (ir.Const, ir.Cast, ir.BinOp, ir.UnaryOp, ir.Compare, ir.TupleGet, ir.BuildTuple)
_LOOP = (ir.GetIter, ir.IterValid, ir.IterValue, ir.IterNext, ir.Undef)
_INT64 = Scalar("int64", "i", 64)


def check_shape(a) -> tuple[list[Bound], list[ir.Op]]:
    """Rule 4: a chain of bounds checks on ``i`` whose failing side returns, ending in
    one straight-line block of per-index work.  Returns the bounds and every op met
    (the checks' blocks first), the guard compares recorded in ``a.guards``."""
    a.guards, a.steps = set(), []
    bounds: list[Bound] = []
    ops: list[ir.Op] = []
    block, seen = a.fn.blocks[0], set()
    while True:
        if block.id in seen or (block.params and block is not a.fn.blocks[0]):
            raise Refused("control flow other than bounds checks on i", block.term.loc)
        seen.add(block.id)
        ops.extend(block.ops)
        term = block.term
        if isinstance(term, ir.Return):
            if not bounds:  # the grid alone bounds i: a wider thread would pass its end
                raise Refused("no bounds check i < n before the work", term.loc)
            a.body_block = block.id
            return bounds, ops
        if not isinstance(term, ir.Branch):
            raise Refused("control flow other than bounds checks on i (a loop?)", term.loc)
        bound, go_on = _guard(a, term)
        for op in block.ops:  # the checks come first: a wider thread loads nothing early
            if isinstance(op, (ir.GetItem, ir.SetItem, ir.CallFunction)):
                raise Refused("work before the bounds check on i", op.loc)
        bounds.append(bound)
        a.steps.append((block.id, go_on))
        block = a.fn.block(go_on)


def _guard(a, term: ir.Branch) -> tuple[Bound, int]:
    """The bound a branch checks and the block it continues to; refused unless it is
    ``i < n`` (or the same said otherwise) and its other side only returns."""
    cmp = a.defs.get(term.cond.id)
    if not isinstance(cmp, ir.Compare) or len(a.uses[cmp.result.id]) != 1:
        raise Refused("a branch that is not a bounds check on i", term.loc)
    op, lhs, rhs = cmp.op, cmp.lhs, cmp.rhs
    if a.offset.get(rhs.id) == 0 and op in _SWAP:
        op, lhs, rhs = _SWAP[op], rhs, lhs
    if a.offset.get(lhs.id) != 0 or lhs.id not in a.index:
        raise Refused("a branch that is not a bounds check on i itself", term.loc)
    if op in _UPPER:
        go_on, exit_to = term.then_target, term.else_target
    elif op in _EXIT:
        op, go_on, exit_to = _EXIT[op], term.else_target, term.then_target
    else:
        raise Refused(f"an early exit not on an upper bound of i (i {cmp.op} ...)", term.loc)
    exit_block = a.fn.block(exit_to)
    if exit_block.ops or exit_block.params or not isinstance(exit_block.term, ir.Return):
        raise Refused(
            "a bounds check whose failing side does work (or not on an upper bound of i)",
            term.loc,
        )
    if term.then_args or term.else_args or exit_block.term.value is not None:
        raise Refused("a bounds check whose failing side does work", term.loc)
    a.guards.add(cmp.result.id)
    return Bound(launch_expr(a, rhs, cmp.loc), _UPPER[op]), go_on


def launch_expr(a, v: ir.Value, loc) -> tuple:
    """The bound ``v`` as an expression of the launch's arguments, or Refused."""
    op = a.defs.get(v.id)
    if v.id in a.args and isinstance(v.type, Scalar) and v.type.is_int:
        return ("arg", a.args[v.id])
    if isinstance(op, ir.Const) and type(op.value) is int:
        return ("const", op.value)
    if isinstance(op, ir.Cast) and op.result.type == _INT64 and op.operand.type.is_int:
        return launch_expr(a, op.operand, loc)
    if isinstance(op, ir.BinOp) and op.op in "+-*" and op.result.type == _INT64:
        return (op.op, launch_expr(a, op.lhs, loc), launch_expr(a, op.rhs, loc))
    if isinstance(op, ir.Intrinsic) and op.name == "array.size" and op.args[0].id in a.args:
        return ("size", a.args[op.args[0].id])
    if isinstance(op, ir.TupleGet):
        shape = a.defs.get(op.tuple.id)
        if isinstance(shape, ir.Intrinsic) and shape.name == "array.shape":
            if shape.args[0].id in a.args:
                return ("shape", a.args[shape.args[0].id], op.index)
    raise Refused("a bound on i that the launch cannot compute from the arguments", loc)


def check_body(a, ops: list[ir.Op]) -> tuple[tuple[int, ...], int, tuple]:
    """Rules 1-3 on every op: the accessed array arguments' positions, k, and per array
    the least and greatest offset ``c`` it is accessed at."""
    reads: dict[int, set[int]] = {}
    written: set[int] = set()
    for op in ops:
        if _defines_index(a, op):
            continue
        if not isinstance(op, (ir.GetItem, ir.SetItem)):
            _check_op(a, op)  # what an op is says more than how it uses i
        _check_index_uses(a, op)
        if isinstance(op, (ir.GetItem, ir.SetItem)):
            pos, c = _access(a, op)
            (written.add(pos) if isinstance(op, ir.SetItem) else reads.setdefault(pos, set()))
            if isinstance(op, ir.GetItem):
                reads[pos].add(c)
    for pos in written:
        if reads.get(pos, {0}) != {0}:
            raise Refused("an array stored into is read at another index than i", a.fn.loc)
    arrays = tuple(sorted(set(reads) | written))
    if not arrays:
        raise Refused("no array is accessed at i", a.fn.loc)
    narrowest = min(a.fn.args[p].type.dtype.itemsize for p in arrays)
    offsets = {p: reads.get(p, set()) | ({0} if p in written else set()) for p in arrays}
    reach = tuple((p, min(offsets[p]), max(offsets[p])) for p in arrays)
    return arrays, 16 // narrowest, reach


def _defines_index(a, op: ir.Op) -> bool:
    rid = op.result.id if op.result is not None else None
    return rid is not None and (rid in a.aux or rid in a.offset)


def _check_index_uses(a, op: ir.Op) -> None:
    """The index may be an access's index, in ``i + c`` or in a bounds check only."""
    allowed = set()
    if isinstance(op, ir.SetItem) and op.value.id in a.offset:
        raise Refused("the index i is stored to memory", op.loc)
    if isinstance(op, (ir.GetItem, ir.SetItem)):
        allowed.add(op.index.id)
    if isinstance(op, ir.Compare) and op.result.id in a.guards:
        return
    for v in ir.operands(op):
        if v.id in a.offset and v.id not in allowed:
            raise Refused("the index i is used in arithmetic other than i + c", op.loc)
        if v.id in a.aux:
            raise Refused("thread identity used other than in the 1-D global index", op.loc)


def _access(a, op) -> tuple[int, int]:
    pos = a.args.get(op.obj.id)
    if pos is None:
        raise Refused("an access to an array that is not a kernel argument", op.loc)
    if not is_c_vector(op.obj.type):
        raise Refused(
            f"an access to {op.obj.type}: only 1-D C-contiguous arrays of 4- or 8-byte numbers",
            op.loc,
        )
    c = a.offset.get(op.index.id)
    if c is None:
        raise Refused("an array access at an index other than i + c", op.loc)
    if isinstance(op, ir.SetItem) and c != 0:
        raise Refused("a store at another index than i", op.loc)
    return pos, c


def _check_op(a, op: ir.Op) -> None:
    if isinstance(op, _ARITH):
        return
    if isinstance(op, ir.Intrinsic):
        _check_intrinsic(op)
        return
    if isinstance(op, ir.CallFunction):
        if not all(isinstance(v.type, Scalar) for v in op.args):
            raise Refused(f"a call of {op.callee} with an array or object argument", op.loc)
        check_pure_function(a.fn.callee(op.callee), op.loc)
        return
    raise Refused(f"an operation the rule does not cover ({type(op).__name__})", op.loc)


def _check_intrinsic(op: ir.Intrinsic) -> None:
    if is_pure_intrinsic(op.name):
        return
    if op.name in ("array.size", "array.shape"):
        return
    from cujit.ir import intrinsics

    row = intrinsics.row(op.name)
    if op.name == "shared.array":
        raise Refused("shared memory (cuda.shared.array)", op.loc)
    if row is not None and row.barrier:
        raise Refused(f"a barrier ({op.name})", op.loc)
    if op.name.startswith("atomic."):
        raise Refused(f"an atomic operation ({op.name})", op.loc)
    if row is not None and row.warp:
        raise Refused(f"a warp function ({op.name})", op.loc)
    raise Refused(f"{op.name}, which the rule does not cover", op.loc)


def check_pure_function(fn: ir.Function, loc, calling: tuple = ()) -> None:
    """A device function taking scalars: pure arithmetic and pure intrinsics only
    (its own branches and loops are fine: they stay inside one index's work).
    ``calling``: the functions whose calls led here; a recursive one is refused (its
    depth is the data's, which the rule does not bound)."""
    if any(f is fn for f in calling):
        raise Refused(f"a recursive call of {fn.name}", loc)
    if not all(isinstance(v.type, Scalar) for v in fn.args):
        raise Refused(f"a call of {fn.name}, which takes arrays", loc)
    if isinstance(fn.return_type, Array):
        raise Refused(f"a call of {fn.name}, which returns an array", loc)
    for op in fn.all_ops():
        _check_pure_op(fn, op, (*calling, fn))
    if not isinstance(fn.return_type, (Scalar, NoneType, type(None))):
        raise Refused(f"{fn.name} returns {fn.return_type}", loc)


def _check_pure_op(fn: ir.Function, op: ir.Op, calling: tuple) -> None:
    if isinstance(op, ir.Raise):
        raise Refused(f"{fn.name} may raise an exception", op.loc)
    if isinstance(op, (ir.Terminator, *_ARITH, *_LOOP)):
        return
    if isinstance(op, ir.Intrinsic):
        if op.name != "range" and not is_pure_intrinsic(op.name):
            raise Refused(f"{fn.name} calls {op.name}", op.loc)
        return
    if isinstance(op, ir.CallFunction):
        check_pure_function(fn.callee(op.callee), op.loc, calling)
        return
    raise Refused(f"{fn.name} does what the rule does not cover ({type(op).__name__})", op.loc)
