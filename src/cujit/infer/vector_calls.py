"""Typing of the vector-type constructors (``cuda.float4(...)``, ``cuda.int2(...)``).

The arguments are scalars or vectors of the same family; their elements, in order,
must number the vector's, and each converts to the base type (numba's overloads:
every split of the count into scalars and smaller vectors).

    %9 = call %8(%2, %3)         # cuda.float2(x, i), x: float64, i: int64
  becomes
    %10: float32 = cast %2
    %11: float32 = cast %3
    %9: float32x2 = build_tuple (%10, %11)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer.access import _build
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import TupleGet, Value
from cujit.types import NamedTuple, Scalar
from cujit.types.core import loaded_module

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def _elements(t: Typer, site: CallSite, cls: type, arg: Value) -> list[Value]:
    from cujit.vector_types import is_vector_type

    if (
        isinstance(arg.type, NamedTuple)
        and is_vector_type(arg.type.cls)
        and arg.type.cls.base_type == cls.base_type
    ):
        return [
            t.emit(TupleGet(loc=site.loc, result=t.fresh(item), tuple=arg, index=k))
            for k, item in enumerate(arg.type.items)
        ]
    if isinstance(arg.type, Scalar) and not arg.type.is_complex:
        return [arg]
    raise TypingError(
        f"{cls.__name__}() takes {cls.base_type} scalars and "
        f"{cls.base_type} vectors, not {describe(arg.type)}",
        site.loc,
    )


def _rule(cls: type):
    def rule(t: Typer, site: CallSite) -> Value:
        if site.kwargs:
            raise TypingError(f"{cls.__name__}() takes its elements by position", site.loc)
        items = [e for a in site.args for e in _elements(t, site, cls, a)]
        if len(items) != cls.num_elements:
            raise TypingError(
                f"{cls.__name__}() needs {cls.num_elements} elements, got {len(items)}", site.loc
            )
        items = tuple(t.cast(v, cls.base_type, site.loc) for v in items)
        from cujit.vector_types import vector_type

        return _build(t, site.loc, site.result(vector_type(cls)), items)

    return rule


_RULES: dict[type, object] = {}


def vector_rule(fn: object):
    """The constructor's rule when ``fn`` is one of the vector classes, else None.

    The classes (``cujit.vector_types``: forty of them) are not imported for this: a
    kernel can only call one that its module has already made, so while that module is
    not loaded no callee is a vector class.  This keeps them out of every compile that
    uses none (the call table asks here on a miss)."""
    vt = loaded_module("cujit.vector_types")
    if vt is None or not vt.is_vector_type(fn):
        return None
    rule = _RULES.get(fn)
    if rule is None:
        rule = _RULES[fn] = _rule(fn)
    return rule


__all__ = ["vector_rule"]
