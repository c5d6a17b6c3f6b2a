"""Typing of calls and operators through a library's typing templates.

A call of a callable with templates in ``FUNCTION_TEMPLATES`` (``f(x, y)``, or
``a + b``, ``a < b``, ``-a`` with a library's value as an operand, through
``operator.add``...) asks each template, newest first, for a signature:

- ``cases`` (numba's ``ConcreteTemplate``): the first case the argument types match
  exactly, else one they convert to without loss, else one they convert to at all
  (numbers as assignments convert them, a library's type through its casts);
- ``generic(self, args, kws)`` (``AbstractTemplate``): a signature, or None;
- ``generic(self)`` (``CallableTemplate``): a typer ``typer(*args)`` giving a
  signature or the result type.

The signature's implementation is the ``lower_builtin`` entry matching its argument
types; the arguments are converted to them (``Typer.cast``, casts included) and the
call is ``extension.call`` of the implementation.  A template that raises is a
``TypingError`` at the user's line that is also of the library's error class.

``TypingContext`` is what a template receives as ``self.context``: numba's
``resolve_function_type`` (operators on numbers answer as in kernels),
``unify_pairs``, ``unify_types`` and ``can_convert``.
"""

from __future__ import annotations

import operator

from cujit.diagnostics import CompileError, Loc, TypingError
from cujit.infer.extension_calls import emit_extension_call, front_type, library_error
from cujit.infer.numeric import arith_type, describe, unary_type, unify
from cujit.ir import Value
from cujit.types import Scalar, Signature, Type, boolean
from cujit.types.convert import to_type
from cujit.types.extension import find_lowering
from cujit.types.extension_typing import find_cast, templates_of
from cujit.types.foreign import is_numba_type

COMPARISONS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
_UNARY = {"-": "neg", "+": "pos", "~": "invert"}
_SYMBOL = {name: sym for sym, name in (*COMPARISONS.items(), *_UNARY.items())}


def _front(spec) -> Type:
    return front_type(to_type(spec))


class TypingContext:
    """What a typing template receives as ``self.context`` (see the module's docstring)."""

    def __init__(self, loc: Loc | None = None, callees=None) -> None:
        self.loc, self._callees = loc, callees

    def resolve_function_type(self, func, args, kws=None) -> Signature | None:
        """The signature a call of ``func`` with argument types ``args`` has in kernels
        (None where kernels cannot make that call)."""
        arg_types = tuple(_front(a) for a in args)
        sig = template_signature(func, arg_types, dict(kws or {}), self.loc, self._callees)
        if sig is None:
            sig = _builtin_signature(func, arg_types)
        return sig if sig is not None else self._typed_call(func, arg_types)

    def _typed_call(self, func, arg_types: tuple[Type, ...]) -> Signature | None:
        """The call typed as kernels type it: ``lambda *a: func(*a)`` compiled for the
        types as a device function of the compilation (``abs``, ``math.sin``...)."""
        caller = _caller(func, len(arg_types))
        if caller is None or self._callees is None:
            return None
        try:
            typed = self._callees.typed(
                caller, tuple(to_type(a) for a in arg_types), None, self.loc
            )
        except TypingError:
            return None
        return Signature(front_type(typed.return_type), arg_types)

    def unify_pairs(self, first, second) -> Type | None:
        merged = unify(to_type(first), to_type(second))
        return None if merged is None else front_type(merged)

    def unify_types(self, *types) -> Type | None:
        merged = _front(types[0]) if types else None
        for t in types[1:]:
            merged = None if merged is None else self.unify_pairs(merged, t)
        return merged

    def can_convert(self, fromty, toty) -> bool | None:
        return True if _converts(_front(fromty), _front(toty), safe=False) else None


TYPING_CONTEXT = TypingContext()
_CALLERS = {
    1: lambda f: lambda a: f(a),
    2: lambda f: lambda a, b: f(a, b),
    3: lambda f: lambda a, b, c: f(a, b, c),
}
_CALLER_CACHE: dict = {}  # (function, argument count) -> the device function calling it


def _caller(func, n: int):
    """The device function ``lambda *a: func(*a)`` of ``n`` arguments (one per pair, so
    the compilation's cache of typed device functions serves each call)."""
    from cujit.device_function import DeviceFunction

    if n not in _CALLERS:
        return None
    try:
        key = (func, n)
        if key not in _CALLER_CACHE:
            _CALLER_CACHE[key] = DeviceFunction(_CALLERS[n](func))
        return _CALLER_CACHE[key]
    except TypeError:  # an unhashable callable
        return DeviceFunction(_CALLERS[n](func))


def _builtin_signature(func, args: tuple[Type, ...]) -> Signature | None:
    """numba's typing of an operator (``operator.add``...) applied to numbers."""
    name = getattr(func, "__name__", "")
    if getattr(operator, name, None) is not func or not all(isinstance(a, Scalar) for a in args):
        return None
    from cujit.infer.extension_attrs import BINARY_OPERATORS

    symbol = _SYMBOL.get(name) or {v: k for k, v in BINARY_OPERATORS.items()}.get(name)
    if len(args) == 1 and symbol in _UNARY:
        rule = unary_type(symbol, args[0])
        return None if isinstance(rule, str) else Signature(rule, (rule,))
    if len(args) != 2 or symbol is None:
        return None
    if symbol in COMPARISONS:
        common = unify(*args)
        return Signature(boolean, (common, common))
    rule = arith_type(symbol, *args)
    return None if isinstance(rule, str) else Signature(rule[2], rule[:2])


def _converts(a: Type, p: Type, safe: bool) -> bool:
    if a == p:
        return True
    if isinstance(a, Scalar) and isinstance(p, Scalar):
        if a.is_complex and not p.is_complex:
            return False
        return not safe or unify(a, p) == p
    return find_cast(a, p) is not None


def _select_case(cases, args: tuple[Type, ...]) -> Signature | None:
    """The case of a ``ConcreteTemplate`` the argument types take (see the docstring)."""
    sigs = [_as_signature(c, args) for c in cases]
    sigs = [s for s in sigs if s is not None and len(s.args) == len(args)]
    for rank in (lambda a, p: a == p, lambda a, p: _converts(a, p, True)):
        for sig in sigs:
            if all(rank(a, p) for a, p in zip(args, sig.args, strict=True)):
                return sig
    for sig in sigs:
        if all(_converts(a, p, False) for a, p in zip(args, sig.args, strict=True)):
            return sig
    return None


def _as_signature(result, args: tuple[Type, ...]) -> Signature | None:
    """A template's answer as a signature over the types libraries see."""
    if result is None:
        return None
    if isinstance(result, Type) or is_numba_type(result):  # a typer's result type
        return Signature(_front(result), tuple(args))
    if hasattr(result, "return_type") and hasattr(result, "args"):
        return Signature(_front(result.return_type), tuple(_front(a) for a in result.args))
    raise TypeError(f"a typing template returned {result!r}, not a signature or a type")


def _is_callable_template(cls: type) -> bool:
    return any(base.__name__ == "CallableTemplate" for base in cls.__mro__)


def _apply(template: type, args: tuple[Type, ...], kws: dict, loc, callees) -> Signature | None:
    try:
        instance = template(TypingContext(loc, callees))
        cases = getattr(instance, "cases", None)
        if cases is not None:
            return _select_case(cases, args)
        if _is_callable_template(template):
            typer = instance.generic()
            return None if typer is None else _as_signature(typer(*args, **kws), args)
        return _as_signature(instance.generic(tuple(args), dict(kws)), args)
    except CompileError:
        raise
    except Exception as exc:  # the library's template failed: the user's call
        raise library_error(exc, loc) from exc


def template_signature(
    fn, args: tuple[Type, ...], kws: dict, loc, callees=None
) -> Signature | None:
    """The signature the first template of ``fn`` answering gives (None: none does);
    ``callees``: the compilation's device functions, for ``resolve_function_type``."""
    for template in templates_of(fn):
        sig = _apply(template, args, kws, loc, callees)
        if sig is not None:
            return sig
    return None


def template_call(t, site, fn, values: list[Value]) -> Value | None:
    """``fn(*values)`` typed by ``fn``'s templates and built by its implementation
    (None where no template answers)."""
    if not templates_of(fn):
        return None
    arg_types = tuple(front_type(v.type) for v in values)
    sig = template_signature(fn, arg_types, {}, site.loc, t.callees)
    if sig is None:
        return None
    impl = find_lowering(fn, sig.args)
    if impl is None:
        shown = ", ".join(describe(a) for a in sig.args)
        raise TypingError(
            f"{site.name} is typed ({shown}) -> {sig.return_type} but has no implementation",
            site.loc,
            hint="the library declares one with lower_builtin(func, *arg_types)",
        )
    args = [t.cast(v, to_type(p), site.loc) for v, p in zip(values, sig.args, strict=True)]
    return emit_extension_call(t, site, impl, sig, args)


def unary_function(symbol: str):
    """The ``operator`` function of a unary operator (None for ``not``)."""
    name = _UNARY.get(symbol)
    return getattr(operator, name) if name else None


def library_truth(t, v: Value, loc) -> Value:
    """``if v:`` (``not v``, ``bool(v)``) of a library's value: its templates of
    ``operator.truth`` type it, their implementation builds the bool."""
    from cujit.infer.extension_casts import FreshSite

    site = FreshSite(t, loc, "operator.truth")
    value = template_call(t, site, operator.truth, [v])
    if value is None:
        raise TypingError(
            f"cannot use a value of type {front_type(v.type)} as a condition",
            loc,
            hint="a library types it with a template of operator.truth",
        )
    return t.cast(value, boolean, loc)


def templated_builtin(fn, values) -> bool:
    """Whether a call of ``fn`` (a built-in such as ``abs`` or ``math.sin``, which
    cujit types itself) takes a library's value and the library has templates for
    ``fn``: the templates type it instead."""
    from cujit.types.extension import library_types

    return any(library_types(v.type, v.type) for v in values) and bool(templates_of(fn))
