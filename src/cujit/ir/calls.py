"""Calls: untyped ``Call`` from bytecode; once type inference has resolved the
callee, ``Intrinsic`` (an entry of the target's intrinsic table) or
``CallFunction`` (a jitted device function compiled alongside the kernel)."""

from __future__ import annotations

from cujit.frozen import frozen
from cujit.ir.core import Op, Value


@frozen(kw_only=True, repr=False)
class Call(Op):
    """``func(*args, **kwargs)``; ``kwargs`` is a tuple of (name, value) pairs."""

    result: Value
    func: Value
    args: tuple[Value, ...]
    kwargs: tuple[tuple[str, Value], ...] = ()


@frozen(kw_only=True, repr=False)
class Intrinsic(Op):
    """A resolved operation of the target, named by its intrinsic-table key
    (``"cuda.grid"``, ``"math.sqrt"``, ``"atomic.add"``, ``"shared.array"``...).

    ``attrs`` holds compile-time parameters (a dimension, a shape, a dtype) as a
    tuple of (name, value) pairs.  ``result`` is None for intrinsics used only
    for their effect (``syncthreads``); such ops still define a value of type
    none so that every call has a result.
    """

    result: Value
    name: str
    args: tuple[Value, ...]
    attrs: tuple[tuple[str, object], ...] = ()

    def attr(self, key: str, default=None):
        for k, v in self.attrs:
            if k == key:
                return v
        return default


# The callee symbol of a device function's call of itself (self-recursion): the
# function that holds the op, not one of its callees.
SELF_CALL = "<self>"


@frozen(kw_only=True, repr=False)
class CallFunction(Op):
    """A call to a device function: ``callee`` names an entry of the calling
    function's ``callees`` (a typed ``Function`` whose name is that symbol).

    ``args`` match the callee's parameters in number and type; ``result`` has
    the callee's return type (none for a function that returns nothing: the op
    is kept for its effects all the same).
    """

    result: Value
    callee: str
    args: tuple[Value, ...]


class Builtin:
    """A callee that stage 3 names for a construct with no op of its own; stage 4
    types the call (``infer/closures.py``)."""

    def __init__(self, name: str):
        self.__name__ = self.__qualname__ = name
        self.__module__ = None

    def __repr__(self) -> str:
        return f"<cujit builtin {self.__name__}>"


MAKE_FUNCTION = Builtin("make_function")  # (code, globals): a nested function
SET_FUNCTION_ATTRIBUTE = Builtin("set_function_attribute")  # (fn, flag, value) -> fn
CALL_STAR = Builtin("call_star")  # (f, args): f(*args)
DECORATE = Builtin("decorate")  # (d, fn): d(fn), a decorator on a nested function
TUPLE_CONCAT = Builtin("tuple_concat")  # (t, s): t + tuple(s)
LIST_DISPLAY = Builtin("list_display")  # (x1, ..., xn): [x1, ..., xn]
