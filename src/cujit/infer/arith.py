"""Typing rules for constants and arithmetic: Const, Undef, BinOp, UnaryOp, Compare, Cast.

Each rule reads typed operands, casts them to the type the operation computes
in (see ``numeric``), and emits the typed op into the original result id:

    %3 = binop + %1, %2          # %1: int32, %2: float32
  becomes
    %9: float64 = cast %1
    %10: float64 = cast %2
    %3: float64 = binop + %9, %10
"""

from __future__ import annotations

from cujit.diagnostics import TypingError
from cujit.infer import contains, datetime_ops, enums, optional
from cujit.infer.context import Typer
from cujit.infer.cuda_calls import global_array
from cujit.infer.extension_attrs import (
    extension_identity,
    extension_operator,
    extension_unary,
)
from cujit.infer.extension_templates import COMPARISONS
from cujit.infer.numeric import arith_type, describe, unary_type, unify
from cujit.infer.uninit import unassigned_type
from cujit.ir import BinOp, Cast, Compare, Const, UnaryOp, Undef, Value
from cujit.types import NoneType, PyObject, Scalar, Type, boolean, none
from cujit.types.core import is_device_array_global
from cujit.types.datetimes import is_datetime_kind


def type_const(t: Typer, op: Const) -> None:
    if is_device_array_global(op.value):  # taken by reference, as numba-cuda does
        global_array(t, op.value, op.loc, lambda ty: Value(op.result.id, ty))
        return
    t.const(op.value, op.loc, result=op.result)  # a literal ``1j`` is complex128, as numba


def type_undef(t: Typer, op: Undef) -> None:
    # An unset variable takes the type of the block parameter it merges into
    # (``undef_types``, gathered from the edges by the driver).
    # Read with no merge partner: the type of the variable's assignments (infer/uninit.py).
    ty: Type | None = t.undef_types.get(op.result.id)
    if ty is None:
        ty = unassigned_type(t, op.name, op.loc)
    if ty is None and t.final:
        ty = none
    t.undef_names[op.result.id] = op.name
    t.emit(Undef(loc=op.loc, result=Value(op.result.id, ty), name=op.name))


def _operand_types(t: Typer, op, a: Value, b: Value) -> tuple[Scalar, Scalar]:
    """Both operands' Scalar types, or a TypingError naming the operator and types."""
    for v in (a, b):
        t.check_not_string(v, op.loc)
        t.check_defined(v, op.loc)
    if not (isinstance(a.type, Scalar) and isinstance(b.type, Scalar)):
        raise TypingError(
            f"unsupported operand types for {op.op}: '{describe(a.type)}' and '{describe(b.type)}'",
            op.loc,
        )
    return a.type, b.type


def type_binop(t: Typer, op: BinOp) -> None:
    a, b = t.value(op.lhs), t.value(op.rhs)
    a, b = optional.unwrap(t, a, op.loc), optional.unwrap(t, b, op.loc)
    a, b = enums.int_value(t, a, op.loc), enums.int_value(t, b, op.loc)  # IntEnum: its int
    if is_datetime_kind(a.type) or is_datetime_kind(b.type):
        datetime_ops.type_binop(t, op, a, b)
        return
    if extension_operator(t, op, a, b):  # a library's value (cujit.extending)
        return
    ta, tb = _operand_types(t, op, a, b)
    if op.op == "**" and (ta.is_complex or tb.is_complex):
        _complex_power(t, op, a, b, unify(ta, tb))
        return
    rule = arith_type(op.op, ta, tb)
    if isinstance(rule, str):
        raise TypingError(
            f"unsupported operand types for {op.op}: '{ta}' and '{tb}' ({rule})", op.loc
        )
    lt, rt, res = rule
    lhs, rhs = t.cast(a, lt, op.loc), t.cast(b, rt, op.loc)
    t.emit(BinOp(loc=op.loc, result=Value(op.result.id, res), op=op.op, lhs=lhs, rhs=rhs))
    _fold_int_constants(t, op, a, b, res)


_INT_FOLDS = {
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
    "//": lambda x, y: x // y if y else None,
    "%": lambda x, y: x % y if y else None,
    "<<": lambda x, y: x << y if 0 <= y < 64 else None,
    ">>": lambda x, y: x >> y if 0 <= y < 64 else None,
    "&": lambda x, y: x & y,
    "|": lambda x, y: x | y,
    "^": lambda x, y: x ^ y,
}


def _fold_int_constants(t: Typer, op: BinOp, a: Value, b: Value, res) -> None:
    """An integer operation of two compile-time constants has a compile-time value too
    (``STAGES - 2``, ``BK + PAD`` of globals), as numba infers it: shapes and the other
    arguments that must be constants may be written so.  The op itself stays (stage 5
    folds it)."""
    x, y = t.const_value(a), t.const_value(b)
    fold = _INT_FOLDS.get(op.op)
    if fold is None or not isinstance(res, Scalar) or res.kind not in "iu":
        return
    if type(x) is not int or type(y) is not int:
        return
    value = fold(x, y)
    lo, hi = (0, 2**res.bits) if res.kind == "u" else (-(2 ** (res.bits - 1)), 2 ** (res.bits - 1))
    if value is not None and lo <= value < hi:  # else it wraps at run time: not folded here
        t.consts[op.result.id] = value


def _complex_power(t: Typer, op: BinOp, a: Value, b: Value, common: Scalar) -> None:
    """``a ** b`` with a complex operand: the device function ``complex_power`` for
    the common complex type."""
    from cujit.infer.calls import CallSite
    from cujit.infer.complex_pow import COMPLEX_POWER
    from cujit.infer.function_calls import call_device_function

    args = [t.cast(a, common, op.loc), t.cast(b, common, op.loc)]
    site = CallSite(op, "**", args, {})
    call_device_function(t, op, COMPLEX_POWER, site)
    out = t.value(op.result)
    if out.type != common:  # float32 parts may widen inside: the result is the operands'
        t.alias(op.result, t.cast(out, common, op.loc))


def type_unaryop(t: Typer, op: UnaryOp) -> None:
    a = t.value(op.operand)
    if op.op == "not":
        cond = t.to_bool(a, op.loc)
        if cond.id in t.consts:  # `not` of a compile-time object folds right here
            t.const(not t.consts[cond.id], op.loc, result=op.result)
            return
        t.emit(UnaryOp(loc=op.loc, result=Value(op.result.id, boolean), op="not", operand=cond))
        return
    if extension_unary(t, op, a):  # a library's value (cujit.extending)
        return
    ta = t.scalar(a, op.loc, f"unary {op.op}")
    rule = unary_type(op.op, ta)
    if isinstance(rule, str):
        raise TypingError(f"unsupported operand type for unary {op.op}: '{ta}' ({rule})", op.loc)
    operand = t.cast(a, rule, op.loc)
    t.emit(UnaryOp(loc=op.loc, result=Value(op.result.id, rule), op=op.op, operand=operand))


def _is_object(v: Value) -> bool:
    return isinstance(v.type, (NoneType, PyObject))


def _fold_identity(t: Typer, op: Compare, a: Value, b: Value) -> bool:
    """``a is b`` (or ``==`` on compile-time objects) decided at compile time."""
    both = _is_object(a) and _is_object(b)  # two constants: strings compare too, as numba's
    for v in (a, b):
        t.check_defined(v, op.loc)
        if op.op in ("==", "!=") and not both:
            t.check_not_string(v, op.loc)
    if both:
        va, vb = t.const_value(a), t.const_value(b)
        return va is vb if op.op in ("is", "is not") else va == vb
    if isinstance(a.type, NoneType) or isinstance(b.type, NoneType):
        return False  # a number, array or tuple is never None
    raise TypingError(
        f"'{op.op}' is only supported for comparisons with None, not between "
        f"'{describe(a.type)}' and '{describe(b.type)}'",
        op.loc,
    )


_COMPARE = {
    "==": lambda x, y: x == y,
    "!=": lambda x, y: x != y,
    "<": lambda x, y: x < y,
    "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y,
    ">=": lambda x, y: x >= y,
}


def _fold_constant_compare(t: Typer, op: Compare, a: Value, b: Value) -> bool:
    """A comparison of two compile-time integers or bools (``FLAG is True`` of a global
    or a closure's constant) is a constant, so a branch on it types only the side it
    takes, as numba prunes such branches."""
    va, vb = t.consts.get(a.id), t.consts.get(b.id)
    kinds = (int, bool)
    if op.op not in _COMPARE or not (isinstance(va, kinds) and isinstance(vb, kinds)):
        return False
    if not all(isinstance(v.type, Scalar) and v.type.kind in "biu" for v in (a, b)):
        return False
    t.const(bool(_COMPARE[op.op](va, vb)), op.loc, result=op.result)
    return True


def type_compare(t: Typer, op: Compare) -> None:
    if op.op in ("in", "not in"):
        contains.type_contains(t, op)
        return
    a, b = t.value(op.lhs), t.value(op.rhs)
    if op.op in ("is", "is not") and isinstance(b.type, NoneType):
        if isinstance(a.type, optional.OptionalType):  # r is None: r holds no value
            optional.is_none(t, a, op.op == "is not", op.loc, op.result)
            return
    a, b = optional.unwrap(t, a, op.loc), optional.unwrap(t, b, op.loc)
    if op.op in ("is", "is not") and a.type == b.type == boolean:
        # ``pred is True``: bools are singletons, so identity is equality (numba too)
        op = Compare(
            loc=op.loc, result=op.result, op="==" if op.op == "is" else "!=", lhs=op.lhs, rhs=op.rhs
        )
    if enums.type_compare(t, op, a, b) or (  # a run-time enum member, a library's value
        extension_operator(t, op, a, b)
        if op.op in COMPARISONS
        else op.op in ("is", "is not") and extension_identity(t, op, a, b)
    ):
        return
    if op.op in ("is", "is not") or _is_object(a) or _is_object(b):
        same = _fold_identity(t, op, a, b)
        t.const(same if op.op in ("is", "==") else not same, op.loc, result=op.result)
        return
    if is_datetime_kind(a.type) or is_datetime_kind(b.type):
        datetime_ops.type_compare(t, op, a, b)
        return
    if _fold_constant_compare(t, op, a, b):
        return
    ta, tb = _operand_types(t, op, a, b)
    common = unify(ta, tb)
    if common.is_complex and op.op not in ("==", "!="):
        raise TypingError(
            f"unsupported operand types for {op.op}: '{ta}' and '{tb}' "
            "(complex numbers are not ordered: only == and != compare them)",
            op.loc,
        )
    lhs, rhs = t.cast(a, common, op.loc), t.cast(b, common, op.loc)
    t.emit(Compare(loc=op.loc, result=Value(op.result.id, boolean), op=op.op, lhs=lhs, rhs=rhs))


def type_cast(t: Typer, op: Cast) -> None:
    # irgen does not emit casts, but a typed one passes through unchanged.
    a = t.value(op.operand)
    if op.result.type is None:
        raise TypingError("cast without a target type", op.loc)
    t.scalar(a, op.loc, "a conversion")
    t.alias(op.result, t.cast(a, op.result.type, op.loc))
