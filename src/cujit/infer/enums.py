"""Typing of enum members held at run time (``types.EnumMember``): numba's rules.

A member known at compile time is a constant (an ``IntEnum``'s is an int constant
that remembers its member, any other a ``PyObject``).  A run-time member, of type
``EnumMember(cls, dtype)``, comes from a kernel argument, or from a name or a return
that holds different members of one class on different paths (``unify_members``).
Its value is reached through the intrinsic ``enum.convert`` (the same bits: no code).

    a == b, a is b      members of one class: their values compared (members of one
                        class are equal exactly when their values are, Enum's rule)
    a == b              IntEnum members of different classes: their integers
    a == b, a is b      otherwise (different classes, a member and a number): a
                        constant (False; True for != and is not)
    a + 1, a < 3        an IntEnum member is its integer wherever a number is taken
"""

from __future__ import annotations

import enum

from cujit.diagnostics import Loc, TypingError
from cujit.infer.numeric import describe
from cujit.ir import BinOp, Compare, Intrinsic, TupleGet, Value
from cujit.types import PyObject, Scalar, Tuple, Type, boolean
from cujit.types.enums import EnumMember, member_type


def member_constant(t, v: Value):
    """The enum member ``v`` holds as a compile-time constant, or None."""
    if isinstance(v.type, PyObject) and isinstance(v.type.value, enum.Enum):
        return v.type.value
    value = t.consts.get(v.id)
    return value if isinstance(value, enum.Enum) else None


def _const_type(member: enum.Enum) -> Type:
    from cujit.types import typeof

    return member_type(member, typeof)


def unify_members(a: Type, b: Type) -> Type | None:
    """The type two paths' types meet in where an enum member takes part: members
    (constant or not) of one class whose values have one type give a run-time member,
    an IntEnum member and a number their integers' type; None for anything else."""
    ta = _const_type(a.value) if _is_member_object(a) else a
    tb = _const_type(b.value) if _is_member_object(b) else b
    if isinstance(ta, EnumMember) and isinstance(tb, EnumMember) and ta == tb:
        return ta
    # An IntEnum member meeting a number (or another class's member) is its integer.
    ta, tb = (x.dtype if isinstance(x, EnumMember) and x.is_int else x for x in (ta, tb))
    if isinstance(ta, Scalar) and isinstance(tb, Scalar) and (ta, tb) != (a, b):
        from cujit.infer.numeric import unify

        return unify(ta, tb)
    return None


def _is_member_object(t: Type) -> bool:
    return isinstance(t, PyObject) and isinstance(t.value, enum.Enum)


def to_value(t, v: Value, loc: Loc) -> Value:
    """A run-time member's value."""
    mt: EnumMember = v.type
    return t.emit(Intrinsic(loc=loc, result=t.fresh(mt.dtype), name="enum.convert", args=(v,)))


def from_constant(t, member: enum.Enum, target: EnumMember, loc: Loc) -> Value:
    """The constant ``member`` as a run-time value of ``target`` (its class's type)."""
    if not isinstance(member, target.cls):
        raise TypingError(f"cannot convert {member!r} to {target}", loc)
    raw = member.value
    value = t.cast(t.const(int(raw) if isinstance(raw, bool) else raw, loc), target.dtype, loc)
    return t.emit(Intrinsic(loc=loc, result=t.fresh(target), name="enum.convert", args=(value,)))


def as_run_time(t, v: Value, loc: Loc) -> Value:
    """``v``, or the run-time value of the member constant it holds."""
    member = member_constant(t, v)
    if member is None or isinstance(v.type, EnumMember):
        return v
    return from_constant(t, member, _const_type(member), loc)


def int_value(t, v: Value, loc: Loc) -> Value:
    """An IntEnum run-time member as its integer (anything else as it is)."""
    if isinstance(v.type, EnumMember) and v.type.is_int:
        return to_value(t, v, loc)
    return v


def type_compare(t, op: Compare, a: Value, b: Value) -> bool:
    """Type ``op`` if a run-time member takes part (True when done)."""
    if not (isinstance(a.type, EnumMember) or isinstance(b.type, EnumMember)):
        return False
    ma, mb = _class_of(t, a), _class_of(t, b)
    if ma is not None and ma is mb:  # one class: the members' values
        if op.op not in ("==", "!=", "is", "is not"):
            if not issubclass(ma, int):
                raise TypingError(f"members of {ma.__name__} are not ordered", op.loc)
        else:
            a, b = _same_class_values(t, a, b, op.loc)
            eq = _equal(t, a, b, op.loc)
            if op.op in ("!=", "is not"):
                false = t.const(False, op.loc)
                eq = t.emit(
                    Compare(loc=op.loc, result=t.fresh(boolean), op="==", lhs=eq, rhs=false)
                )
            t.alias(op.result, eq)
            return True
    if op.op in ("is", "is not"):  # different classes, or a member and a number
        t.const(op.op == "is not", op.loc, result=op.result)
        return True
    ints = [int_value(t, v, op.loc) for v in (a, b)]
    if all(isinstance(v.type, Scalar) for v in ints):  # IntEnum members and numbers
        return _compare_numbers(t, op, *ints)
    if op.op in ("==", "!="):  # an Enum member never equals another class's or a number
        t.const(op.op == "!=", op.loc, result=op.result)
        return True
    raise TypingError(
        f"unsupported operand types for {op.op}: '{describe(a.type)}' and '{describe(b.type)}'",
        op.loc,
    )


def _class_of(t, v: Value):
    if isinstance(v.type, EnumMember):
        return v.type.cls
    member = member_constant(t, v)
    return type(member) if member is not None else None


def _same_class_values(t, a: Value, b: Value, loc: Loc) -> tuple[Value, Value]:
    mt = a.type if isinstance(a.type, EnumMember) else b.type
    a, b = (
        v if isinstance(v.type, EnumMember) else from_constant(t, member_constant(t, v), mt, loc)
        for v in (a, b)
    )
    return to_value(t, a, loc), to_value(t, b, loc)


def _equal(t, a: Value, b: Value, loc: Loc) -> Value:
    """``a == b`` of two values of one type: a number, or a tuple item by item."""
    if not isinstance(a.type, Tuple):
        return t.emit(Compare(loc=loc, result=t.fresh(boolean), op="==", lhs=a, rhs=b))
    eq = t.const(True, loc)
    for k, it in enumerate(a.type.items):
        x = t.emit(TupleGet(loc=loc, result=t.fresh(it), tuple=a, index=k))
        y = t.emit(TupleGet(loc=loc, result=t.fresh(it), tuple=b, index=k))
        item = _equal(t, x, y, loc)
        eq = t.emit(BinOp(loc=loc, result=t.fresh(boolean), op="&", lhs=eq, rhs=item))
    return eq


def _compare_numbers(t, op: Compare, a: Value, b: Value) -> bool:
    from cujit.infer.numeric import unify

    common = unify(a.type, b.type)
    lhs, rhs = t.cast(a, common, op.loc), t.cast(b, common, op.loc)
    t.emit(Compare(loc=op.loc, result=Value(op.result.id, boolean), op=op.op, lhs=lhs, rhs=rhs))
    return True
