"""Clean-ups irgen runs on the blocks it built.

``remove_trivial_params``: irgen gives every merge block a parameter per live
local and per stack slot; a parameter whose incoming arguments are all one
value (or the parameter itself, around a loop) is replaced by that value.

    block2(%5, %6):  <- block0(%1, %3), block4(%1, %9)    becomes    block2(%6)

``renumber``: value ids in order of appearance, so listings read top-down.
"""

from __future__ import annotations

import dataclasses

from cujit.ir import Block, Branch, Jump, Value, map_operands, map_values


def _filter_edges(term, drop: dict[int, set[int]]):
    def keep(target, args):
        gone = drop.get(target, set())
        return tuple(a for i, a in enumerate(args) if i not in gone)

    if isinstance(term, Jump):
        return dataclasses.replace(term, args=keep(term.target, term.args))
    if isinstance(term, Branch):
        return dataclasses.replace(term, then_args=keep(term.then_target, term.then_args),
                                   else_args=keep(term.else_target, term.else_args))
    return term


def remove_trivial_params(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    while True:
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
        for b in blocks:
            if not incoming[b.id]:
                continue  # the entry: its params are the function's arguments
            for i, p in enumerate(b.params):
                vals = {resolve(args[i]) for args in incoming[b.id]} - {p}
                if len(vals) == 1:
                    (v,) = vals
                    repl[p.id] = v
                    drop.setdefault(b.id, set()).add(i)
        if not repl:
            return blocks
        blocks = tuple(
            Block(b.id,
                  tuple(p for i, p in enumerate(b.params) if i not in drop.get(b.id, ())),
                  tuple(map_operands(op, resolve) for op in b.ops),
                  _filter_edges(map_operands(b.term, resolve), drop))
            for b in blocks)


def renumber(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    ids: dict[int, Value] = {}

    def new(v: Value) -> Value:
        if v.id not in ids:
            ids[v.id] = Value(len(ids), v.type)
        return ids[v.id]

    for b in blocks:
        for p in b.params:
            new(p)
        for op in b.ops:
            if op.result is not None:
                new(op.result)
    return tuple(
        Block(b.id, tuple(new(p) for p in b.params),
              tuple(map_values(op, new) for op in b.ops), map_operands(b.term, new))
        for b in blocks)
