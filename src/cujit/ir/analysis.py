"""Whole-function facts read off typed IR.

``written_arguments``: which kernel arguments the kernel may store into.  The runtime
uses it to refuse a read-only buffer (a CuPy array marked read-only, a DLPack export
without write access) passed where the kernel writes, before anything is launched.

May-alias sets are tracked per value: an argument aliases itself; a block parameter
aliases whatever its incoming edges pass; any other op's result aliases what its
operands alias (tuples carry their items' sets, so ``t = (x, y); t[0][i] = v`` marks
both).  The answer errs on the side of "written": it never misses a store.

``uses_grid_sync``: whether the kernel (or a device function it calls) has a grid-wide
barrier; the runtime then launches it cooperatively (``cuLaunchCooperativeKernel``).
"""

from __future__ import annotations

from cujit.ir.calls import CallFunction, Intrinsic
from cujit.ir.core import Function, operands
from cujit.ir.memory import SetItem

# Intrinsics that store into their first argument.
_STORING_PREFIXES = ("atomic.",)


def written_arguments(fn: Function) -> tuple[bool, ...]:
    """One flag per kernel argument: True if the kernel may write into it."""
    aliases: dict[int, frozenset[int]] = {p.id: frozenset((i,)) for i, p in enumerate(fn.args)}

    def of(v) -> frozenset[int]:
        return aliases.get(v.id, frozenset())

    changed = True
    while changed:  # sets only grow, over a finite set of arguments: this ends
        changed = False

        def widen(vid: int, new: frozenset[int]) -> None:
            nonlocal changed
            old = aliases.get(vid, frozenset())
            if not new <= old:
                aliases[vid] = old | new
                changed = True

        for block in fn.blocks:
            for op in block.ops:
                if op.result is not None:
                    srcs = frozenset().union(*(of(v) for v in operands(op)))
                    if srcs:
                        widen(op.result.id, srcs)
            for target, args in block.term.successors():
                for param, arg in zip(fn.block(target).params, args):
                    if of(arg):
                        widen(param.id, of(arg))

    written: set[int] = set()
    for op in fn.all_ops():
        if isinstance(op, SetItem):
            written |= of(op.obj)
        elif isinstance(op, Intrinsic) and op.name.startswith(_STORING_PREFIXES) and op.args:
            written |= of(op.args[0])
        elif isinstance(op, CallFunction):  # a device function writes what its body writes
            for arg, w in zip(op.args, written_arguments(fn.callee(op.callee))):
                if w:
                    written |= of(arg)
    return tuple(i in written for i in range(len(fn.args)))


GRID_SYNC = "cuda.grid_sync"


def grid_sync_op(fn: Function) -> Intrinsic | None:
    """The first grid-wide barrier (``cuda.cg.this_grid().sync()``) in ``fn`` or in a
    device function it calls, if any.  A kernel with one must be launched
    cooperatively: every block resident at once, or the barrier never opens."""
    for op in fn.all_ops():
        if isinstance(op, Intrinsic) and op.name == GRID_SYNC:
            return op
    for callee in fn.callees:
        found = grid_sync_op(callee)
        if found is not None:
            return found
    return None


def uses_grid_sync(fn: Function) -> bool:
    return grid_sync_op(fn) is not None
