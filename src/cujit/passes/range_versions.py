"""Loop versioning on the sign of a range's start: ``for k in range(a, b)`` whose ``k``
indexes an array runs, when ``a >= 0``, a copy of the loop whose values are known never
to be negative, so its accesses need no wrap of negative indices.

    for k in range(rowptr[row], rowptr[row + 1]):     # a: unknown sign
        acc += vals[k] * x[cols[k]]                   # vals[k]: k < 0 ? k + n : k
  becomes
    if rowptr[row] >= 0:
        for k in range(max(rowptr[row], 0), rowptr[row + 1]):   # k >= 0: vals[k] direct
            ...
    else:
        for k in range(rowptr[row], rowptr[row + 1]):
            ...

With a step of 1, every value of the loop lies in ``[a, b)``, so ``a >= 0`` makes every
value non-negative; the copy's start is ``max(a, 0)`` (equal to ``a`` where it runs),
whose range the wrap elimination of stage 6 (``codegen/params.py``) reads.  Only
innermost loops of a few ops are copied, and only where the start is not already
known to be non-negative; the loop as written is kept for a negative start, so the
program computes exactly what it did.
"""

from __future__ import annotations

import dataclasses
import itertools

from cujit import ir
from cujit.types import boolean, int64

_MAX_OPS = 96  # a loop bigger than this is not copied (code size)
_NONNEGATIVE = ("array.size", "cuda.grid", "cuda.gridsize", "cuda.sreg")


def version_range_loops(fn: ir.Function) -> ir.Function:
    """``fn`` with each eligible range loop versioned (the module docstring)."""
    for _ in range(8):  # a few loops per kernel; each round rebuilds the function
        found = _find(fn)
        if found is None:
            return fn
        fn = _version(fn, *found)
    return fn


def _defs(fn: ir.Function) -> dict[int, ir.Op]:
    return {op.result.id: op for op in fn.all_ops() if op.result is not None}


def _find(fn: ir.Function):
    """(pre-header, header, loop block ids, GetIter op, range op, position) of one loop
    to version, or None."""
    defs = _defs(fn)
    preds: dict[int, list[int]] = {b.id: [] for b in fn.blocks}
    for b in fn.blocks:
        for target, _ in b.term.successors():
            preds[target].append(b.id)
    for pre in fn.blocks:
        term = pre.term
        if not isinstance(term, ir.Jump):
            continue
        for pos, arg in enumerate(term.args):
            get = defs.get(arg.id)
            rng = defs.get(get.obj.id) if isinstance(get, ir.GetIter) else None
            if not _eligible_range(rng, defs) or get not in pre.ops:
                continue
            header = fn.block(term.target)
            loop = _loop_blocks(fn, header, pre.id, preds)
            if loop is not None and _worth_it(fn, loop, header.params[pos]):
                return pre, header, loop, get, rng, pos
    return None


def _eligible_range(rng, defs) -> bool:
    if not (isinstance(rng, ir.Intrinsic) and rng.name == "range" and len(rng.args) == 3):
        return False
    start, step = (defs.get(a.id) for a in (rng.args[0], rng.args[2]))
    if not (isinstance(step, ir.Const) and step.value == 1) or rng.args[0].type != int64:
        return False
    if isinstance(start, ir.Const):
        return False  # a constant start: its sign is known already
    if isinstance(start, ir.Intrinsic) and start.name in (*_NONNEGATIVE, "max", "range"):
        return False  # known non-negative, or a copy this pass made
    return True


def _loop_blocks(fn, header: ir.Block, pre: int, preds) -> set[int] | None:
    """The natural loop of ``header`` entered only from ``pre``, if innermost and small."""
    latches = [p for p in preds[header.id] if p != pre]
    if not latches or preds[header.id].count(pre) != 1:
        return None
    loop, work = {header.id}, list(latches)
    while work:
        b = work.pop()
        if b not in loop:
            loop.add(b)
            work.extend(preds[b])
    if pre in loop or fn.blocks[0].id in loop:
        return None
    blocks = [fn.block(b) for b in loop]
    ops = sum(len(b.ops) for b in blocks)
    nested = any(isinstance(op, ir.GetIter) for b in blocks for op in b.ops)
    back_edges = sum(1 for b in blocks for t, _ in b.term.successors() if t == header.id)
    if ops > _MAX_OPS or nested or back_edges != len(latches):
        return None
    # One way out, from the header to a block entered from it alone: the values the
    # loop defines reach the rest of the function through that block (``_exit_params``).
    exits = [(b.id, t) for b in blocks for t, _ in b.term.successors() if t not in loop]
    if len(exits) != 1 or exits[0][0] != header.id or preds[exits[0][1]] != [header.id]:
        return None
    return loop


def _worth_it(fn, loop: set[int], it: ir.Value) -> bool:
    """Whether the loop's value indexes an array directly (a wrap to leave out)."""
    values = {
        op.result.id
        for b in loop
        for op in fn.block(b).ops
        if isinstance(op, ir.IterValue) and op.iter.id == it.id
    }
    for b in loop:
        for op in fn.block(b).ops:
            if isinstance(op, (ir.GetItem, ir.SetItem)) and op.index.id in values:
                return True
    return False


def _version(fn: ir.Function, pre, header, loop, get, rng, pos) -> ir.Function:
    ids = itertools.count(fn.max_value_id() + 1)
    block_ids = itertools.count(max(b.id for b in fn.blocks) + 1)
    block_map = {b: next(block_ids) for b in sorted(loop)}
    fn = _exit_params(fn, loop, header, ids)
    copies, names = _copy_loop(fn, loop, block_map, ids)
    loc, term = rng.loc, pre.term
    zero = ir.Value(next(ids), int64)
    start = rng.args[0]
    ok = ir.Value(next(ids), boolean)
    low = ir.Value(next(ids), int64)
    rng2 = ir.Value(next(ids), rng.result.type)
    it2 = ir.Value(next(ids), get.result.type)
    entry_id = next(block_ids)
    entry_ops = (
        ir.Intrinsic(loc=loc, result=low, name="max", args=(start, zero)),
        ir.Intrinsic(loc=loc, result=rng2, name="range", args=(low, *rng.args[1:])),
        ir.GetIter(loc=get.loc, result=it2, obj=rng2),
    )
    args2 = tuple(it2 if k == pos else a for k, a in enumerate(term.args))
    entry = ir.Block(
        entry_id, (), entry_ops, ir.Jump(loc=term.loc, target=block_map[header.id], args=args2)
    )
    test = (
        ir.Const(loc=loc, result=zero, value=0),
        ir.Compare(loc=loc, result=ok, op=">=", lhs=start, rhs=zero),
    )
    branch = ir.Branch(
        loc=term.loc,
        cond=ok,
        then_target=entry_id,
        else_target=term.target,
        then_args=(),
        else_args=term.args,
    )
    blocks = []
    for b in fn.blocks:
        if b.id == pre.id:
            b = fn.block(pre.id)
            b = ir.Block(b.id, b.params, (*b.ops, *test), branch)
        blocks.append(b)
    blocks += [entry, *copies]
    var_names = fn.var_names + tuple(names)
    return dataclasses.replace(fn, blocks=tuple(blocks), var_names=var_names)


def _copy_loop(fn, loop: set[int], block_map: dict[int, int], ids):
    """The loop's blocks with fresh ids; edges leaving the loop keep their targets."""
    fresh: dict[int, ir.Value] = {}
    for b in loop:
        block = fn.block(b)
        for v in (*block.params, *(op.result for op in block.ops if op.result is not None)):
            fresh[v.id] = ir.Value(next(ids), v.type)

    def sub(v: ir.Value) -> ir.Value:
        return fresh.get(v.id, v)

    copies = []
    for b in sorted(loop):
        block = fn.block(b)
        ops = tuple(ir.map_values(op, sub) for op in block.ops)
        term = ir.map_operands(block.term, sub)
        if isinstance(term, ir.Jump):
            term = ir.replace(term, target=block_map.get(term.target, term.target))
        elif isinstance(term, ir.Branch):
            term = ir.replace(
                term,
                then_target=block_map.get(term.then_target, term.then_target),
                else_target=block_map.get(term.else_target, term.else_target),
            )
        elif not isinstance(term, (ir.Return, ir.Raise)):
            raise AssertionError(f"cannot copy a loop ending in a {type(term).__name__}")
        params = tuple(sub(p) for p in block.params)
        copies.append(ir.Block(block_map[b], params, ops, term))
    names = [(fresh[vid].id, name) for vid, name in fn.var_names if vid in fresh]
    return copies, names


def _exit_params(fn: ir.Function, loop: set[int], header: ir.Block, ids) -> ir.Function:
    """``fn`` with the loop's exit block taking, as new parameters, the values defined in
    the loop that blocks outside it read (from the header's exit edge), those reads
    renamed: after copying, each copy passes its own."""
    defined = {}
    for b in loop:
        block = fn.block(b)
        for v in (*block.params, *(op.result for op in block.ops if op.result is not None)):
            defined[v.id] = v
    outside = [b for b in fn.blocks if b.id not in loop]
    read = []
    for b in outside:
        for op in (*b.ops, b.term):
            read += [v for v in ir.operands(op) if v.id in defined and v not in read]
    if not read:
        return fn
    fresh = {v.id: ir.Value(next(ids), v.type) for v in read}

    def sub(v: ir.Value) -> ir.Value:
        return fresh.get(v.id, v)

    term = header.term  # a Branch: one edge stays in the loop, the other leaves it
    exit_id = term.else_target if term.then_target in loop else term.then_target
    blocks = []
    for b in fn.blocks:
        if b.id in loop:
            if b.id == header.id:
                side = "else_args" if term.else_target == exit_id else "then_args"
                grown = ir.replace(term, **{side: (*getattr(term, side), *read)})
                b = ir.Block(b.id, b.params, b.ops, grown)
        else:
            params = b.params + tuple(fresh[v.id] for v in read) if b.id == exit_id else b.params
            ops = tuple(ir.map_operands(op, sub) for op in b.ops)
            b = ir.Block(b.id, params, ops, ir.map_operands(b.term, sub))
        blocks.append(b)
    return dataclasses.replace(fn, blocks=tuple(blocks))
