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
import functools
from typing import Callable, Iterator

from cujit.diagnostics import Loc
from cujit.frozen import frozen
from cujit.types import Type


@frozen
class Value:
    """An SSA value: a unique id and, after type inference, its type."""

    id: int
    type: Type | None = None

    def __str__(self) -> str:
        return f"%{self.id}"


@frozen(kw_only=True, repr=False)
class Op:
    """Base of every IR operation (never instantiated itself).

    Op classes are declared with ``repr=False`` and share this ``__repr__``, which
    gives what the generated one would: dataclasses compiles a ``__repr__`` per class
    at import, and ops are the largest group of classes a compile imports.
    """

    loc: Loc

    # Ops that produce a value declare a ``result: Value`` field; the rest have None.
    result = None

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr
        )
        return f"{type(self).__qualname__}({shown})"


@frozen(kw_only=True, repr=False)
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
    """``obj`` with ``fn`` applied to its values; ``obj`` itself when nothing changed,
    so that callers compare by identity instead of deep equality."""
    if isinstance(obj, Value):
        return fn(obj)
    if isinstance(obj, tuple):
        items = tuple([_rebuild(item, fn) for item in obj])
        return obj if all(a is b for a, b in zip(items, obj, strict=True)) else items
    return obj


# Op class -> the names of its fields that may hold operands.  Passes call
# ``operands``/``map_operands`` on every op several times per compile, and
# ``dataclasses.fields`` rebuilt this list each time (~5% of stages 1-6).
_OPERAND_FIELDS: dict[type, tuple[str, ...]] = {}


def _operand_fields(cls: type) -> tuple[str, ...]:
    names = _OPERAND_FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("result", "loc"))
        _OPERAND_FIELDS[cls] = names
    return names


def replace(op: Op, **changes) -> Op:
    """``dataclasses.replace`` for ops, without its per-call field checks (passes
    rewrite every op of a function, several times per compile).

    Ops are plain frozen dataclasses (no ``__post_init__``, no slots), so a copy
    of the instance dict is the same object ``dataclasses.replace`` would build.
    """
    return _with(op, changes)


def _with(op: Op, changes: dict) -> Op:
    new = object.__new__(type(op))
    new.__dict__.update(op.__dict__)
    new.__dict__.update(changes)
    return new


def operands(op: Op) -> list[Value]:
    """The values an op reads, in field order."""
    out: list[Value] = []
    for name in _operand_fields(type(op)):
        obj = getattr(op, name)
        if isinstance(obj, Value):
            out.append(obj)
        elif isinstance(obj, tuple):
            out.extend(_walk(obj))
    return out


def _operand_changes(op: Op, fn: Callable[[Value], Value]) -> dict:
    """The fields of ``op`` that ``fn`` changes, with their new values."""
    changes = {}
    for name in _operand_fields(type(op)):
        old = getattr(op, name)
        new = _rebuild(old, fn)
        if new is not old:
            changes[name] = new
    return changes


def map_operands(op: Op, fn: Callable[[Value], Value]) -> Op:
    """A copy of ``op`` with every operand ``v`` replaced by ``fn(v)``."""
    changes = _operand_changes(op, fn)
    return _with(op, changes) if changes else op


def map_values(op: Op, fn: Callable[[Value], Value]) -> Op:
    """Like ``map_operands`` but also maps the op's result (one copy for both: irgen's
    renumbering changes nearly every op's operands and result)."""
    changes = _operand_changes(op, fn)
    if op.result is not None:
        result = fn(op.result)
        if result is not op.result:
            changes["result"] = result
    return _with(op, changes) if changes else op


@frozen
class Block:
    """A basic block: parameters, straight-line ops, one terminator."""

    id: int
    params: tuple[Value, ...]
    ops: tuple[Op, ...]
    term: Terminator


@frozen
class Function:
    """One function in SSA form.  ``blocks[0]`` is the entry; its params are the arguments."""

    name: str
    arg_names: tuple[str, ...]
    blocks: tuple[Block, ...]
    loc: Loc
    return_type: Type | None = None
    # The device functions this one calls (typed IR only), each named by the
    # symbol its ``CallFunction`` ops use; they travel with the function through
    # the passes to lowering, which emits them into the kernel's module.
    callees: tuple[Function, ...] = ()
    # (value id, Python variable name) for each SSA value a local variable holds
    # (assignments and the block parameters that merge it): debug info names them.
    var_names: tuple[tuple[int, str], ...] = ()
    # A device function's inlining (``jit(inline=..., forceinline=...)``): ``inline``,
    # stage 5 puts its body in place of each call (``passes/inline.py``); ``forceinline``,
    # it stays a call and its LLVM function is ``alwaysinline``.
    inline: bool = False
    forceinline: bool = False

    @property
    def args(self) -> tuple[Value, ...]:
        return self.blocks[0].params

    def callee(self, symbol: str) -> Function:
        """The callee a ``CallFunction`` names (the function itself for ``SELF_CALL``,
        ``cujit.ir.calls``: a recursive call)."""
        if symbol == "<self>":
            return self
        for f in self.callees:
            if f.name == symbol:
                return f
        raise KeyError(f"{self.name}: no callee {symbol!r}")

    def reachable(self) -> Iterator[Function]:
        """This function, then every device function it calls, directly or through
        others, each once (by identity), depth first in the order of ``callees``: a
        walk with its own stack, so a chain of callees of any length walks."""
        seen: set[int] = set()
        todo = [self]
        while todo:
            f = todo.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            yield f
            todo.extend(reversed(f.callees))

    def block(self, block_id: int) -> Block:
        return self._blocks_by_id[block_id]

    @functools.cached_property
    def _blocks_by_id(self) -> dict[int, Block]:
        # Built once per function: stages look blocks up by id on every edge.
        return {b.id: b for b in self.blocks}

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
