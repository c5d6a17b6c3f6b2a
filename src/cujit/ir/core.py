"""The SSA IR's skeleton: values, the op base, blocks and functions.

Design:
- Every op is a frozen, keyword-only dataclass with a required ``loc``.
- An op defines at most one ``result`` value; values carry their own type
  (``None`` before type inference), never a side table keyed by name.
- Control flow uses block parameters instead of phi nodes: a ``Jump`` or
  ``Branch`` passes one argument per parameter of the target block.
- Operands are found by walking dataclass fields, so passes need no per-op code
  to collect or replace them (see ``operands`` and ``map_operands``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Iterator

from cujit.diagnostics import Loc
from cujit.types import Type


@dataclass(frozen=True)
class Value:
    """An SSA value: a unique id and, after type inference, its type."""

    id: int
    type: Type | None = None

    def __str__(self) -> str:
        return f"%{self.id}"


@dataclass(frozen=True, kw_only=True)
class Op:
    """Base of every IR operation (never instantiated itself)."""

    loc: Loc

    # Ops that produce a value declare a ``result: Value`` field; the rest have None.
    result = None


@dataclass(frozen=True, kw_only=True)
class Terminator(Op):
    """Base of the ops that end a block."""

    def successors(self) -> tuple[tuple[int, tuple[Value, ...]], ...]:
        """(target block id, arguments) for each outgoing edge."""
        return ()


def _walk(obj) -> Iterator[Value]:
    if isinstance(obj, Value):
        yield obj
    elif isinstance(obj, tuple):
        for item in obj:
            yield from _walk(item)


def _rebuild(obj, fn: Callable[[Value], Value]):
    if isinstance(obj, Value):
        return fn(obj)
    if isinstance(obj, tuple):
        return tuple(_rebuild(item, fn) for item in obj)
    return obj


def operands(op: Op) -> list[Value]:
    """The values an op reads, in field order."""
    out: list[Value] = []
    for f in dataclasses.fields(op):
        if f.name not in ("result", "loc"):
            out.extend(_walk(getattr(op, f.name)))
    return out


def map_operands(op: Op, fn: Callable[[Value], Value]) -> Op:
    """A copy of ``op`` with every operand ``v`` replaced by ``fn(v)``."""
    changes = {}
    for f in dataclasses.fields(op):
        if f.name in ("result", "loc"):
            continue
        old = getattr(op, f.name)
        new = _rebuild(old, fn)
        if new != old:
            changes[f.name] = new
    return dataclasses.replace(op, **changes) if changes else op


def map_values(op: Op, fn: Callable[[Value], Value]) -> Op:
    """Like ``map_operands`` but also maps the op's result."""
    op = map_operands(op, fn)
    if op.result is not None:
        op = dataclasses.replace(op, result=fn(op.result))
    return op


@dataclass(frozen=True)
class Block:
    """A basic block: parameters, straight-line ops, one terminator."""

    id: int
    params: tuple[Value, ...]
    ops: tuple[Op, ...]
    term: Terminator


@dataclass(frozen=True)
class Function:
    """One function in SSA form.  ``blocks[0]`` is the entry; its params are the arguments."""

    name: str
    arg_names: tuple[str, ...]
    blocks: tuple[Block, ...]
    loc: Loc
    return_type: Type | None = None

    @property
    def args(self) -> tuple[Value, ...]:
        return self.blocks[0].params

    def block(self, block_id: int) -> Block:
        for b in self.blocks:
            if b.id == block_id:
                return b
        raise KeyError(block_id)

    def all_ops(self) -> Iterator[Op]:
        for b in self.blocks:
            yield from b.ops
            yield b.term

    def max_value_id(self) -> int:
        ids = [v.id for b in self.blocks for v in b.params]
        for op in self.all_ops():
            if op.result is not None:
                ids.append(op.result.id)
        return max(ids, default=-1)
