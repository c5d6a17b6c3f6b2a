"""Enum members as run-time values: ``EnumMember(cls, dtype)`` is the type of a member
of the ``enum.Enum`` class ``cls`` whose value has type ``dtype`` (a number, or a
tuple of numbers), as numba's ``EnumMember`` / ``IntEnumMember``.

A kernel argument that is a member, or a name that holds different members of one
class on different paths (``Color.red if p else Color.green``), has this type; in
memory, in parameters and in LLVM IR it is its value.  A member known at compile
time stays a compile-time object (``PyObject``).
"""

from __future__ import annotations

import enum

from cujit.frozen import frozen
from cujit.types.core import Scalar, Tuple, Type


@frozen(repr=False)
class EnumMember(Type):
    """A member of ``cls`` (any of them) held as its value, of type ``dtype``."""

    cls: type
    dtype: Type

    __hash__ = Type._cached_hash

    @property
    def is_int(self) -> bool:
        """An ``IntEnum``'s member: it converts to its integer value where one is taken."""
        return issubclass(self.cls, int)

    @property
    def name(self) -> str:
        return str(self)

    def __str__(self) -> str:
        kind = "IntEnumMember" if self.is_int else "EnumMember"
        return f"{kind}({self.cls.__name__}, {self.dtype})"

    __repr__ = __str__


def is_member(value: object) -> bool:
    return isinstance(value, enum.Enum)


def member_type(value: enum.Enum, typeof) -> EnumMember:
    """The type of ``value`` held at run time (``typeof`` types its value); a TypeError
    when the value is no number or tuple of numbers."""
    try:
        dtype = typeof(value.value)
    except TypeError:
        dtype = None
    items = dtype.items if isinstance(dtype, Tuple) else (dtype,)
    if not items or not all(isinstance(i, Scalar) and i.kind in "biufc" for i in items):
        raise TypeError(
            f"cannot pass {value!r}: an enum member's value must be a number or a tuple "
            f"of numbers, not {type(value.value).__name__}"
        )
    return EnumMember(type(value), dtype)
