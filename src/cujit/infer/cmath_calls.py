"""Typing rules for ``cmath``.

The ``cmath`` functions numba's CUDA target types (its ``cmathdecl``) that are simple
on the parts are intrinsics (``cmath.sqrt`` ...); ``phase``, ``polar``, ``rect`` and the
``isnan`` family are written here with the real math intrinsics.  A real argument
becomes complex first (float32 -> complex64, other reals -> complex128).
"""

from __future__ import annotations

import cmath
from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError, UnsupportedError
from cujit.infer import builtin_calls as bi
from cujit.infer.context import Typer
from cujit.ir import BinOp, BuildTuple, Intrinsic, Value
from cujit.types import Tuple, boolean, complex64, complex128, float16, float32, float64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


CMATH_INTRINSICS = ("sqrt", "exp", "log", "log10", "sin", "cos")
# numba's CUDA cmath functions that cujit does not have (yet): a clear error.
CMATH_MISSING = ("acos", "asin", "asinh", "atan", "atanh", "tan", "acosh", "cosh", "sinh", "tanh")


def as_complex(t: Typer, v: Value, loc, what: str) -> Value:
    ty = t.scalar(v, loc, what)
    if ty.is_complex:
        return v
    return t.cast(v, complex64 if ty in (float32, float16) else complex128, loc)


def cmath_unary(fname: str):
    def rule(t: Typer, site: CallSite) -> Value:
        if fname == "log" and len(site.args) == 2:
            raise UnsupportedError(
                "cmath.log(z, base) is not supported in kernels",
                site.loc,
                hint="divide cmath.log(z) by math.log(base)",
            )
        site.expect(1, 1)
        z = as_complex(t, site.args[0], site.loc, f"cmath.{fname}()")
        return t.emit(
            Intrinsic(loc=site.loc, result=site.result(z.type), name=f"cmath.{fname}", args=(z,))
        )

    return rule


def call_phase(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    z = as_complex(t, site.args[0], site.loc, "cmath.phase()")
    return t.emit(
        Intrinsic(loc=site.loc, result=site.result(z.type.part_type), name="cmath.phase", args=(z,))
    )


def call_polar(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    z = as_complex(t, site.args[0], site.loc, "cmath.polar()")
    pt = z.type.part_type
    r = t.emit(Intrinsic(loc=site.loc, result=t.fresh(pt), name="complex.abs", args=(z,)))
    phi = t.emit(Intrinsic(loc=site.loc, result=t.fresh(pt), name="cmath.phase", args=(z,)))
    return t.emit(BuildTuple(loc=site.loc, result=site.result(Tuple((pt, pt))), items=(r, phi)))


def call_rect(t: Typer, site: CallSite) -> Value:
    """``cmath.rect(r, phi)``: r * cos(phi) + 1j * r * sin(phi), complex128 (numba)."""
    site.expect(2, 2)
    for v in site.args:
        if t.scalar(v, site.loc, "cmath.rect()").is_complex:
            raise TypingError("cmath.rect() takes real numbers", site.loc)
    r, phi = (t.cast(v, float64, site.loc) for v in site.args)
    loc = site.loc
    cos = t.emit(Intrinsic(loc=loc, result=t.fresh(float64), name="math.cos", args=(phi,)))
    sin = t.emit(Intrinsic(loc=loc, result=t.fresh(float64), name="math.sin", args=(phi,)))
    re = t.emit(BinOp(loc=loc, result=t.fresh(float64), op="*", lhs=r, rhs=cos))
    im = t.emit(BinOp(loc=loc, result=t.fresh(float64), op="*", lhs=r, rhs=sin))
    return t.emit(
        Intrinsic(loc=loc, result=site.result(complex128), name="complex.build", args=(re, im))
    )


def cmath_test(fname: str):
    """``cmath.isnan``/``isinf``: either part; ``isfinite``: both parts."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1)
        z = site.args[0]
        if not t.scalar(z, site.loc, f"cmath.{fname}()").is_complex:
            return bi.float_test(fname, fname == "isfinite")(t, site)
        loc, pt = site.loc, z.type.part_type
        tests = []
        for part in ("real", "imag"):
            x = t.emit(Intrinsic(loc=loc, result=t.fresh(pt), name=f"complex.{part}", args=(z,)))
            tests.append(
                t.emit(Intrinsic(loc=loc, result=t.fresh(boolean), name=f"math.{fname}", args=(x,)))
            )
        join = "&" if fname == "isfinite" else "|"
        return t.emit(
            BinOp(loc=loc, result=site.result(boolean), op=join, lhs=tests[0], rhs=tests[1])
        )

    return rule


def cmath_rules() -> dict:
    rules: dict = {getattr(cmath, f): cmath_unary(f) for f in CMATH_INTRINSICS}
    rules.update(
        {
            cmath.phase: call_phase,
            cmath.polar: call_polar,
            cmath.rect: call_rect,
            cmath.isnan: cmath_test("isnan"),
            cmath.isinf: cmath_test("isinf"),
            cmath.isfinite: cmath_test("isfinite"),
        }
    )
    rules.update({getattr(cmath, f): bi.unsupported(f"cmath.{f}") for f in CMATH_MISSING})
    return rules
