"""Typing rules for ``cmath``.

``cmath.log`` and ``log10`` are intrinsics; ``phase``, ``polar`` and the ``isnan``
family are written here with the real math intrinsics.  The functions whose special
values (C99 Annex G) need case analysis, ``exp``, ``sqrt``, the circular and hyperbolic
functions and their inverses, ``rect`` and ``log(z, base)``, are calls of the device
functions of ``cmath_impl``.  A real argument becomes complex first (float32 ->
complex64, other reals -> complex128), and the result has the argument's type.
"""

from __future__ import annotations

import cmath
from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer import builtin_calls as bi
from cujit.infer.cmath_impl import DEVICE_FUNCTIONS, LOG_BASE, RECT
from cujit.infer.context import Typer
from cujit.ir import BinOp, BuildTuple, Intrinsic, Value
from cujit.types import Tuple, boolean, complex64, complex128, float16, float32, float64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


CMATH_INTRINSICS = ("log", "log10")


def as_complex(t: Typer, v: Value, loc, what: str) -> Value:
    ty = t.scalar(v, loc, what)
    if ty.is_complex:
        return v
    return t.cast(v, complex64 if ty in (float32, float16) else complex128, loc)


def _call_impl(t: Typer, site: CallSite, devfn, args: list[Value], ty) -> Value:
    """A call of ``cmath_impl``'s ``devfn`` on ``args``, its result cast to ``ty``."""
    from cujit.infer.function_calls import call_device_function

    site.args[:] = args
    site.kwargs.clear()
    call_device_function(t, site.op, devfn, site)
    out = t.value(site.op.result)
    if out.type != ty:  # float32 parts may widen inside: the result is the argument's
        t.alias(site.op.result, t.cast(out, ty, site.loc))
    return t.value(site.op.result)


def cmath_impl_call(fname: str):
    """``cmath.<fname>(z)`` through the device function of ``cmath_impl``."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1)
        z = as_complex(t, site.args[0], site.loc, f"cmath.{fname}()")
        return _call_impl(t, site, DEVICE_FUNCTIONS[fname], [z], z.type)

    return rule


def _log_base(t: Typer, site: CallSite) -> Value:
    zs = [as_complex(t, v, site.loc, "cmath.log()") for v in site.args]
    common = complex128 if complex128 in (zs[0].type, zs[1].type) else complex64
    zs = [t.cast(z, common, site.loc) for z in zs]
    return _call_impl(t, site, LOG_BASE, zs, common)


def cmath_unary(fname: str):
    def rule(t: Typer, site: CallSite) -> Value:
        if fname == "log" and len(site.args) == 2:
            return _log_base(t, site)
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
    args = [t.cast(v, float64, site.loc) for v in site.args]
    return _call_impl(t, site, RECT, args, complex128)


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
    rules.update({getattr(cmath, f): cmath_impl_call(f) for f in DEVICE_FUNCTIONS})
    return rules
