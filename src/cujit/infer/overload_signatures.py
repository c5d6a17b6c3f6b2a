"""The check that an overload's implementation takes what its typing function takes.

A typing function ``typing(a, b, kw=None)`` describes the call; the implementation it
returns is bound to the same arguments, so (with ``overload(..., strict=True)``, the
default) it must name the same positional arguments in the same order and the same
keyword arguments with the same defaults.  ``**kwargs`` is refused in either, and
``*args`` in the typing function needs one in the implementation; an implementation's
``*args`` takes whatever positional arguments follow the names it lists.
"""

from __future__ import annotations

import inspect

from cujit.diagnostics import Loc, TypingError

_VAR = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _positional(sig: inspect.Signature) -> list[inspect.Parameter]:
    return [
        p
        for p in sig.parameters.values()
        if p.kind not in _VAR and p.kind != p.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    ]


def _keywords(sig: inspect.Signature) -> list[inspect.Parameter]:
    return [
        p
        for p in sig.parameters.values()
        if p.kind not in _VAR
        and (p.kind == p.KEYWORD_ONLY or p.default is not inspect.Parameter.empty)
    ]


def _var(sig: inspect.Signature, kind) -> inspect.Parameter | None:
    return next((p for p in sig.parameters.values() if p.kind == kind), None)


def _differ(what: str, typing: list, impl: list, loc: Loc, first: str | None = None):
    shown_t = ", ".join(f'<Parameter "{p}">' for p in typing) or "none"
    shown_i = ", ".join(f'<Parameter "{p}">' for p in impl) or "none"
    extra = f"; First difference: '{first}'" if first is not None else ""
    return TypingError(
        f"Typing and implementation arguments differ in {what}: the typing function "
        f"takes {shown_t}, the implementation {shown_i}{extra}",
        loc,
    )


def check_signatures(typing_fn, impl, loc: Loc) -> None:
    """Raise a TypingError at ``loc`` where ``impl`` does not take what ``typing_fn``
    takes (see the module docstring)."""
    try:
        t_sig, i_sig = inspect.signature(typing_fn), inspect.signature(impl)
    except (TypeError, ValueError):  # a builtin or a callable object: nothing to compare
        return
    for sig in (t_sig, i_sig):
        star = _var(sig, inspect.Parameter.VAR_KEYWORD)
        if star is not None:
            raise TypingError(
                f"use of VAR_KEYWORD (e.g. **kwargs) is unsupported in an overload; the "
                f"offending argument name is '**{star.name}'",
                loc,
            )
    t_star = _var(t_sig, inspect.Parameter.VAR_POSITIONAL)
    i_star = _var(i_sig, inspect.Parameter.VAR_POSITIONAL)
    if t_star is not None and i_star is None:
        raise TypingError(
            f"the typing function takes VAR_POSITIONAL (e.g. *args) argument kind and the "
            f"implementation does not; the offending argument name is '*{t_star.name}'",
            loc,
        )
    _check_positional(_positional(t_sig), _positional(i_sig), i_star is not None, loc)
    t_kw, i_kw = _keywords(t_sig), _keywords(i_sig)
    if [p.name for p in t_kw] != [p.name for p in i_kw]:
        raise _differ("keyword argument names", t_kw, i_kw, loc)
    if [p.default for p in t_kw] != [p.default for p in i_kw]:
        raise _differ("keyword argument default values", t_kw, i_kw, loc)


def _check_positional(t_pos: list, i_pos: list, impl_star: bool, loc: Loc) -> None:
    names_t, names_i = [p.name for p in t_pos], [p.name for p in i_pos]
    for a, b in zip(names_t, names_i, strict=False):
        if a != b:
            raise _differ("argument names", t_pos, i_pos, loc, first=b)
    if len(names_i) > len(names_t) or (len(names_i) < len(names_t) and not impl_star):
        longer, shorter = (i_pos, t_pos) if len(names_i) > len(names_t) else (t_pos, i_pos)
        raise _differ("argument names", t_pos, i_pos, loc, first=longer[len(shorter)].name)
