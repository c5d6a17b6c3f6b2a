"""The ``operator`` module's functions as callees: ``operator.add(a, b)`` is ``a + b``.

A kernel or device function may receive ``operator.add`` as a value (a reduction
taking its combining function); the call types exactly as the operator it names:

    %5 = call %3(%1, %2)          # %3 = const <operator.add>
  becomes
    %5: float64 = binop + %1, %2
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

from cujit.infer.arith import type_binop, type_compare, type_unaryop
from cujit.infer.context import Typer
from cujit.ir import BinOp, Compare, UnaryOp, Value

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

_BINARY = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "pow": "**",
    "and_": "&",
    "or_": "|",
    "xor": "^",
    "lshift": "<<",
    "rshift": ">>",
}
_COMPARE = {"lt": "<", "le": "<=", "eq": "==", "ne": "!=", "ge": ">=", "gt": ">"}
_UNARY = {"neg": "-", "pos": "+", "invert": "~", "not_": "not"}


def _binary(symbol: str, compare: bool):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 2)
        a, b = site.args
        cls, typer = (Compare, type_compare) if compare else (BinOp, type_binop)
        typer(t, cls(loc=site.loc, result=site.op.result, op=symbol, lhs=a, rhs=b))
        return t.value(site.op.result)

    return rule


def _unary(symbol: str):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1)
        type_unaryop(
            t, UnaryOp(loc=site.loc, result=site.op.result, op=symbol, operand=site.args[0])
        )
        return t.value(site.op.result)

    return rule


def operator_rules() -> dict:
    """``operator.add`` and friends (the in-place ``iadd``... on numbers are the same)."""
    rules = {}
    for name, symbol in _BINARY.items():
        rules[getattr(operator, name)] = _binary(symbol, False)
        inplace = "i" + name.rstrip("_")
        if hasattr(operator, inplace):
            rules[getattr(operator, inplace)] = _binary(symbol, False)
    for name, symbol in _COMPARE.items():
        rules[getattr(operator, name)] = _binary(symbol, True)
    for name, symbol in _UNARY.items():
        rules[getattr(operator, name)] = _unary(symbol)
    return rules
