"""Clean-ups irgen runs on the blocks it built (``clean_up``).

Trivial parameters: irgen gives every merge block a parameter per live local
and per stack slot; a parameter whose incoming arguments are all one value (or
the parameter itself, around a loop) is replaced by that value.

    block2(%5, %6):  <- block0(%1, %3), block4(%1, %9)    becomes    block2(%6)

Renumbering: value ids in order of appearance, so listings read top-down.

Both happen in one rewrite of the ops: rewriting is most of irgen's time.
"""

from __future__ import annotations

from cujit.ir import Block, Branch, Jump, Value, map_operands, map_values, replace


def _filter_edges(term, drop: dict[int, set[int]]):
    def keep(target, args):
        gone = drop.get(target, set())
        return tuple(a for i, a in enumerate(args) if i not in gone)

    if isinstance(term, Jump):
        return replace(term, args=keep(term.target, term.args))
    if isinstance(term, Branch):
        return replace(
            term,
            then_args=keep(term.then_target, term.then_args),
            else_args=keep(term.else_target, term.else_args),
        )
    return term


def _trivial_params(blocks: tuple[Block, ...]):  # noqa: C901 -- a fixed point over block parameters with path compression; the loops are the algorithm
    """Which parameters are trivial: ``(resolve, drop)``, where ``resolve`` maps a
    value to what replaces it and ``drop`` gives each block's removed param indices."""
    # Removing one parameter can make another trivial (a loop header's parameter
    # fed by a parameter just removed), so decide to a fixpoint, resolving
    # removed parameters through ``repl``; the ops are rewritten once, after.
    incoming: dict[int, list[tuple[Value, ...]]] = {b.id: [] for b in blocks}
    for b in blocks:
        for target, args in b.term.successors():
            incoming[target].append(args)
    repl: dict[int, Value] = {}

    def resolve(v: Value) -> Value:
        while v.id in repl:
            v = repl[v.id]
        return v

    drop: dict[int, set[int]] = {}
    changed = True
    while changed:
        changed = False
        for b in blocks:
            if not incoming[b.id]:
                continue  # the entry: its params are the function's arguments
            gone = drop.setdefault(b.id, set())
            for i, p in enumerate(b.params):
                if i in gone:
                    continue
                vals = {resolve(args[i]) for args in incoming[b.id]} - {p}
                if len(vals) == 1:
                    (repl[p.id],) = vals
                    gone.add(i)
                    changed = True
    return resolve, drop


def clean_up(
    blocks: tuple[Block, ...], var_names: tuple[tuple[int, str], ...] = ()
) -> tuple[tuple[Block, ...], tuple]:
    """``remove_trivial_params`` then ``renumber``, rewriting every op once; returns the
    blocks and ``var_names`` (value id, variable name) in the new numbering."""
    resolve, drop = _trivial_params(blocks)
    kept = {
        b.id: tuple(p for i, p in enumerate(b.params) if i not in drop.get(b.id, ()))
        for b in blocks
    }
    ids: dict[int, Value] = {}

    def new(v: Value) -> Value:
        if v.id not in ids:
            ids[v.id] = Value(len(ids), v.type)
        return ids[v.id]

    for b in blocks:  # number in order of appearance, so listings read top-down
        for p in kept[b.id]:
            new(p)
        for op in b.ops:
            if op.result is not None:
                new(op.result)

    def rename(v: Value) -> Value:
        return new(resolve(v))

    out = tuple(
        Block(
            b.id,
            tuple(new(p) for p in kept[b.id]),
            tuple(map_values(op, rename) for op in b.ops),
            map_operands(_filter_edges(b.term, drop), rename),
        )
        for b in blocks
    )
    live = (resolve(Value(vid)) for vid, _ in var_names)
    names = tuple(
        dict.fromkeys(
            (ids[v.id].id, name)
            for v, (_, name) in zip(live, var_names, strict=True)
            if v.id in ids
        )
    )
    return out, names
