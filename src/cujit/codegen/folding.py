"""The IR builder stage 6 lowers with: llvmlite's, with ``extractvalue`` folded.

Lowering builds aggregates (an array's data, shape and strides; a tuple; an iterator)
with ``insertvalue`` chains and reads their members back with ``extractvalue``, often
in the same block: an array argument's extent is read wherever the kernel indexes the
array.  Both are pure, so a member read from a chain that inserted it is the inserted
value itself, which dominates the read (the chain's instruction that inserted it uses
it, and the read uses the chain).  ``FoldingBuilder.extract_value`` returns that value
and emits nothing; an aggregate not built here (a parameter, a load, a call's result, a
phi) is read with an ``extractvalue`` as before.  The chains nothing reads after the
folding (most of them: an array parameter's struct whose members were all read through
it) are dropped before the module is printed (``drop_unread_chains``), a third of
matmul's instructions, which libNVVM would have parsed only to delete.
"""

from __future__ import annotations

from llvmlite import ir as ll


def inserted_member(agg: ll.Value, path: tuple[int, ...]) -> ll.Value | None:
    """The value ``agg``'s chain of ``insertvalue`` put at ``path``, or None where the
    chain does not say (the member came with the aggregate it started from, or was
    inserted as part of a larger one that is not itself a chain)."""
    while isinstance(agg, ll.InsertValue):
        at = tuple(agg.indices)
        if at == path:
            return agg.value
        if path[: len(at)] == at:  # inside a member inserted whole: read on in it
            agg, path = agg.value, path[len(at) :]
            continue
        if at[: len(path)] == path:  # a larger member, partly overwritten: not folded
            return None
        agg = agg.aggregate
    return None


class FoldingBuilder(ll.IRBuilder):
    """``ll.IRBuilder`` whose ``extract_value`` folds reads of inserted members."""

    def extract_value(self, agg, idx, name=""):
        path = tuple(idx) if isinstance(idx, (tuple, list)) else (idx,)
        found = inserted_member(agg, path)
        if found is not None:
            return found
        return super().extract_value(agg, idx, name)


def drop_unread_chains(module: ll.Module) -> None:
    """Remove from ``module``'s functions every ``insertvalue`` whose result nothing
    reads, and then those only the removed ones read (a chain, last link first).  A
    value counts as read where an instruction, a phi's incoming edge, a switch case or
    the metadata an instruction passes (a debug intrinsic's ``metadata %v``) holds it."""
    for fn in module.functions:
        if fn.blocks:
            _drop_in(fn)


def _drop_in(fn: ll.Function) -> None:
    uses, chains = _chain_reads(fn)
    dead: set[int] = set()
    for ins in reversed(chains):  # a link after the one it extends
        while isinstance(ins, ll.InsertValue) and id(ins) not in dead and not uses.get(id(ins)):
            dead.add(id(ins))
            for v in (ins.aggregate, ins.value):
                if v.__class__ is ll.InsertValue:
                    uses[id(v)] -= 1
            ins = ins.aggregate
    if dead:
        for block in fn.blocks:
            block.instructions = [i for i in block.instructions if id(i) not in dead]


def _chain_reads(fn: ll.Function) -> tuple[dict[int, int], list]:
    """How many reads each ``insertvalue`` of ``fn`` has (by id), and the
    ``insertvalue``s in order."""
    uses: dict[int, int] = {}
    chains = []
    for block in fn.blocks:
        for ins in block.instructions:
            _count(ins.operands, uses)
            incomings = getattr(ins, "incomings", None) or getattr(ins, "cases", None)
            if incomings:  # a phi's edges, a switch's cases
                _count([v for v, _ in incomings], uses)
            if ins.__class__ is ll.InsertValue:
                chains.append(ins)
    return uses, chains


def _count(values, uses: dict[int, int]) -> None:
    for v in values:
        cls = v.__class__
        if cls is ll.InsertValue:
            uses[id(v)] = uses.get(id(v), 0) + 1
        elif cls is ll.MDValue:  # values inside the metadata an instruction passes
            _count(v.operands, uses)
