"""Optional results: a device function that returns a number on some paths and nothing
(``return``, ``return None``) on others returns ``OptionalType`` (numba's
``Optional``): at run time a (present, value) pair, the value 0 where absent.

    def maybe(x):                 # returns optional(int64)
        if x > 0:
            return x + 1
        return

Its callers test it with ``r is None`` / ``r is not None`` and use it as the number
it holds (a store, arithmetic, a conversion): as numba, an absent value is not
checked there.
"""

from __future__ import annotations

from cujit.diagnostics import Loc
from cujit.frozen import frozen
from cujit.ir import BuildTuple, Cast, Const, TupleGet, UnaryOp, Value
from cujit.types import NoneType, Scalar, Tuple, Type, boolean


@frozen(repr=False)
class OptionalType(Tuple):
    """``optional(T)``: items (bool present, T value)."""

    __hash__ = Tuple.__hash__

    def __str__(self) -> str:
        return f"optional({self.items[1]})"


def optional_of(t: Type) -> OptionalType | None:
    """The optional type of a function's numeric return type (None: not a number)."""
    return OptionalType((boolean, t)) if isinstance(t, Scalar) else None


def wrap(t, v: Value | None, ty: OptionalType, loc: Loc) -> Value:
    """A ``return v`` (``v`` None: a bare ``return``) as the optional pair."""
    present = t.const(v is not None, loc)
    if v is None:
        zero = t.emit(Const(loc=loc, result=t.fresh(ty.items[1]), value=0))
        t.consts[zero.id] = 0
        v = zero
    else:
        v = t.cast(v, ty.items[1], loc)
    return t.emit(BuildTuple(loc=loc, result=t.fresh(ty), items=(present, v)))


def unwrap(t, v: Value, loc: Loc) -> Value:
    """The value an optional holds (``v`` itself when it is no optional)."""
    if not isinstance(v.type, OptionalType):
        return v
    return t.emit(TupleGet(loc=loc, result=t.fresh(v.type.items[1]), tuple=v, index=1))


def is_none(t, v: Value, negate: bool, loc: Loc, result: Value) -> Value:
    """``v is None`` (``negate``: ``is not None``) of an optional."""
    present = t.emit(TupleGet(loc=loc, result=t.fresh(boolean), tuple=v, index=0))
    if negate:
        return t.emit(Cast(loc=loc, result=Value(result.id, boolean), operand=present))
    return t.emit(UnaryOp(loc=loc, result=Value(result.id, boolean), op="not", operand=present))


def unify_optional(a: Type, b: Type, unify) -> OptionalType | None:
    """An optional merged with a number, None or another optional (None: neither is
    an optional, or they do not merge)."""
    if not isinstance(a, OptionalType):
        a, b = b, a
    if not isinstance(a, OptionalType):
        return None
    if isinstance(b, NoneType):
        return a
    held = unify(a.items[1], b.items[1] if isinstance(b, OptionalType) else b)
    return optional_of(held) if held is not None else None


def to_optional(t, v: Value, ty: OptionalType, loc: Loc) -> Value:
    """A number or None where an optional is wanted (a merge of paths)."""
    return wrap(t, None if isinstance(v.type, NoneType) else v, ty, loc)
