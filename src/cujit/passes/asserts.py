"""Drop ``assert`` checks (when not compiling in debug mode, as numba does by default).

A branch to a block that only raises AssertionError becomes a jump to its other
target; dead-code elimination then removes the raising block and, when nothing
else reads it, the condition:

    block0(%0: array(float64, 1d, C)):
      %2: float64 = getitem %0 %1
      %4: bool = compare >= %2 %3
      branch %4, block2(), block1()
    block1:
      %5: pyobject(builtins.AssertionError) = const <builtins.AssertionError>
      raise %5 'negative input'
  becomes
    block0(%0: array(float64, 1d, C)):
      %2: float64 = getitem %0 %1
      %4: bool = compare >= %2 %3
      jump block2()

Explicit ``raise`` statements of other exception classes are kept.
"""

from __future__ import annotations

import dataclasses

from cujit.ir import Block, Branch, Const, Function, Jump, Raise


def _is_assert_block(block: Block) -> bool:
    term = block.term
    if not isinstance(term, Raise) or term.exc is None or block.params:
        return False
    for op in block.ops:
        if isinstance(op, Const) and op.result.id == term.exc.id:
            return op.value is AssertionError
    return False


def drop_asserts(fn: Function) -> Function:
    failing = {b.id for b in fn.blocks if _is_assert_block(b)}
    if not failing:
        return fn
    blocks = []
    for b in fn.blocks:
        t = b.term
        if isinstance(t, Branch) and (t.then_target in failing) != (t.else_target in failing):
            target, args = (
                (t.else_target, t.else_args)
                if t.then_target in failing
                else (t.then_target, t.then_args)
            )
            b = Block(b.id, b.params, b.ops, Jump(loc=t.loc, target=target, args=args))
        blocks.append(b)
    return dataclasses.replace(fn, blocks=tuple(blocks))
