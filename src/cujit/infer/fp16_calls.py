"""Typing rules for ``cuda.fp16``.

The ``cuda.fp16.h*`` functions take float16 (other numbers are cast to it) and type
to the ordinary float16 ops: half arithmetic, comparisons, and math intrinsics that
lowering computes in float32.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit import device_api as cuda
from cujit.diagnostics import TypingError
from cujit.infer import builtin_calls as bi
from cujit.infer.context import Typer
from cujit.ir import BinOp, Compare, Intrinsic, UnaryOp, Value
from cujit.types import boolean, float16, float32

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


_FP16_BINARY = {"hadd": "+", "hsub": "-", "hmul": "*", "hdiv": "/"}
_FP16_COMPARE = {"heq": "==", "hne": "!=", "hlt": "<", "hle": "<=", "hgt": ">", "hge": ">="}
_FP16_MATH = {
    "hsqrt": "sqrt",
    "hexp": "exp",
    "hlog": "log",
    "hlog2": "log2",
    "hlog10": "log10",
    "hsin": "sin",
    "hcos": "cos",
    "htanh": "tanh",
    "hfloor": "floor",
    "hceil": "ceil",
}
# Served by libdevice's float32 functions.
_FP16_LIBDEVICE = {"htrunc": "truncf", "hrint": "rintf", "hexp2": "exp2f", "hexp10": "exp10f"}
FP16_SUPPORTED = (
    *_FP16_BINARY,
    *_FP16_LIBDEVICE,
    *_FP16_COMPARE,
    *_FP16_MATH,
    "hneg",
    "habs",
    "hfma",
    "hmax",
    "hmin",
    "hrcp",
    "hrsqrt",
)


def _halves(t: Typer, site: CallSite, n: int) -> list[Value]:
    site.expect(n, n)
    out = []
    for v in site.args:
        ty = t.scalar(v, site.loc, f"cuda.fp16.{site.name}()")
        if ty.is_complex:
            raise TypingError(f"cuda.fp16.{site.name}() takes float16, not {ty}", site.loc)
        out.append(t.cast(v, float16, site.loc))
    return out


def _libdevice_rule(name: str):
    """``htrunc``...: the float32 libdevice function and back (exact for trunc and rint)."""
    fn = f"libdevice.{_FP16_LIBDEVICE[name]}"

    def rule(t: Typer, site: CallSite) -> Value:
        (x,) = (t.cast(v, float32, site.loc) for v in _halves(t, site, 1))
        y = t.emit(Intrinsic(loc=site.loc, result=t.fresh(float32), name=fn, args=(x,)))
        return t.cast(y, float16, site.loc)

    return rule


def fp16_rule(name: str):  # noqa: C901 -- one branch per cuda.fp16 function family; each family's rule differs in arity and result
    def rule(t: Typer, site: CallSite) -> Value:
        loc = site.loc
        if name in _FP16_BINARY:
            a, b = _halves(t, site, 2)
            return t.emit(
                BinOp(loc=loc, result=site.result(float16), op=_FP16_BINARY[name], lhs=a, rhs=b)
            )
        if name in _FP16_COMPARE:
            a, b = _halves(t, site, 2)
            return t.emit(
                Compare(loc=loc, result=site.result(boolean), op=_FP16_COMPARE[name], lhs=a, rhs=b)
            )
        if name in _FP16_MATH:
            (x,) = _halves(t, site, 1)
            return t.emit(
                Intrinsic(
                    loc=loc, result=site.result(float16), name=f"math.{_FP16_MATH[name]}", args=(x,)
                )
            )
        if name == "hneg":
            (x,) = _halves(t, site, 1)
            return t.emit(UnaryOp(loc=loc, result=site.result(float16), op="-", operand=x))
        if name == "habs":
            (x,) = _halves(t, site, 1)
            return t.emit(Intrinsic(loc=loc, result=site.result(float16), name="abs", args=(x,)))
        if name in ("hmax", "hmin"):
            a, b = _halves(t, site, 2)
            return t.emit(
                Intrinsic(loc=loc, result=site.result(float16), name=name[1:], args=(a, b))
            )
        if name == "hfma":  # cuda.fma on halves: one rounding (PTX fma.rn.f16)
            args = tuple(_halves(t, site, 3))
            return t.emit(
                Intrinsic(loc=loc, result=site.result(float16), name="cuda.fma", args=args)
            )
        if name in ("hrcp", "hrsqrt"):
            (x,) = _halves(t, site, 1)
            if name == "hrsqrt":
                x = t.emit(Intrinsic(loc=loc, result=t.fresh(float16), name="math.sqrt", args=(x,)))
            one = t.cast(t.const(1.0, loc), float16, loc)
            return t.emit(BinOp(loc=loc, result=site.result(float16), op="/", lhs=one, rhs=x))
        raise AssertionError(name)

    return rule


def fp16_rules() -> dict:
    rules: dict = {}
    for name in cuda.FP16_FUNCTIONS:
        fn = getattr(cuda.fp16, name)
        rules[fn] = (
            _libdevice_rule(name)
            if name in _FP16_LIBDEVICE
            else fp16_rule(name)
            if name in FP16_SUPPORTED
            else bi.unsupported(f"cuda.fp16.{name}")
        )
    return rules
