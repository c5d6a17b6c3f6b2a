"""Typing of ``x in t`` and ``x not in t`` for a tuple ``t``.

Python's ``tuple.__contains__`` compares ``x`` with each item for equality; numba
does the same for its tuples.  Stage 4 writes that out, so the typed IR has no
``in``::

    %r = compare in %x %t          # t: tuple(int64, int64)
  becomes
    %a = tupleget %t 0
    %b = compare == %x %a
    %c = tupleget %t 1
    %d = compare == %x %c
    %r = binop | %b %d

Comparing numbers has no effects, so testing every item gives what Python's
stopping at the first match gives.  ``not in`` is the negation.
"""

from __future__ import annotations

from cujit.diagnostics import UnsupportedError
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import BinOp, Compare, TupleGet, UnaryOp, Value
from cujit.types import PyObject, Tuple, boolean


def type_contains(t: Typer, op: Compare) -> None:
    """``op`` is an untyped ``in`` / ``not in`` Compare."""
    from cujit.infer.arith import type_compare

    x, seq = t.value(op.lhs), t.value(op.rhs)
    if isinstance(seq.type, PyObject) and seq.type.value == ():  # ``x in ()``
        seq = None
    elif not isinstance(seq.type, Tuple):
        raise UnsupportedError(
            f"the '{op.op}' operator is supported with a tuple on its right, "
            f"not with '{describe(seq.type)}'",
            op.loc,
        )
    found = None
    for k, item_type in enumerate(seq.type.items if seq is not None else ()):
        item = t.emit(TupleGet(loc=op.loc, result=t.fresh(item_type), tuple=seq, index=k))
        same = t.fresh(None)
        type_compare(t, Compare(loc=op.loc, result=same, op="==", lhs=x, rhs=item))
        same = t.value(same)
        found = same if found is None else _binop(t, op, "|", found, same)
    if found is None:  # ``x in ()``
        found = t.const(False, op.loc)
    if op.op == "not in":
        found = t.emit(UnaryOp(loc=op.loc, result=t.fresh(boolean), op="not", operand=found))
    t.alias(op.result, found)


def _binop(t: Typer, op: Compare, name: str, a: Value, b: Value) -> Value:
    return t.emit(BinOp(loc=op.loc, result=t.fresh(boolean), op=name, lhs=a, rhs=b))
