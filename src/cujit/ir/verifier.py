"""Structural and type invariants of the IR, checked between stages.

- every value is defined exactly once (a block parameter or an op result);
- every operand is defined somewhere in the function;
- every edge targets an existing block with as many arguments as it has params;
- with ``typed=True``, every value has a type and edge arguments match param types.
"""

from __future__ import annotations

from cujit.diagnostics import CujitError
from cujit.ir.core import Function, operands


class VerificationError(CujitError):
    """The IR broke an invariant: a bug in the stage that produced it."""


def verify(fn: Function, typed: bool = False) -> None:
    defined: dict[int, object] = {}
    blocks = {b.id: b for b in fn.blocks}
    if len(blocks) != len(fn.blocks):
        raise VerificationError(f"{fn.name}: duplicate block ids")

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
    for b in fn.blocks:
        for op in (*b.ops, b.term):
            for v in operands(op):
                if v.id not in defined:
                    raise VerificationError(
                        f"{fn.name}: block{b.id}: {type(op).__name__} uses undefined %{v.id}")
                if typed and defined[v.id] != v:
                    raise VerificationError(
                        f"{fn.name}: block{b.id}: %{v.id} used with a different type")
        for target, args in b.term.successors():
            if target not in blocks:
                raise VerificationError(f"{fn.name}: block{b.id} jumps to missing block{target}")
            params = blocks[target].params
            if len(args) != len(params):
                raise VerificationError(
                    f"{fn.name}: block{b.id} passes {len(args)} args to block{target} "
                    f"which has {len(params)} params")
            if typed:
                for a, p in zip(args, params):
                    if a.type != p.type:
                        raise VerificationError(
                            f"{fn.name}: block{b.id} passes {a}: {a.type} to {p}: {p.type} "
                            f"of block{target}")
