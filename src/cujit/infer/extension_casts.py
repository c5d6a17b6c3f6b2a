"""Conversions into, out of and between a library's types (``cujit.extending.lower_cast``).

Where a value meets a type it is not of and either is a library's type (an argument
a template's signature converts, a return value, a branch merge, a store into a
typed slot), ``Typer.cast`` comes here: the cast filed for the pair becomes

    intrinsic extension.call (x) {impl, signature: toty(fromty)}

whose lowering calls ``impl(context, builder, fromty, toty, value)``.  No cast filed
is the user's error at the line that needs the conversion.

``unify_library`` is numba's unification for a library's types (two paths giving a
name different types): the types' own ``unify(context, other)`` methods first, then
their ``can_convert_to``/``can_convert_from`` methods, then a cast filed one way only
(its target type wins).
"""

from __future__ import annotations

from cujit.diagnostics import Loc, TypingError
from cujit.infer.extension_calls import emit_extension_call, front_type
from cujit.infer.numeric import describe
from cujit.ir import Value
from cujit.types import Record, Signature, Type
from cujit.types.convert import to_type
from cujit.types.extension import MODELS, is_extension_type
from cujit.types.extension_typing import find_cast


def is_library(t: Type | None) -> bool:
    """Whether ``t`` (as held, or as the library sees it) is a library's type."""
    if not MODELS or t is None:
        return False
    if isinstance(t, Record):
        return t.origin is not None
    return is_extension_type(t)


class FreshSite:
    """Where a conversion's value goes: a fresh value at the line needing it."""

    def __init__(self, t, loc: Loc, name: str = "cast") -> None:
        self._t, self.loc, self.name = t, loc, name

    def result(self, ty: Type) -> Value:
        return self._t.fresh(ty)


def _cast_lowering(impl):
    def lower(context, builder, sig, args):
        return impl(context, builder, sig.args[0], sig.return_type, args[0])

    return lower


def library_cast(t, v: Value, target: Type, loc: Loc) -> Value:
    """``v`` converted to ``target`` by the cast a library filed for the pair."""
    src, dst = front_type(v.type), front_type(target)
    impl = find_cast(src, dst)
    if impl is None:
        raise TypingError(
            f"cannot convert {describe(src)} to {describe(dst)}",
            loc,
            hint="a library declares the conversion with lower_cast(fromty, toty)",
        )
    sig = Signature(dst, (src,))
    what = f"cast from {src} to {dst}"
    return emit_extension_call(t, FreshSite(t, loc), _cast_lowering(impl), sig, [v], what=what)


def _declared(x: Type, y: Type) -> bool:
    """Whether type ``x`` converts to ``y`` by the types' own methods (numba's
    ``can_convert_to`` / ``can_convert_from``)."""
    from cujit.infer.extension_templates import TYPING_CONTEXT

    to = getattr(x, "can_convert_to", None) if is_library(x) else None
    if to is not None and to(TYPING_CONTEXT, y):
        return True
    frm = getattr(y, "can_convert_from", None) if is_library(y) else None
    return bool(frm is not None and frm(TYPING_CONTEXT, x))


def unify_library(a: Type, b: Type) -> Type | None:
    """The type both ``a`` and ``b`` convert to where one is a library's (as held:
    a struct-model type's Record), or None."""
    fa, fb = front_type(a), front_type(b)
    if not (is_library(fa) or is_library(fb)):
        return None
    from cujit.infer.extension_templates import TYPING_CONTEXT

    for x, y in ((fa, fb), (fb, fa)):
        method = getattr(x, "unify", None) if is_library(x) else None
        merged = method(TYPING_CONTEXT, y) if method is not None else None
        if merged is not None:
            return to_type(merged)
    for x, y in ((fa, fb), (fb, fa)):
        if _declared(x, y):
            return to_type(y)
    there, back = find_cast(fa, fb), find_cast(fb, fa)
    if (there is None) != (back is None):
        return to_type(fb if there is not None else fa)
    return None


def _constant_lowering(impl, pyval):
    def lower(context, builder, sig, args):
        return impl(context, builder, sig.return_type, pyval)

    return lower


class _ResultSite(FreshSite):
    """A constant's value in the id its op names."""

    def __init__(self, t, loc: Loc, result: Value) -> None:
        super().__init__(t, loc, "constant")
        self._id = result.id

    def result(self, ty: Type) -> Value:
        return Value(self._id, ty)


def library_constant(t, value, loc: Loc, result: Value | None) -> Value | None:
    """A Python object a kernel names whose type (``typeof_impl``) has a
    ``lower_constant`` implementation: ``extension.call`` of it giving the value;
    None for any other object (it stays a compile-time object)."""
    from cujit.types.extension import typeof_value
    from cujit.types.extension_typing import constant_lowering

    try:
        ty = typeof_value(value)
    except Exception:  # a typeof function that does not take this object: not a value
        return None
    impl = constant_lowering(ty) if isinstance(ty, Type) else None
    if impl is None:
        return None
    site = FreshSite(t, loc, "constant") if result is None else _ResultSite(t, loc, result)
    lowering = _constant_lowering(impl, value)
    return emit_extension_call(t, site, lowering, Signature(ty, ()), [], what=f"constant of {ty}")
