"""The typed-IR contract (docs/typed-ir.md), op by op: operand and result types.

``check_op(fn, op)`` returns what is wrong with one op of typed function ``fn``, or
None.  ``verifier.verify(fn, typed=True)`` calls it for every op and terminator.
"""

from __future__ import annotations

from cujit.ir import intrinsics
from cujit.ir.arith import BinOp, Cast, Compare, Const, UnaryOp, Undef
from cujit.ir.calls import SELF_CALL, Call, CallFunction, Intrinsic
from cujit.ir.control import Branch, GetIter, IterNext, IterValid, IterValue, Jump, Raise, Return
from cujit.ir.core import Function, Op
from cujit.ir.memory import BuildTuple, GetAttr, GetItem, SetAttr, SetItem, TupleGet
from cujit.types.core import (
    Array,
    NoneType,
    PyObject,
    RangeIter,
    RangeType,
    Scalar,
    Tuple,
    boolean,
    int64,
)

_COMPLEX_BINARY = ("+", "-", "*", "/")
_BOOL_BINARY = ("&", "|", "^")


def _scalar(t) -> bool:
    return isinstance(t, Scalar)


def _binop(op: BinOp) -> str | None:
    t = op.result.type
    if not (_scalar(t) and op.lhs.type == t and op.rhs.type == t):
        return f"binop {op.op} needs one Scalar type, has {op.lhs.type}, {op.rhs.type} -> {t}"
    if op.op == "/" and t.kind not in "fc":
        return f"'/' on {t} (ints are cast to float64 first)"
    if t.kind == "c" and op.op not in _COMPLEX_BINARY:
        return f"'{op.op}' on complex {t}"
    if t.kind == "b" and op.op not in _BOOL_BINARY:
        return f"arithmetic '{op.op}' on bool"
    return None


def _unaryop(op: UnaryOp) -> str | None:
    t, src = op.result.type, op.operand.type
    if op.op == "not":
        return None if t == boolean and src == boolean else f"not: {src} -> {t}, not bool"
    if not (_scalar(t) and src == t):
        return f"unary {op.op}: {src} -> {t}"
    return None


def _compare(op: Compare) -> str | None:
    a, b = op.lhs.type, op.rhs.type
    if not (_scalar(a) and a == b and op.result.type == boolean):
        return f"compare {op.op}: {a}, {b} -> {op.result.type}"
    if a.kind == "c" and op.op not in ("==", "!="):
        return f"'{op.op}' on complex {a}"
    return None


def _cast(op: Cast) -> str | None:
    src, dst = op.operand.type, op.result.type
    if _scalar(src) and _scalar(dst):
        if src.kind == "c" and dst.kind not in "cb":
            return f"cast of complex {src} to {dst}"
        return None
    if (
        isinstance(src, Array)
        and isinstance(dst, Array)
        and src.dtype == dst.dtype
        and src.ndim == dst.ndim
        and dst.layout == "A"
    ):
        return None
    return f"cast {src} -> {dst}"


def _index(arr, index) -> str | None:
    if not isinstance(arr, Array):
        return f"indexing {arr}, not an array"
    t = index.type
    if arr.ndim == 1 and t == int64:
        return None
    if isinstance(t, Tuple) and len(t.items) == arr.ndim and all(i == int64 for i in t.items):
        return None
    return f"index {t} into {arr}"


def _getitem(op: GetItem) -> str | None:
    wrong = _index(op.obj.type, op.index)
    if wrong is None and op.result.type != op.obj.type.dtype:
        wrong = f"getitem of {op.obj.type} gives {op.result.type}"
    return wrong


def _setitem(op: SetItem) -> str | None:
    wrong = _index(op.obj.type, op.index)
    if wrong is None and op.value.type != op.obj.type.dtype:
        wrong = f"setitem of {op.value.type} into {op.obj.type}"
    return wrong


def _build_tuple(op: BuildTuple) -> str | None:
    t = op.result.type
    if isinstance(t, Tuple) and t.items == tuple(v.type for v in op.items):
        return None
    return f"build_tuple of {[str(v.type) for v in op.items]} gives {t}"


def _tuple_get(op: TupleGet) -> str | None:
    t = op.tuple.type
    if not isinstance(t, Tuple) or not 0 <= op.index < len(t.items):
        return f"tuple_get {op.index} of {t}"
    if op.result.type != t.items[op.index]:
        return f"tuple_get {op.index} of {t} gives {op.result.type}"
    return None


def _const(op: Const) -> str | None:
    if isinstance(op.result.type, (Scalar, Tuple, NoneType, PyObject)):
        return None
    return f"const of type {op.result.type}"


def _iteration(op) -> str | None:
    if isinstance(op, GetIter):
        if isinstance(op.obj.type, RangeType) and op.result.type == RangeIter(op.obj.type.itype):
            return None
        return f"get_iter {op.obj.type} -> {op.result.type}"
    expect = {IterValid: boolean, IterValue: int64, IterNext: RangeIter(int64)}[type(op)]
    if isinstance(op.iter.type, RangeIter) and op.result.type == expect:
        return None
    return f"{type(op).__name__} on {op.iter.type} gives {op.result.type}, not {expect}"


def _intrinsic(op: Intrinsic) -> str | None:
    row = intrinsics.row(op.name)
    if row is None:
        return f"intrinsic '{op.name}' is not in the intrinsic table (cujit.ir.intrinsics)"
    if row.arity is not None and len(op.args) != row.arity:
        return f"intrinsic '{op.name}' takes {row.arity} operands, has {len(op.args)}"
    return None


def _call_function(fn: Function, op: CallFunction) -> str | None:
    callee = (
        fn if op.callee == SELF_CALL else next((c for c in fn.callees if c.name == op.callee), None)
    )
    if callee is None:
        return f"call of '{op.callee}', which is not among the callees"
    params = tuple(p.type for p in callee.args)
    if tuple(a.type for a in op.args) != params:
        return f"call of '{op.callee}' with {[str(a.type) for a in op.args]}"
    returns = callee.return_type if callee.return_type is not None else NoneType("void")
    if isinstance(returns, NoneType) != isinstance(op.result.type, NoneType) or (
        not isinstance(returns, NoneType) and op.result.type != returns
    ):
        return f"call of '{op.callee}' gives {op.result.type}, it returns {returns}"
    return None


def _return(fn: Function, term: Return) -> str | None:
    rt = fn.return_type
    if rt is None or isinstance(rt, NoneType):
        return None if term.value is None else f"return of a value from a {rt or 'void'} function"
    if term.value is None or term.value.type != rt:
        got = "nothing" if term.value is None else term.value.type
        return f"return of {got} from a function returning {rt}"
    return None


_CHECKS = {
    Const: _const,
    BinOp: _binop,
    UnaryOp: _unaryop,
    Compare: _compare,
    Cast: _cast,
    GetItem: _getitem,
    SetItem: _setitem,
    BuildTuple: _build_tuple,
    TupleGet: _tuple_get,
    GetIter: _iteration,
    IterValid: _iteration,
    IterValue: _iteration,
    IterNext: _iteration,
    Intrinsic: _intrinsic,
    Undef: lambda op: None,
    Jump: lambda op: None,
    Raise: lambda op: None,
    Branch: lambda op: None if op.cond.type == boolean else f"branch on {op.cond.type}",
}


def check_op(fn: Function, op: Op) -> str | None:
    """What ``op`` of typed function ``fn`` breaks in the contract, or None."""
    if isinstance(op, (Call, GetAttr, SetAttr)):
        return f"{type(op).__name__} must not remain after type inference"
    if isinstance(op, CallFunction):
        return _call_function(fn, op)
    if isinstance(op, Return):
        return _return(fn, op)
    check = _CHECKS.get(type(op))
    if check is None:
        return f"{type(op).__name__} is not an op of the typed IR"
    return check(op)
