"""Typing of calls of a library's callables (``cujit.extending``).

``MyStruct(x, y)`` in a kernel, where the library filed a typer for ``MyStruct``
(``type_callable``) and an implementation (``lower_builtin``), becomes

    intrinsic extension.call (x, y) {impl, signature}

typed by the typer's answer (a struct-model type is held as its Record).  A call of a
library's ``intrinsic`` becomes the same op, its ``codegen`` the implementation.  The
typer sees the extension types themselves, not their Records; no typer answering, or
no implementation matching the argument types, is the user's error at the call.
"""

from __future__ import annotations

from cujit.diagnostics import TypingError
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, Value
from cujit.types import Record, Signature, Type
from cujit.types.convert import to_type
from cujit.types.extension import CALLABLES, INTRINSICS, OVERLOADS, call_typer, find_lowering


def front_type(t: Type) -> Type:
    """The type a library's typer and lowering see: its own type for its Record."""
    if isinstance(t, Record) and t.origin is not None:
        return t.origin
    return t


_front_type = front_type


def _in(fn: object, table: dict) -> bool:
    try:
        return fn in table
    except TypeError:  # unhashable: no entry
        return False


def emit_extension_call(t, site, impl, sig: Signature, args) -> Value:
    """``extension.call`` of ``impl(context, builder, sig, args)`` giving ``site``'s value."""
    attrs = (("impl", impl), ("signature", sig))
    result = site.result(to_type(sig.return_type))
    op = Intrinsic(
        loc=site.loc, result=result, name="extension.call", args=tuple(args), attrs=attrs
    )
    return t.emit(op)


def extension_rule(fn: object):
    """The call rule for ``fn`` where the extension tables hold a typer for it (or it
    is a library's intrinsic)."""
    if _in(fn, INTRINSICS):
        return _intrinsic_rule(fn)
    if not _in(fn, CALLABLES):
        return None

    def rule(t, site) -> Value:
        if site.kwargs:
            raise TypingError(f"{site.name}() takes no keyword arguments in kernels", site.loc)
        arg_types = tuple(front_type(a.type) for a in site.args)
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
        return emit_extension_call(t, site, impl, Signature(result, arg_types), site.args)

    return rule


def _intrinsic_rule(fn: object):
    def rule(t, site) -> Value:
        if site.kwargs:
            raise TypingError(f"{site.name}() takes no keyword arguments in kernels", site.loc)
        arg_types = tuple(front_type(a.type) for a in site.args)
        answer = INTRINSICS[fn](None, *arg_types)
        if answer is None:
            shown = ", ".join(describe(a.type) for a in site.args)
            raise TypingError(f"intrinsic {site.name}() cannot take ({shown})", site.loc)
        sig, codegen = answer
        args = [t.cast(a, to_type(p), site.loc) for a, p in zip(site.args, sig.args, strict=True)]
        return emit_extension_call(t, site, codegen, sig, args)

    return rule


def first_implementation(typing_fns, arg_types, kw_types):
    """The implementation the first typing function answering for the types gives."""
    for typing_fn in typing_fns:
        impl = typing_fn(*arg_types, **kw_types)
        if impl is not None:
            return impl
    return None


def overload_device_function(fn: object, site):
    """The device function a call of ``fn`` compiles where a library overloads ``fn``
    (``cujit.extending.overload``, or a method: ``overload_method``): the first typing
    function answering for the argument types gives the implementation; none answering
    is the user's error."""
    typing_fns = getattr(fn, "typing_fns", None)  # a method (infer/extension_attrs.py)
    if typing_fns is None:
        typing_fns = OVERLOADS.get(fn) if _in(fn, OVERLOADS) else None
    if not typing_fns:
        return None
    from cujit.device_function import DeviceFunction

    arg_types = tuple(front_type(a.type) for a in site.args)
    kw_types = {k: front_type(v.type) for k, v in site.kwargs.items()}
    impl = first_implementation(typing_fns, arg_types, kw_types)
    if impl is not None:
        return DeviceFunction(impl)
    shown = ", ".join(describe(a.type) for a in site.args)
    raise TypingError(f"no overload of {site.name}() takes ({shown})", site.loc)
