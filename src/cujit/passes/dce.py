"""Dead-code elimination: drop unreachable blocks, ops nobody reads, and unused
block parameters (with the matching argument on every incoming edge).

    block0(%0: array(float32, 1d, C)):
      %1: pyobject(module math) = const <module math>
      %2: int64 = const 3
      %3: int64 = binop + %2 %2          # never read
      %4: none = intrinsic cuda.syncthreads ()     # an effect: kept
      jump block1(%2)
    block1(%5: int64):                   # %5 never read
      return
    block2:                              # no predecessor
      return
  becomes
    block0(%0: array(float32, 1d, C)):
      %4: none = intrinsic cuda.syncthreads ()
      jump block1()
    block1:
      return

An op is kept when its result is used by a kept op, or when it has an effect:
stores (``SetItem``), the intrinsics whose row in the intrinsic table
(``cujit.ir.intrinsics``) has a side effect, and every device-function call
(``CallFunction``: its body may store, print or synchronise).  Allocations
(``shared.array``, ``local.array``) are pure: unused ones go too.  Liveness
flows backwards through block parameters, so a loop-carried value that only
feeds itself dies with its loop parameter.  Kernel arguments always stay.
"""

from __future__ import annotations

import dataclasses

from cujit.ir import (
    BinOp,
    Block,
    Branch,
    CallFunction,
    Function,
    GetItem,
    Intrinsic,
    Jump,
    Op,
    SetItem,
    Value,
    intrinsics,
    operands,
)

# Intrinsics that act on memory or on other threads; their results may go unused.
EFFECTS = intrinsics.names_where(lambda row: row.side_effect)


def may_raise(op: Op) -> bool:
    """Whether a debug build's ``op`` may raise (a bounds check, a division by zero):
    its effect is the report, so it stays even when its result is unused."""
    return isinstance(op, GetItem) or (isinstance(op, BinOp) and op.op in ("/", "//", "%"))


def has_effect(op: Op) -> bool:
    if isinstance(op, (SetItem, CallFunction)):
        return True
    if isinstance(op, Intrinsic):
        row = intrinsics.row(op.name)
        return row is None or row.side_effect  # a name with no row: keep it (verify refuses it)
    return False


def reachable_blocks(fn: Function) -> list[Block]:
    """The blocks reachable from the entry, in their original order."""
    seen = {fn.blocks[0].id}
    stack = [fn.blocks[0]]
    while stack:
        for target, _ in stack.pop().term.successors():
            if target not in seen:
                seen.add(target)
                stack.append(fn.block(target))
    return [b for b in fn.blocks if b.id in seen]


def eliminate_dead_code(fn: Function, keep_variables: bool = False) -> Function:  # noqa: C901 -- mark-and-sweep over ops and block parameters; mark and sweep share the liveness sets
    """``fn`` without unreachable blocks, dead ops and unused block parameters;
    ``keep_variables`` (debug builds) also keeps every value a Python variable holds
    (``Function.var_names``), so a debugger can print it, and the ops that may raise."""

    def kept(op: Op) -> bool:
        return has_effect(op) or (keep_variables and may_raise(op))

    blocks = reachable_blocks(fn)
    defs: dict[int, Op] = {}
    param_of: dict[int, tuple[int, int]] = {}  # param id -> (block id, index)
    incoming: dict[int, list[tuple]] = {b.id: [] for b in blocks}  # block -> edge arg tuples
    for b in blocks:
        for k, p in enumerate(b.params):
            param_of[p.id] = (b.id, k)
        for op in b.ops:
            if op.result is not None:
                defs[op.result.id] = op
        for target, args in b.term.successors():
            incoming[target].append(args)

    live: set[int] = set()
    work: list[int] = []

    def mark(values) -> None:
        for v in values:
            if v.id not in live:
                live.add(v.id)
                work.append(v.id)

    mark(blocks[0].params)  # kernel arguments are the ABI: never removed
    if keep_variables:
        known = defs.keys() | param_of.keys()
        mark(Value(vid) for vid, _ in fn.var_names if vid in known)
    for b in blocks:
        for op in b.ops:
            if kept(op):
                mark(operands(op))
        term_reads = (
            [b.term.cond]
            if isinstance(b.term, Branch)
            else []
            if isinstance(b.term, Jump)
            else operands(b.term)
        )
        mark(term_reads)
    while work:
        vid = work.pop()
        if vid in defs:
            mark(operands(defs[vid]))
        elif vid in param_of:
            block_id, k = param_of[vid]
            mark(args[k] for args in incoming[block_id])

    kept_params = {b.id: [k for k, p in enumerate(b.params) if p.id in live] for b in blocks}

    def keep_args(target: int, args: tuple) -> tuple:
        return tuple(args[k] for k in kept_params[target])

    out = []
    for b in blocks:
        ops = tuple(
            op for op in b.ops if kept(op) or (op.result is not None and op.result.id in live)
        )
        term = b.term
        if isinstance(term, Jump):
            term = Jump(loc=term.loc, target=term.target, args=keep_args(term.target, term.args))
        elif isinstance(term, Branch):
            term = Branch(
                loc=term.loc,
                cond=term.cond,
                then_target=term.then_target,
                else_target=term.else_target,
                then_args=keep_args(term.then_target, term.then_args),
                else_args=keep_args(term.else_target, term.else_args),
            )
        params = tuple(b.params[k] for k in kept_params[b.id])
        out.append(Block(b.id, params, ops, term))
    return dataclasses.replace(fn, blocks=tuple(out))  # keeps the callees


def eliminate_dead_code_keeping_variables(fn: Function) -> Function:
    """Debug builds' dead-code elimination: what the variables hold stays."""
    return eliminate_dead_code(fn, keep_variables=True)
