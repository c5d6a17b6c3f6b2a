"""List displays (``[a, b]``) in a kernel.

A kernel has no lists: numba-cuda types a display (a reflected list, which needs
numba's runtime to exist) and then refuses it where it is used.  cujit does the same
much earlier: a display of constants is a compile-time ``ConstantList``, which a call
may look at to say why it is refused in numba's terms (``cuda.shared.array`` writes
``shape=list(int64)<iv=[5, 6]>``), and which any other use refuses with cujit's
message, pointing at the display; a display of run-time values is refused where it
is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import UnsupportedError
from cujit.frozen import frozen
from cujit.infer.context import Typer
from cujit.infer.numeric import unify
from cujit.ir import LIST_DISPLAY, Value
from cujit.types import PyObject, Scalar

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

LIST_MESSAGE = "list displays are not supported in kernels (use a tuple)"
_MISSING = object()


@frozen
class ConstantList:
    """The value of a display whose items are all constant numbers."""

    values: tuple
    item: Scalar

    def numba_text(self) -> str:
        from cujit.infer.numba_text import list_text

        return list_text(self.item, self.values)

    def __repr__(self) -> str:
        return f"list display {list(self.values)}"


def call_list_display(t: Typer, site: CallSite) -> Value:
    values, item = [], None
    for v in site.args:
        value = t.const_value(v, default=_MISSING)
        if not isinstance(v.type, Scalar) or value is _MISSING:
            raise UnsupportedError(LIST_MESSAGE, site.loc)
        item = v.type if item is None else unify(item, v.type)
        values.append(value)
    if item is None:  # ``[]``: numba cannot type its items either
        raise UnsupportedError(LIST_MESSAGE, site.loc)
    const = ConstantList(tuple(values), item)
    return t.const(const, site.loc)


def is_constant_list(v: Value) -> bool:
    return isinstance(v.type, PyObject) and isinstance(v.type.value, ConstantList)


def list_display_rules() -> dict:
    return {LIST_DISPLAY: call_list_display}
