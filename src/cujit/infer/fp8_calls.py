"""Typing rules for the fp8 types' constructors and ``_internal.cuda_fp8``'s conversions.

``fp8_e4m3(x)`` (and e5m2, e8m0) is a Cast, as every conversion between an fp8 type and
another number (``codegen/fp8.py``).  ``cvt_*_to_fp8`` / ``cvt_*_to_e8m0`` take their
saturation, interpretation and rounding as constants and become ``fp8.encode`` with
them as attributes, returning the code as a uint8; ``cvt_e8m0_to_bf16raw`` builds a
``bfloat16_raw`` namedtuple whose ``x`` is the bfloat16's bits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit import fp8 as api
from cujit.diagnostics import TypingError
from cujit.infer.context import Typer
from cujit.ir import BuildTuple, Intrinsic, TupleGet, Value
from cujit.types import NamedTuple, bfloat16, float32, float64, uint8, uint16
from cujit.types.fp8 import fp8_e4m3, fp8_e5m2, fp8_e8m0

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

RAW = NamedTuple((uint16,), api.bfloat16_raw)
_INTERPRETATIONS = {0: "fp8_e4m3", 1: "fp8_e5m2"}


def _constant(t: Typer, site: CallSite, v: Value, what: str, allowed) -> int:
    value = t.const_value(v)
    if not isinstance(value, int) or int(value) not in allowed:
        raise TypingError(
            f"{site.name}(): the {what} must be a constant ({', '.join(map(str, allowed))})",
            site.loc,
        )
    return int(value)


def _source(t: Typer, site: CallSite, kind: str) -> Value:
    x = site.args[0]
    if kind != "raw":
        t.scalar(x, site.loc, f"{site.name}()")
        return t.cast(x, float32 if kind == "float32" else float64, site.loc)
    if x.type != RAW:
        raise TypingError(f"{site.name}() takes a bfloat16_raw, not {x.type}", site.loc)
    bits = t.emit(TupleGet(loc=site.loc, result=t.fresh(uint16), tuple=x, index=0))
    b = t.emit(
        Intrinsic(loc=site.loc, result=t.fresh(bfloat16), name="bf16.from_bits", args=(bits,))
    )
    return t.cast(b, float32, site.loc)


def _conversion(name: str):
    kind, target = api.CONVERSIONS[name]

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(3, 3)
        x = _source(t, site, kind)
        sat = _constant(t, site, site.args[1], "saturation", (0, 1))
        if target == "fp8":
            fmt = _INTERPRETATIONS[
                _constant(t, site, site.args[2], "interpretation", tuple(_INTERPRETATIONS))
            ]
            mode = "rn"
        else:
            fmt = "fp8_e8m0"
            mode = api.ROUND_MODES[
                _constant(t, site, site.args[2], "rounding mode", tuple(api.ROUND_MODES))
            ]
        attrs = (("format", fmt), ("sat", bool(sat)), ("mode", mode))
        return t.emit(
            Intrinsic(
                loc=site.loc, result=site.result(uint8), name="fp8.encode", args=(x,), attrs=attrs
            )
        )

    return rule


def _e8m0_to_bf16raw(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    t.integer(site.args[0], site.loc, "cvt_e8m0_to_bf16raw()")
    code = t.cast(site.args[0], uint8, site.loc)
    bits = t.emit(
        Intrinsic(loc=site.loc, result=t.fresh(uint16), name="fp8.e8m0_to_bf16_bits", args=(code,))
    )
    return t.emit(BuildTuple(loc=site.loc, result=site.result(RAW), items=(bits,)))


def _constructor(target):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1)
        t.scalar(site.args[0], site.loc, f"{target}()")
        return t.cast(site.args[0], target, site.loc)

    return rule


def fp8_rules() -> dict:
    """The call table's fp8 entries: the types' constructors and the conversions."""
    rules: dict = {ty: _constructor(ty) for ty in (fp8_e5m2, fp8_e4m3, fp8_e8m0)}
    for name, f in api.FUNCTIONS.items():
        rules[f] = _e8m0_to_bf16raw if name == "cvt_e8m0_to_bf16raw" else _conversion(name)
    return rules
