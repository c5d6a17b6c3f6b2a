"""Structural and type invariants of the IR, checked between stages.

- every value is defined exactly once (a block parameter or an op result);
- every operand is defined somewhere in the function;
- every edge targets an existing block with as many arguments as it has params;
- every ``Intrinsic`` names a row of the intrinsic table (``ir.intrinsics``);
- with ``typed=True``, every value has a type, edge arguments match param types, and
  every op keeps the typed-IR contract of docs/typed-ir.md (``ir.contract``).

A failure is a bug in the stage that produced the IR, not in the user's kernel:
``VerificationError`` is no user error, so the pipeline reports it as an
``InternalCompilerError`` naming the stage and the kernel.
"""

from __future__ import annotations

from cujit.ir.calls import Intrinsic
from cujit.ir.contract import check_op
from cujit.ir.core import Block, Function, operands
from cujit.ir.intrinsics import row as intrinsic_row


class VerificationError(Exception):
    """The IR broke an invariant: a bug in the stage that produced it."""


def verify(fn: Function, typed: bool = False) -> None:
    """Raise ``VerificationError`` if ``fn`` breaks an invariant (see the module doc)."""
    blocks = {b.id: b for b in fn.blocks}
    if len(blocks) != len(fn.blocks):
        raise VerificationError(f"{fn.name}: duplicate block ids")
    defined = _definitions(fn, typed)
    for b in fn.blocks:
        for op in (*b.ops, b.term):
            _check_operands(fn, b, op, defined, typed)
            wrong = check_op(fn, op) if typed else _untyped(op)
            if wrong is not None:
                raise VerificationError(
                    f"{fn.name}: block{b.id}: {type(op).__name__} at {op.loc}: {wrong}"
                )
        _check_edges(fn, b, blocks, typed)


def _untyped(op) -> str | None:
    if isinstance(op, Intrinsic) and intrinsic_row(op.name) is None:
        return f"intrinsic '{op.name}' is not in the intrinsic table (cujit.ir.intrinsics)"
    return None


def _definitions(fn: Function, typed: bool) -> dict[int, object]:
    defined: dict[int, object] = {}

    def define(v, where):
        if v.id in defined:
            raise VerificationError(f"{fn.name}: %{v.id} defined twice ({where})")
        if typed and v.type is None:
            raise VerificationError(f"{fn.name}: %{v.id} has no type ({where})")
        defined[v.id] = v

    for b in fn.blocks:
        for p in b.params:
            define(p, f"param of block{b.id}")
        for op in b.ops:
            if op.result is not None:
                define(op.result, type(op).__name__)
    return defined


def _check_operands(fn: Function, b: Block, op, defined: dict, typed: bool) -> None:
    for v in operands(op):
        if v.id not in defined:
            raise VerificationError(
                f"{fn.name}: block{b.id}: {type(op).__name__} uses undefined %{v.id}"
            )
        if typed and defined[v.id] != v:
            raise VerificationError(f"{fn.name}: block{b.id}: %{v.id} used with a different type")


def _check_edges(fn: Function, b: Block, blocks: dict, typed: bool) -> None:
    for target, args in b.term.successors():
        if target not in blocks:
            raise VerificationError(f"{fn.name}: block{b.id} jumps to missing block{target}")
        params = blocks[target].params
        if len(args) != len(params):
            raise VerificationError(
                f"{fn.name}: block{b.id} passes {len(args)} args to block{target} "
                f"which has {len(params)} params"
            )
        if typed:
            for a, p in zip(args, params, strict=True):
                if a.type != p.type:
                    raise VerificationError(
                        f"{fn.name}: block{b.id} passes {a}: {a.type} to {p}: {p.type} "
                        f"of block{target}"
                    )
