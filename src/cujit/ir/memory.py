"""Ops on aggregates: indexing, attributes and tuples."""

from __future__ import annotations

from cujit.frozen import frozen
from cujit.ir.core import Op, Value


@frozen(kw_only=True, repr=False)
class GetItem(Op):
    """``obj[index]``: ``index`` is an integer or a tuple of integers."""

    result: Value
    obj: Value
    index: Value


@frozen(kw_only=True, repr=False)
class SetItem(Op):
    """``obj[index] = value``."""

    obj: Value
    index: Value
    value: Value


@frozen(kw_only=True, repr=False)
class GetAttr(Op):
    """``obj.name`` (``x.shape``, ``cuda.threadIdx``, ``math.pi``...)."""

    result: Value
    obj: Value
    name: str


@frozen(kw_only=True, repr=False)
class SetAttr(Op):
    """``obj.name = value`` (a record's field); typing turns it into an intrinsic."""

    obj: Value
    name: str
    value: Value


@frozen(kw_only=True, repr=False)
class BuildTuple(Op):
    """``(a, b, ...)``."""

    result: Value
    items: tuple[Value, ...]


@frozen(kw_only=True, repr=False)
class TupleGet(Op):
    """Element ``index`` of a tuple (tuple unpacking and constant-index access)."""

    result: Value
    tuple: Value
    index: int
