"""Constant folding: compute ops whose operands are all constants, with the exact
machine semantics of their types.

    %1: int8 = const 127
    %2: int8 = const 1
    %3: int8 = binop + %1 %2
    branch %4 block1() block2()          # %4: bool = const True
  becomes
    %3: int8 = const -128                # int8 wraps around, as the GPU does
    jump block1()

Integers wrap to their width; float32 results are rounded to float32 by
computing in NumPy's float32; ``//`` and ``%`` floor as in Python.  Anything
whose result the hardware leaves undefined or that would trap is left alone:
division by zero, shifts by a negative amount or by at least the width, a
negative integer exponent, float-to-int conversions of NaN, inf or values out
of range.  A folded op keeps its result value, so no use needs rewriting.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from cujit.ir import (
    BinOp,
    Block,
    Branch,
    Cast,
    Compare,
    Const,
    Function,
    Jump,
    TupleGet,
    UnaryOp,
)
from cujit.types import Scalar, Tuple, float32

_NOT_FOLDED = object()


def wrap(value: int, t: Scalar) -> int:
    """``value`` reduced to the range of integer type ``t`` (two's complement)."""
    modulus = 1 << t.bits
    value %= modulus
    if t.kind == "i" and value >= modulus >> 1:
        value -= modulus
    return value


def _int_binop(op: str, a: int, b: int, t: Scalar):
    if op in ("//", "%") and b == 0:
        return _NOT_FOLDED
    if op in ("<<", ">>") and not 0 <= b < t.bits:
        return _NOT_FOLDED
    if op == "**":
        # pow with a modulus never builds the huge intermediate 3 ** 10**9 would.
        return _NOT_FOLDED if b < 0 else wrap(pow(a, b, 1 << t.bits), t)
    fn = _INT_OPS.get(op)
    return _NOT_FOLDED if fn is None else wrap(fn(a, b), t)


# Python's // and % floor and its >> is arithmetic: the IR's meaning for signed ints.
_INT_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}


_FLOAT_OPS = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
    "//": np.floor_divide,
    "%": np.remainder,
    "**": np.power,
}


def _float_binop(op: str, a: float, b: float, t: Scalar):
    if op in ("/", "//", "%") and b == 0:
        return _NOT_FOLDED  # leave the inf/nan (or Python's ZeroDivisionError) to run time
    ufunc = _FLOAT_OPS.get(op)
    if ufunc is None:
        return _NOT_FOLDED
    with np.errstate(all="ignore"):
        # In the type's own NumPy scalar: float32 operands give a rounded float32.
        r = ufunc(t.dtype.type(a), t.dtype.type(b))
        return complex(r) if t.kind == "c" else float(r)


def fold_binop(op: str, a, b, t: Scalar):
    """``a op b`` in type ``t`` (both operands already of type ``t``), or _NOT_FOLDED."""
    if t.kind == "b":
        table = {"&": a and b, "|": a or b, "^": a != b}
        return table.get(op, _NOT_FOLDED)
    if t.is_int:
        return _int_binop(op, a, b, t)
    if t.name == "bfloat16":  # in float32, rounded once (cujit.types.bf16)
        from cujit.types.bf16 import round_value

        r = _float_binop(op, a, b, float32)
        return r if r is _NOT_FOLDED else round_value(r)
    return _float_binop(op, a, b, t)


def fold_unary(op: str, a, t: Scalar):
    if op == "not" or (op == "~" and t.kind == "b"):
        return not a
    if op == "+":
        return a
    if t.is_int:
        return wrap(-a if op == "-" else ~a, t)
    if op == "-":
        return -a  # exact in float32 and float64 alike
    return _NOT_FOLDED


def fold_compare(op: str, a, b):
    # Python's comparisons on ints are exact, and on floats are IEEE (NaN unordered).
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}.get(
        op, _NOT_FOLDED
    )


def fold_cast(a, src: Scalar, dst: Scalar):
    """NumPy ``astype`` semantics, except where the GPU result is undefined."""
    if dst.kind == "b":
        return a != 0
    if src.kind == "b":
        a = int(a)
    if dst.is_int:
        if isinstance(a, float):
            if not math.isfinite(a):
                return _NOT_FOLDED
            a = math.trunc(a)
            if wrap(a, dst) != a:
                return _NOT_FOLDED  # out of range: fptosi/fptoui give poison
        return wrap(a, dst)
    if dst.name == "bfloat16":  # rounded once, as the kernels' conversion (ml_dtypes
        from cujit.types.bf16 import round_value  # rounds float64 twice, via float32)

        return round_value(float(a))
    with np.errstate(all="ignore"):
        src_dtype = src.dtype if src.kind != "b" else np.dtype(np.int64)
        r = np.array(a, dtype=src_dtype).astype(dst.dtype)
        return complex(r) if dst.kind == "c" else float(r)


def _fold_op(op, known: dict[int, object]):
    """The folded value of ``op``, or _NOT_FOLDED."""
    if isinstance(op, BinOp) and op.lhs.id in known and op.rhs.id in known:
        return fold_binop(op.op, known[op.lhs.id], known[op.rhs.id], op.result.type)
    if isinstance(op, UnaryOp) and op.operand.id in known:
        return fold_unary(op.op, known[op.operand.id], op.result.type)
    if isinstance(op, Compare) and op.lhs.id in known and op.rhs.id in known:
        return fold_compare(op.op, known[op.lhs.id], known[op.rhs.id])
    if (
        isinstance(op, Cast)
        and op.operand.id in known
        and isinstance(op.operand.type, Scalar)
        and not any(t.name.startswith("fp8_") for t in (op.operand.type, op.result.type))
    ):
        return fold_cast(known[op.operand.id], op.operand.type, op.result.type)
    if isinstance(op, TupleGet) and op.tuple.id in known:  # a, b = 1, 2.5
        return known[op.tuple.id][op.index]
    return _NOT_FOLDED


def fold_constants(fn: Function) -> Function:
    """Fold constant arithmetic, comparisons, casts, and branches on constants."""
    known: dict[int, object] = {
        op.result.id: op.value
        for op in fn.all_ops()
        if isinstance(op, Const) and isinstance(op.result.type, (Scalar, Tuple))
    }
    blocks = list(fn.blocks)
    changed = True
    while changed:  # a fold in a later block may enable one in an earlier block
        changed = False
        for i, b in enumerate(blocks):
            ops = []
            for op in b.ops:
                foldable = op.result is not None and isinstance(op.result.type, Scalar)
                value = _fold_op(op, known) if foldable else _NOT_FOLDED
                if value is not _NOT_FOLDED:
                    value = _python_value(value, op.result.type)
                    op = Const(loc=op.loc, result=op.result, value=value)
                    known[op.result.id] = value
                    changed = True
                ops.append(op)
            term = b.term
            if isinstance(term, Branch) and term.cond.id in known:
                taken = known[term.cond.id]
                term = Jump(
                    loc=term.loc,
                    target=term.then_target if taken else term.else_target,
                    args=term.then_args if taken else term.else_args,
                )
                changed = True
            blocks[i] = Block(b.id, b.params, tuple(ops), term)
    return dataclasses.replace(fn, blocks=tuple(blocks))  # keeps the callees


def _python_value(value, t: Scalar):
    if t.kind == "b":
        return bool(value)
    if t.kind == "c":
        return complex(value)
    return int(value) if t.is_int else float(value)
