"""Inlining device functions into their caller, on request.

LLVM inlines device functions on its own; this pass exists for the one case where
the inlining must happen before lowering, and for the device functions that ask for it
(``jit(inline="always")``, ``inline=True`` or a cost model that says yes: numba
inlines those in its own IR, so their calls are gone from the LLVM IR):
``inline_requested`` is the pass.  The CPU target turns a kernel that waits
at a barrier or a warp function into a coroutine, and only the kernel itself can
suspend.  A device function that synchronises is therefore inlined into the kernel
there, wherever its calls sit (``targets/cpu``).  ``inline_calls(fn, wanted)``
replaces each ``CallFunction`` whose callee ``wanted`` accepts by the callee's
blocks, again in what it brought in, until no such call is left::

    block 3 (%0):                          block 3 (%0):
      %1 = add %0, 1                         %1 = add %0, 1
      %2 = callfunction f(%1)       ->       jump 9(%1)
      %3 = mul %2, %2                      block 9 (%10):     f's entry, renumbered
      return                                 ...
                                             jump 10(%12)       f's ``return %12``
                                           block 10 (%2):     the rest of block 3
                                             %3 = mul %2, %2
                                             return

A ``raise`` in an inlined callee keeps its meaning: without ``keep_raise`` (a
release build), a device function that raises returns an undefined value to its
caller, as the lowered call would (``codegen/functions.py``); with it (debug mode)
the raise stays a raise, which reports and ends the thread, as the failed call
makes its callers do.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable

from cujit import ir
from cujit.diagnostics import UnsupportedError

# More inlined calls than this in one kernel means a device function calls itself.
MAX_INLINED = 1000


def inline_calls(
    fn: ir.Function, wanted: Callable[[ir.Function], bool], keep_raise: bool = False
) -> ir.Function:
    """``fn`` with every call of a callee that ``wanted`` accepts replaced by its body."""
    callees = {c.name: c for c in fn.callees}
    blocks = list(fn.blocks)
    ids = itertools.count(fn.max_value_id() + 1)
    block_ids = itertools.count(max(b.id for b in blocks) + 1)
    inlined = 0
    k = 0
    while k < len(blocks):
        block = blocks[k]
        at = next(
            (
                i
                for i, op in enumerate(block.ops)
                if isinstance(op, ir.CallFunction) and wanted(callees[op.callee])
            ),
            None,
        )
        if at is None:
            k += 1
            continue
        inlined += 1
        call = block.ops[at]
        if any(
            isinstance(op, ir.CallFunction) and op.callee == ir.SELF_CALL
            for op in callees[call.callee].all_ops()
        ):
            raise UnsupportedError(
                f"device function '{call.callee}' calls itself and waits (a barrier or a "
                "warp function): the CPU target cannot run it",
                call.loc,
            )
        if inlined > MAX_INLINED:
            raise UnsupportedError(
                f"device function '{call.callee}' calls itself; it cannot "
                "be inlined into the kernel here",
                call.loc,
            )
        callee = callees[call.callee]
        for c in callee.callees:  # what the inlined body calls, the kernel now calls
            callees.setdefault(c.name, c)
        after = ir.Block(next(block_ids), (call.result,), block.ops[at + 1 :], block.term)
        body = _copy_body(callee, call, after.id, ids, block_ids, keep_raise)
        head = ir.Block(
            block.id,
            block.params,
            block.ops[:at],
            ir.Jump(loc=call.loc, target=body[0].id, args=call.args),
        )
        # The head is scanned no further; the body and the rest come next (their calls
        # of wanted callees are inlined in turn).
        blocks[k : k + 1] = [head, *body, after]
        k += 1
    if not inlined:
        return fn
    # replace(): the function's own fields (its inline flags among them) stay as they are
    return dataclasses.replace(fn, blocks=tuple(blocks), callees=tuple(callees.values()))


def _copy_body(
    callee: ir.Function, call: ir.CallFunction, after: int, ids, block_ids, keep_raise: bool
) -> list[ir.Block]:
    """The callee's blocks with fresh block ids and value ids; each return jumps to
    block ``after`` passing the returned value (or an undefined one)."""
    values: dict[int, ir.Value] = {}
    block_map = {b.id: next(block_ids) for b in callee.blocks}

    def fresh(v: ir.Value) -> ir.Value:
        new = values.get(v.id)
        if new is None:
            new = values[v.id] = ir.Value(next(ids), v.type)
        return new

    out = []
    for b in callee.blocks:
        params = tuple(fresh(p) for p in b.params)
        ops = [ir.map_values(op, fresh) for op in b.ops]
        term = b.term
        if isinstance(term, ir.Return) or (isinstance(term, ir.Raise) and not keep_raise):
            value = term.value if isinstance(term, ir.Return) else None
            if value is None:  # nothing returned: an undefined value of the call's type
                undef = ir.Value(next(ids), call.result.type)
                ops.append(ir.Undef(loc=term.loc, result=undef, name="return"))
                result = undef
            else:
                result = fresh(value)
            term = ir.Jump(loc=term.loc, target=after, args=(result,))
        else:
            term = ir.map_operands(term, fresh)
            if isinstance(term, ir.Jump):
                term = ir.replace(term, target=block_map[term.target])
            elif isinstance(term, ir.Branch):
                term = ir.replace(
                    term,
                    then_target=block_map[term.then_target],
                    else_target=block_map[term.else_target],
                )
            elif not isinstance(term, ir.Raise):
                raise AssertionError(f"cannot inline across a {type(term).__name__}")
        out.append(ir.Block(block_map[b.id], params, tuple(ops), term))
    return out


def _requested(callee: ir.Function) -> bool:
    return callee.inline


def inline_requested(fn: ir.Function) -> ir.Function:
    """The calls of callees marked ``inline`` replaced by their bodies (a release
    build: a raise in an inlined callee returns an undefined value)."""
    if not any(c.inline for c in fn.callees):
        return fn
    return inline_calls(fn, _requested)


def inline_requested_keep_raise(fn: ir.Function) -> ir.Function:
    """``inline_requested`` for a debug build: an inlined raise still raises."""
    if not any(c.inline for c in fn.callees):
        return fn
    return inline_calls(fn, _requested, keep_raise=True)
