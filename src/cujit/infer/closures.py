"""Nested functions and lambdas defined in kernels and device functions, and ``f(*args)``.

Stage 3 spells ``def inner(...)`` as calls of the builtins ``make_function`` (the
code object and the globals) and ``set_function_attribute`` (the defaults, the
closure's values); this module types them.  A nested function is a device function
made from its code when it is compiled (``FunctionValue``, interned, so that one
``def`` is one callee however often it is typed):

- captured values known at compile time (numbers and tuples of them assigned from
  constants, functions, modules, dtypes, None) are frozen into its closure, as
  numba captures constants;
- captured run-time values (arguments, computed numbers, arrays) become leading
  parameters of the callee (``bytecode.CAPTURED_ATTR``); the function value is then
  a tuple of them at run time (``ClosureType``), which a call prepends to the
  arguments and which can be passed to device functions like any tuple.

Defaults must be compile-time values.  ``f(*args)`` with a tuple ``args`` is the call
``f(args[0], args[1], ...)``.
"""

from __future__ import annotations

import types as pytypes
import weakref
from typing import TYPE_CHECKING

from cujit.device_function import DeviceFunction
from cujit.diagnostics import TypingError, UnsupportedError
from cujit.frozen import frozen
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import (
    CALL_STAR,
    DECORATE,
    MAKE_FUNCTION,
    SET_FUNCTION_ATTRIBUTE,
    TUPLE_CONCAT,
    BuildTuple,
    Call,
    TupleGet,
    Value,
)
from cujit.types import NoneType, PyObject, Scalar, Tuple

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

_CLOSURE, _DEFAULTS = 8, 1
# The function attribute naming the free variables stage 1 makes leading parameters
# (``bytecode.instr.CAPTURED_ATTR``; stage 4 may not import stage 1).
CAPTURED_ATTR = "_cujit_captured"


class FunctionValue:
    """A nested function: its code, globals, defaults, the captured compile-time
    values (name -> value) and the names of the captured run-time values."""

    def __init__(self, code, globals_: dict, defaults, consts: tuple, runtime: tuple):
        self.code, self.globals, self.defaults = code, globals_, defaults
        self.consts, self.runtime = consts, runtime
        self.__name__ = code.co_name
        self.__qualname__ = getattr(code, "co_qualname", code.co_name)
        self.__module__ = globals_.get("__name__") if globals_ else None
        self._devfn: DeviceFunction | None = None

    def __repr__(self) -> str:
        return f"<nested function {self.__qualname__}>"

    @property
    def complete(self) -> bool:
        """Whether every free variable of the code has a value or a parameter."""
        named = {n for n, _ in self.consts} | set(self.runtime)
        return all(v in named for v in self.code.co_freevars)

    def device_function(self) -> DeviceFunction:
        """The device function this value calls (made once)."""
        if self._devfn is None:
            consts = dict(self.consts)
            cells = tuple(
                pytypes.CellType(consts[v]) if v in consts else pytypes.CellType()
                for v in self.code.co_freevars
            )
            fn = pytypes.FunctionType(
                self.code, self.globals, self.code.co_name, self.defaults, cells or None
            )
            fn.__qualname__ = self.__qualname__
            setattr(fn, CAPTURED_ATTR, self.runtime)
            self._devfn = DeviceFunction(fn)
        return self._devfn


_INTERNED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _key_part(value: object):
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value), value)


def intern(code, globals_, defaults=None, consts=(), runtime=()) -> FunctionValue:
    """The one FunctionValue for these parts."""
    key = (
        code,
        id(globals_),
        _key_part(defaults),
        tuple((n, _key_part(v)) for n, v in consts),
        runtime,
    )
    fv = _INTERNED.get(key)
    if fv is None:
        fv = FunctionValue(code, globals_, defaults, consts, runtime)
        _INTERNED[key] = fv
    return fv


@frozen(repr=False)
class ClosureType(Tuple):
    """A nested function that captured run-time values: at run time the tuple of
    those values (``items``), ``func`` being the function."""

    func: FunctionValue = None

    __hash__ = Tuple.__hash__

    def __str__(self) -> str:
        return f"closure {self.func.__qualname__}(" + ", ".join(map(str, self.items)) + ")"


def _make_function(t: Typer, site: CallSite) -> Value:
    code, globals_ = (t.const_value(v) for v in site.args)
    fv = intern(code, globals_)
    return t.const(fv, site.loc)


def _constant(t: Typer, v: Value):
    """(True, value) for a compile-time value, else (False, None)."""
    if isinstance(v.type, PyObject):
        return True, v.type.value
    if isinstance(v.type, NoneType):
        return True, None
    value = t.consts.get(v.id)
    if value is not None and isinstance(v.type, (Scalar, Tuple)):
        return True, value
    return False, None


def _set_attribute(t: Typer, site: CallSite) -> Value:
    fn, flag, value = site.args
    flag = t.const_value(flag)
    func = fn.type.func if isinstance(fn.type, ClosureType) else t.const_value(fn)
    if flag == _DEFAULTS:
        ok, defaults = _constant(t, value)
        if not ok:
            raise TypingError(
                f"the defaults of nested function '{func.__name__}' must be known when "
                f"the kernel is compiled, not {describe(value.type)}",
                site.loc,
            )
        fv = intern(func.code, func.globals, defaults, func.consts, func.runtime)
        return _with(t, site, fn, fv)
    if flag != _CLOSURE:  # annotations, keyword-only defaults: nothing to type
        return fn
    items = t.tuple_items.get(value.id) or tuple(
        t.emit(TupleGet(loc=site.loc, result=t.fresh(it), tuple=value, index=i))
        for i, it in enumerate(value.type.items)
    )
    consts, runtime, values = [], [], []
    for name, v in zip(func.code.co_freevars, items, strict=True):
        t.check_defined(v, site.loc)
        ok, const = _constant(t, v)
        if ok:
            consts.append((name, const))
        else:
            runtime.append(name)
            values.append(v)
    fv = intern(func.code, func.globals, func.defaults, tuple(consts), tuple(runtime))
    if not runtime:
        return t.const(fv, site.loc)
    ty = ClosureType(tuple(v.type for v in values), fv)
    return t.emit(BuildTuple(loc=site.loc, result=t.fresh(ty), items=tuple(values)))


def _with(t: Typer, site: CallSite, fn: Value, fv: FunctionValue) -> Value:
    """``fn`` (a constant or a closure tuple) now standing for ``fv``."""
    if isinstance(fn.type, ClosureType):
        ty = ClosureType(fn.type.items, fv)
        items = tuple(
            t.emit(TupleGet(loc=site.loc, result=t.fresh(it), tuple=fn, index=i))
            for i, it in enumerate(fn.type.items)
        )
        return t.emit(BuildTuple(loc=site.loc, result=t.fresh(ty), items=items))
    return t.const(fv, site.loc)


def _call_star(t: Typer, site: CallSite) -> Value:
    """``f(*args)``: a call with the tuple's items as the arguments."""
    from cujit.infer.calls import type_call

    func, args = site.op.args
    tup = t.value(args)
    if not isinstance(tup.type, Tuple) or isinstance(tup.type, ClosureType):
        raise UnsupportedError(
            f"f(*args) in a kernel needs a tuple, not {describe(tup.type)}", site.loc
        )
    items = tuple(
        t.emit(TupleGet(loc=site.loc, result=t.fresh(it), tuple=tup, index=i))
        for i, it in enumerate(tup.type.items)
    )
    type_call(t, Call(loc=site.loc, result=site.op.result, func=func, args=items))
    return t.value(site.op.result)


def _tuple_concat(t: Typer, site: CallSite) -> Value:
    """``(a, *s)``: the items of both tuples (a frozen global tuple's as constants)."""
    parts = []
    for v in site.args:
        if isinstance(v.type, PyObject) and isinstance(v.type.value, tuple):
            parts += [t.const(x, site.loc) for x in v.type.value]
        elif isinstance(v.type, Tuple) and not isinstance(v.type, ClosureType):
            parts += [
                t.emit(TupleGet(loc=site.loc, result=t.fresh(it), tuple=v, index=i))
                for i, it in enumerate(v.type.items)
            ]
        else:
            raise UnsupportedError(
                f"*-unpacking of {describe(v.type)} in a tuple display is not supported: "
                "only tuples",
                site.loc,
            )
    ty = Tuple(tuple(p.type for p in parts))
    return t.emit(BuildTuple(loc=site.loc, result=site.result(ty), items=tuple(parts)))


def closure_call_args(t: Typer, callee: Value, loc) -> tuple[DeviceFunction, list[Value]]:
    """For a call of a ClosureType value: the device function and the captured values
    that come before the call's own arguments."""
    items = [
        t.emit(TupleGet(loc=loc, result=t.fresh(it), tuple=callee, index=i))
        for i, it in enumerate(callee.type.items)
    ]
    return callee.type.func.device_function(), items


def _decorate(t: Typer, site: CallSite) -> Value:
    """``@d def f``: ``d(f)`` where ``d`` is a device function (or another callee
    kernels know); other decorators (``staticmethod``, numba's own) are refused."""
    from cujit.infer.calls import rule_for, type_call
    from cujit.infer.function_calls import as_device_function
    from cujit.infer.vector_calls import vector_rule

    func, fn = site.op.args
    d = t.value(func)
    known = isinstance(d.type, PyObject) and (
        as_device_function(d.type.value) is not None
        or rule_for(d.type.value) is not None
        or vector_rule(d.type.value) is not None
    )
    if not known:
        raise UnsupportedError(
            "decorators on nested functions are not supported in kernels", site.loc
        )
    type_call(t, Call(loc=site.loc, result=site.op.result, func=func, args=(fn,)))
    return t.value(site.op.result)


def closure_rules() -> dict[object, object]:
    return {
        MAKE_FUNCTION: _make_function,
        SET_FUNCTION_ATTRIBUTE: _set_attribute,
        CALL_STAR: _call_star,
        TUPLE_CONCAT: _tuple_concat,
        DECORATE: _decorate,
    }
