"""Calls and types written in numba's notation, for the typing errors whose text numba's
users know and search for.

numba reports a call it cannot type as "No implementation of function Function(<function
shared.array>) found for signature: >>> array(shape=float32, dtype=class(float32))",
spelling each argument by its numba type: a constant as a literal (``Literal[int](1)``),
a tuple item by item (``Tuple(Literal[int](1), int32)``), a dtype as ``class(float32)``.
cujit's messages for the same mistakes start with that heading and go on in cujit's own
words; this module writes the heading from a typed call.

    >>> type_text(Tuple((int64, int64)))
    'UniTuple(int64 x 2)'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.types import Array, NoneType, PyObject, Scalar, Tuple, Type

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite
    from cujit.infer.context import Typer
    from cujit.ir import Value

_MISSING = object()


def type_text(ty: Type) -> str:
    """``ty`` as numba prints its type (no literal values: see ``value_text``)."""
    if isinstance(ty, Tuple):
        return _tuple_text([type_text(i) for i in ty.items])
    if isinstance(ty, PyObject):
        return _object_text(ty.value)
    if isinstance(ty, NoneType):
        return "none"
    if isinstance(ty, (Scalar, Array)):
        return str(ty)  # numba's spelling already: float32, array(float32, 1d, A)
    return str(ty)


def value_text(t: Typer, v: Value) -> str:
    """Typed ``v`` as numba types the value: constants as literals, a tuple display item
    by item."""
    items = t.tuple_items.get(v.id)
    if items is not None:
        return _tuple_text([value_text(t, i) for i in items])
    if isinstance(v.type, Scalar):
        return literal_text(t.const_value(v, _MISSING), v.type)
    return type_text(v.type)


def literal_text(value: object, ty: Type) -> str:
    """A constant as numba's literal type: ``Literal[int](1)``; numba has no literal of a
    float, so it is its type."""
    if isinstance(value, bool):
        return f"Literal[bool]({value})"
    if isinstance(value, int):
        return f"Literal[int]({value})"
    if isinstance(value, str):
        return f"Literal[str]({value})"
    return type_text(ty)


def list_text(item: Type, values: tuple | None) -> str:
    """numba's type of a list display: ``list(int64)<iv=[5, 6]>`` (its initial value
    written where every item is a constant)."""
    text = f"list({type_text(item)})"
    if values is not None:
        text += "<iv=[" + ", ".join(map(str, values)) + "]>"
    return text


def call_text(t: Typer, site: CallSite, name: str) -> str:
    """The call as numba's signature line: ``array(shape=float32, dtype=class(float32))``."""
    args = [value_text(t, a) for a in site.args]
    args += [f"{k}={value_text(t, v)}" for k, v in site.kwargs.items()]
    return f"{name}({', '.join(args)})"


def no_implementation(function: str, call: str) -> str:
    """numba's heading for a call that no implementation accepts; ``function`` is the
    callee's qualified name (``shared.array``)."""
    return (
        f"No implementation of function Function(<function {function}>) found for "
        f"signature:\n \n >>> {call}\n \n"
    )


def cannot_infer(t: Typer, value_id: int) -> str:
    """numba's opening for a call whose result has no type, naming the variable it is
    assigned to (``Cannot infer the type of variable 'arr': ``); empty where none is."""
    name = next((n for vid, n in t.fn.var_names if vid == value_id), None)
    return f"Cannot infer the type of variable '{name}': " if name else ""


def _tuple_text(items: list[str]) -> str:
    if len(items) > 1 and len(set(items)) == 1:
        return f"UniTuple({items[0]} x {len(items)})"
    return f"Tuple({', '.join(items)})"


def _object_text(value: object) -> str:
    """A compile-time object: a dtype as ``class(float32)``, a string as a literal."""
    from cujit.types import to_type

    if isinstance(value, str):
        return f"Literal[str]({value})"
    if hasattr(value, "numba_text"):  # a list display (infer/list_display.py)
        return value.numba_text()
    if isinstance(value, Scalar) or (isinstance(value, type) and hasattr(value, "dtype")):
        try:
            return f"class({to_type(value)})"
        except TypeError:
            pass
    return f"pyobject({type(value).__name__})"
