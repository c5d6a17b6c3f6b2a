"""Constants and arithmetic: the ops that compute values from values."""

from __future__ import annotations

from cujit.frozen import frozen
from cujit.ir.core import Op, Value

BINARY_OPS = ("+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^")
UNARY_OPS = ("-", "+", "~", "not")
# "in" and "not in" occur in untyped IR only: stage 4 writes them out as equalities.
COMPARE_OPS = ("<", "<=", ">", ">=", "==", "!=", "is", "is not", "in", "not in")


@frozen(kw_only=True, repr=False)
class Const(Op):
    """A compile-time constant: a number, bool, None, a tuple, or a Python object
    (module, function, dtype) frozen from the kernel's globals or closure."""

    result: Value
    value: object


@frozen(kw_only=True, repr=False)
class Undef(Op):
    """The value of a local variable on a path where it was never assigned."""

    result: Value
    name: str


@frozen(kw_only=True, repr=False)
class BinOp(Op):
    """``lhs op rhs`` with Python's meaning (``//`` and ``%`` floor, ``/`` is true division)."""

    result: Value
    op: str
    lhs: Value
    rhs: Value


@frozen(kw_only=True, repr=False)
class UnaryOp(Op):
    """``op operand`` for ``-``, ``+``, ``~`` and ``not``."""

    result: Value
    op: str
    operand: Value


@frozen(kw_only=True, repr=False)
class Compare(Op):
    """``lhs op rhs`` producing a bool (chained comparisons arrive already split)."""

    result: Value
    op: str
    lhs: Value
    rhs: Value


@frozen(kw_only=True, repr=False)
class Cast(Op):
    """Convert ``operand`` to ``result.type`` (numeric conversion, as NumPy's astype)."""

    result: Value
    operand: Value
