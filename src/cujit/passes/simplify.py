"""Control-flow cleanup: merge a block into its only predecessor when that
predecessor ends by jumping to it, and turn a branch whose two edges are the
same into a jump.

    block0:
      %1: int64 = const 1
      jump block1(%1)
    block1(%2: int64):                  # block0 is its only predecessor
      setitem %0 %2 %2
      return
  becomes
    block0:
      %1: int64 = const 1
      setitem %0 %1 %1
      return

The merged block's parameters are replaced by the jump's arguments everywhere
(the block may dominate others that read them).  Constant folding leaves such
chains behind when it turns branches into jumps.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from cujit.ir import Block, Branch, Function, Jump, Value, map_operands


def _same_edge_branches_to_jumps(blocks: list[Block]) -> list[Block]:
    out = []
    for b in blocks:
        t = b.term
        if isinstance(t, Branch) and t.then_target == t.else_target and t.then_args == t.else_args:
            b = Block(
                b.id, b.params, b.ops, Jump(loc=t.loc, target=t.then_target, args=t.then_args)
            )
        out.append(b)
    return out


def _find_merge(blocks: list[Block], entry: int) -> tuple[int, int] | None:
    """(index of predecessor, index of block) of one mergeable pair, if any."""
    preds = Counter(target for b in blocks for target, _ in b.term.successors())
    index = {b.id: i for i, b in enumerate(blocks)}
    for i, b in enumerate(blocks):
        t = b.term
        if isinstance(t, Jump) and t.target != b.id and t.target != entry and preds[t.target] == 1:
            return i, index[t.target]
    return None


def _substitute(blocks: list[Block], subst: dict[int, Value]) -> list[Block]:
    def sub(v: Value) -> Value:
        return subst.get(v.id, v)

    return [
        Block(
            b.id, b.params, tuple(map_operands(op, sub) for op in b.ops), map_operands(b.term, sub)
        )
        for b in blocks
    ]


def merge_blocks(fn: Function) -> Function:
    """``fn`` with straight-line chains of blocks merged into single blocks."""
    blocks = _same_edge_branches_to_jumps(list(fn.blocks))
    entry = blocks[0].id
    while (pair := _find_merge(blocks, entry)) is not None:
        i, j = pair
        pred, succ = blocks[i], blocks[j]
        subst = {p.id: a for p, a in zip(succ.params, pred.term.args, strict=True)}
        blocks[i] = Block(pred.id, pred.params, pred.ops + succ.ops, succ.term)
        del blocks[j]
        if subst:
            blocks = _substitute(blocks, subst)
    return dataclasses.replace(fn, blocks=tuple(blocks))  # keeps the callees
