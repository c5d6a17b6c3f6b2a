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

import types as pytypes

from cujit.diagnostics import CompileError, TypingError
from cujit.infer.numeric import describe
from cujit.infer.overload_signatures import check_signatures
from cujit.ir import Intrinsic, Value
from cujit.types import IntegerLiteral, Record, Signature, Type, numba_registry
from cujit.types.convert import to_type
from cujit.types.extension import (
    CALLABLES,
    INTRINSICS,
    NOT_STRICT,
    OVERLOADS,
    PREFER_LITERAL,
    call_typer,
    find_lowering,
)
from cujit.types.extension_typing import templates_of


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


class InternalCompiler:
    """What a lowering function's ``context.compile_internal`` compiles through: the
    device-function context of the compilation the call is typed in."""

    def __init__(self, callees) -> None:
        self._callees = callees

    def typed(self, func, arg_types: tuple[Type, ...], loc):
        """The typed IR of Python function ``func`` for ``arg_types``."""
        from cujit.device_function import DeviceFunction

        if self._callees is None:
            raise TypingError(
                "compile_internal needs a kernel or device function being compiled", loc
            )
        return self._callees.typed(DeviceFunction(func), tuple(arg_types), None, loc)


def emit_extension_call(
    t, site, impl, sig: Signature, args, name="extension.call", what="call"
) -> Value:
    """``extension.call`` (or ``name``: ``extension.intrinsic``) of
    ``impl(context, builder, sig, args)`` giving ``site``'s value; ``compiler`` lets
    the implementation compile Python functions (``context.compile_internal``);
    ``what`` names it in errors ("call", "cast from A to B")."""
    attrs = (("impl", impl), ("signature", sig), ("compiler", InternalCompiler(t.callees)))
    attrs += (("what", what),)
    result = site.result(to_type(sig.return_type))
    op = Intrinsic(loc=site.loc, result=result, name=name, args=tuple(args), attrs=attrs)
    return t.emit(op)


def extension_rule(fn: object):
    """The call rule for ``fn`` where the extension tables hold a typer or typing
    templates for it (or it is a library's intrinsic)."""
    if _in(fn, INTRINSICS):
        return _intrinsic_rule(fn)
    from cujit.infer.pointers import pointer_rules  # cffi's ffi.from_buffer

    rule = pointer_rules(fn)
    if rule is not None:
        return rule
    if not (_in(fn, CALLABLES) or templates_of(fn)):
        return None

    def rule(t, site) -> Value:
        from cujit.infer.extension_templates import template_call

        if site.kwargs:
            raise TypingError(f"{site.name}() takes no keyword arguments in kernels", site.loc)
        value = _typer_call(t, site, fn)
        if value is None:
            value = template_call(t, site, fn, site.args)
        if value is None:
            shown = ", ".join(describe(a.type) for a in site.args)
            raise TypingError(f"{site.name}() cannot be called with ({shown})", site.loc)
        return value

    return rule


def _typer_call(t, site, fn) -> Value | None:
    """The call typed by ``fn``'s ``type_callable`` typer (None: none answers)."""
    if not _in(fn, CALLABLES):
        return None
    arg_types = tuple(front_type(a.type) for a in site.args)
    try:
        result = call_typer(fn, arg_types)
    except CompileError:
        raise
    except Exception as exc:  # the library's typer failed: the user's call
        raise library_error(exc, site.loc) from exc
    if result is None:
        return None
    impl = find_lowering(fn, arg_types)
    if impl is None:
        shown = ", ".join(describe(a.type) for a in site.args)
        raise TypingError(
            f"{site.name}() has no implementation for ({shown})",
            site.loc,
            hint="the library declares one with lower_builtin(func, *arg_types)",
        )
    return emit_extension_call(t, site, impl, Signature(result, arg_types), site.args)


def _intrinsic_rule(fn: object):
    def rule(t, site) -> Value:
        if site.kwargs:
            raise TypingError(f"{site.name}() takes no keyword arguments in kernels", site.loc)
        arg_types = tuple(front_type(a.type) for a in site.args)
        try:
            answer = INTRINSICS[fn](None, *arg_types)
        except CompileError:
            raise
        except Exception as exc:  # the library's typing function failed: the user's call
            raise library_error(exc, site.loc) from exc
        if answer is None:
            shown = ", ".join(describe(a.type) for a in site.args)
            raise TypingError(f"intrinsic {site.name}() cannot take ({shown})", site.loc)
        sig, codegen = _intrinsic_answer(site, answer)
        args = [t.cast(a, to_type(p), site.loc) for a, p in zip(site.args, sig.args, strict=True)]
        return emit_extension_call(t, site, codegen, sig, args, "extension.intrinsic")

    return rule


def _intrinsic_answer(site, answer) -> tuple:
    """An intrinsic's ``(signature, codegen)``, checked: anything else its typing
    function returns is the library's mistake, reported at the user's call."""
    what = f"intrinsic {site.name}()'s typing function returned {answer!r}"
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise TypingError(f"{what}: it must return (signature, codegen) or None", site.loc)
    sig, codegen = answer
    if not (hasattr(sig, "args") and hasattr(sig, "return_type")):  # numba's too
        raise TypingError(
            f"{what}: its first item must be a signature such as int32(int32), "
            f"not {type(sig).__name__}",
            site.loc,
        )
    if not callable(codegen):
        raise TypingError(
            f"{what}: its second item must be the codegen function "
            f"(context, builder, signature, args), not {type(codegen).__name__}",
            site.loc,
        )
    if len(sig.args) != len(site.args):
        raise TypingError(
            f"{what}: its signature takes {len(sig.args)} arguments, "
            f"but the call passes {len(site.args)}",
            site.loc,
        )
    return sig, codegen


def library_error(exc: Exception, loc) -> TypingError:
    """A library's typing function that raised: a TypingError at the user's call that
    is also of the library's error class (so code catching that class still does)."""
    message = f"{type(exc).__name__}: {exc}"
    try:
        cls = type("LibraryTypingError", (TypingError, type(exc)), {"__str__": TypingError.__str__})
        err = cls.__new__(cls)
        TypingError.__init__(err, message, loc)
        return err
    except TypeError:  # an error class that cannot be combined
        return TypingError(message, loc)


def first_implementation(typing_fns, arg_types, kw_types, loc=None):
    """The implementation the first typing function answering for the types gives."""
    for typing_fn in typing_fns:
        try:
            impl = typing_fn(*arg_types, **kw_types)
        except CompileError:
            raise
        except Exception as exc:  # the library refuses these types with its own error
            raise library_error(exc, loc) from exc
        if impl is not None:
            return impl
    return None


def _literal(t, v: Value) -> Type:
    """``v``'s type, or numba's literal type where it is a known int constant."""
    value = t.const_value(v) if t is not None else None
    if isinstance(value, int) and not isinstance(value, bool):
        return IntegerLiteral(value)
    return front_type(v.type)


def _resolve(t, site, typing_fns, fn):
    """Try the typing functions with the plain argument types, and with the constants'
    literal types (numba's order: literal first for ``prefer_literal``)."""
    plain = tuple(front_type(a.type) for a in site.args)
    plain_kw = {k: front_type(v.type) for k, v in site.kwargs.items()}
    literal = tuple(_literal(t, a) for a in site.args)
    literal_kw = {k: _literal(t, v) for k, v in site.kwargs.items()}
    refused = None  # a library's error for one try: raised only if no try answers
    for typing_fn in typing_fns:
        tries = [(plain, plain_kw), (literal, literal_kw)]
        if _in((fn, id(typing_fn)), PREFER_LITERAL):
            tries.reverse()
        if literal == plain and literal_kw == plain_kw:
            tries = tries[:1]
        for args, kws in tries:
            try:
                impl = first_implementation([typing_fn], args, kws, site.loc)
            except TypingError as exc:
                refused = refused or exc
                continue
            if impl is not None:
                if not _in((fn, id(typing_fn)), NOT_STRICT):
                    check_signatures(typing_fn, impl, site.loc)
                return impl
    if refused is not None:
        raise refused
    return None


def overload_device_function(fn: object, site, t=None):
    """The device function a call of ``fn`` compiles where a library overloads ``fn``
    (``cujit.extending.overload``, or a method: ``overload_method``): the first typing
    function answering for the argument types gives the implementation; none answering
    is the user's error (a built-in function such as ``operator.add`` keeps cujit's
    own meaning for the types no overload takes)."""
    typing_fns = getattr(fn, "typing_fns", None)  # a method (infer/extension_attrs.py)
    if typing_fns is None:
        numba_registry.adopt(fn)  # overloads filed with numba's own decorator
        typing_fns = OVERLOADS.get(fn) if _in(fn, OVERLOADS) else None
    if not typing_fns:
        return None
    from cujit.device_function import DeviceFunction

    impl = _resolve(t, site, typing_fns, fn)
    if impl is not None:
        return DeviceFunction(impl)
    if isinstance(fn, pytypes.BuiltinFunctionType):  # operator.add...: cujit's own rule
        return None
    shown = ", ".join(describe(a.type) for a in site.args)
    raise TypingError(f"no overload of {site.name}() takes ({shown})", site.loc)
