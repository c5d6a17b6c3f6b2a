"""Typing of calls of a library's callables (``cujit.extending``).

``MyStruct(x, y)`` in a kernel, where the library filed a typer for ``MyStruct``
(``type_callable``) and an implementation (``lower_builtin``), becomes

    intrinsic extension.call (x, y) {impl, signature}

typed by the typer's answer (a struct-model type is held as its Record).  The typer sees
the extension types themselves, not their Records; no typer answering, or no
implementation matching the argument types, is the user's error at the call.
"""

from __future__ import annotations

from cujit.diagnostics import TypingError
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, Value
from cujit.types import Record, Signature, Type
from cujit.types.convert import to_type
from cujit.types.extension import CALLABLES, OVERLOADS, call_typer, find_lowering


def _front_type(t: Type) -> Type:
    """The type a library's typer and lowering see: its own type for its Record."""
    if isinstance(t, Record) and t.origin is not None:
        return t.origin
    return t


def extension_rule(fn: object):
    """The call rule for ``fn`` where the extension tables hold a typer for it."""
    try:
        if fn not in CALLABLES:
            return None
    except TypeError:  # unhashable: no entry
        return None

    def rule(t, site) -> Value:
        if site.kwargs:
            raise TypingError(f"{site.name}() takes no keyword arguments in kernels", site.loc)
        arg_types = tuple(_front_type(a.type) for a in site.args)
        shown = ", ".join(describe(a.type) for a in site.args)
        result = call_typer(fn, arg_types)
        if result is None:
            raise TypingError(f"{site.name}() cannot be called with ({shown})", site.loc)
        impl = find_lowering(fn, arg_types)
        if impl is None:
            raise TypingError(
                f"{site.name}() has no implementation for ({shown})",
                site.loc,
                hint="the library declares one with lower_builtin(func, *arg_types)",
            )
        attrs = (("impl", impl), ("signature", Signature(result, arg_types)))
        op = Intrinsic(
            loc=site.loc,
            result=site.result(to_type(result)),
            name="extension.call",
            args=tuple(site.args),
            attrs=attrs,
        )
        return t.emit(op)

    return rule


def overload_device_function(fn: object, site):
    """The device function a call of ``fn`` compiles where a library overloads ``fn``
    (``cujit.extending.overload``): the first typing function answering for the
    argument types gives the implementation; none answering is the user's error."""
    try:
        typing_fns = OVERLOADS.get(fn)
    except TypeError:  # unhashable: no entry
        return None
    if not typing_fns:
        return None
    from cujit.device_function import DeviceFunction

    arg_types = tuple(_front_type(a.type) for a in site.args)
    kw_types = {k: _front_type(v.type) for k, v in site.kwargs.items()}
    for typing_fn in typing_fns:
        impl = typing_fn(*arg_types, **kw_types)
        if impl is not None:
            return DeviceFunction(impl)
    shown = ", ".join(describe(a.type) for a in site.args)
    raise TypingError(f"no overload of {site.name}() takes ({shown})", site.loc)
