"""The IR builder stage 6 lowers with: llvmlite's, with ``extractvalue`` folded.

Lowering builds aggregates (an array's data, shape and strides; a tuple; an iterator)
with ``insertvalue`` chains and reads their members back with ``extractvalue``, often
in the same block: an array argument's extent is read wherever the kernel indexes the
array.  Both are pure, so a member read from a chain that inserted it is the inserted
value itself, which dominates the read (the chain's instruction that inserted it uses
it, and the read uses the chain).  ``FoldingBuilder.extract_value`` returns that value
and emits nothing; an aggregate not built here (a parameter, a load, a call's result, a
phi) is read with an ``extractvalue`` as before.  Unread chains are left for libNVVM's
(or the CPU target's) dead-code elimination.
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
