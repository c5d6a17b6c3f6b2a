"""The CPU target's libdevice functions that the C library lacks: ``normcdfinv``,
``erfinv``, ``erfcinv``, ``erfcx``, ``sinpi``/``cospi``, in float64 (the float32
variants compute in float64 and round).

``normcdfinv`` starts from Acklam's rational approximation (relative error below
1.2e-9) and takes one Halley step on ``normcdf`` (written with the C library's
``erfc``), which brings it to float64's precision; ``erfinv``/``erfcinv`` start from
it and take Newton steps on ``erf``/``erfc``.
"""

from __future__ import annotations

import math

from cujit.targets.cpu.formulas import F, intrinsic, libc

_A = (
    -3.969683028665376e01,
    2.209460984245205e02,
    -2.759285104469687e02,
    1.383577518672690e02,
    -3.066479806614716e01,
    2.506628277459239e00,
)
_B = (
    -5.447609879822406e01,
    1.615858368580409e02,
    -1.556989798598866e02,
    6.680131188771972e01,
    -1.328068155288572e01,
    1.0,
)
_C = (
    -7.784894002430293e-03,
    -3.223964580411365e-01,
    -2.400758277161838e00,
    -2.549732539343734e00,
    4.374664141464968e00,
    2.938163982698783e00,
)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00, 1.0)
_P_LOW = 0.02425


def _poly(x: F, coeffs: tuple[float, ...]) -> F:
    acc = x * coeffs[0] + coeffs[1]
    for c in coeffs[2:]:
        acc = acc * x + c
    return acc


def _tail(p: F) -> F:  # the lower tail's estimate for p (clamped so log stays finite)
    safe = (p > 0.0).where(p, 1e-300)
    q = intrinsic("sqrt.f64", p.v.type, libc("log", safe) * -2.0)
    return _poly(q, _C) / _poly(q, _D)


def normcdf(x: F) -> F:
    return libc("erfc", x * -math.sqrt(0.5)) * 0.5


def normcdfinv(p: F) -> F:
    q = p - 0.5
    r = q * q
    central = _poly(r, _A) * q / _poly(r, _B)
    x = (p < _P_LOW).where(_tail(p), ((1.0 - p) < _P_LOW).where(-_tail(1.0 - p), central))
    # One Halley step; where exp overflows (p near the smallest doubles) keep the estimate.
    e = normcdf(x) - p
    u = e * math.sqrt(2 * math.pi) * libc("exp", x * x * 0.5)
    refined = x - u / (x * u * 0.5 + 1.0)
    x = (u.eq(u) & (u * 0.0).eq(0.0)).where(refined, x)
    x = (p <= 0.0).where(float("-inf"), (p >= 1.0).where(float("inf"), x))
    return p.ne(p).where(p, x)


def erfinv(y: F) -> F:
    x = normcdfinv((y + 1.0) * 0.5) * math.sqrt(0.5)
    for _ in range(2):
        step = (libc("erf", x) - y) / (libc("exp", -(x * x)) * (2 / math.sqrt(math.pi)))
        x = _finite(x).where(x - step, x)
    return x


def erfcinv(y: F) -> F:
    x = -normcdfinv(y * 0.5) * math.sqrt(0.5)
    for _ in range(2):
        step = (libc("erfc", x) - y) / (libc("exp", -(x * x)) * (-2 / math.sqrt(math.pi)))
        x = _finite(x).where(x - step, x)
    return x


def erfcx(x: F) -> F:
    """``exp(x*x) * erfc(x)``; past 26, where exp overflows, its asymptotic series."""
    direct = libc("exp", x * x) * libc("erfc", x)
    w = 1.0 / (x * x * 2.0)
    series = _poly(w, (-945.0, 105.0, -15.0, 3.0, -1.0, 1.0)) / (x * math.sqrt(math.pi))
    return (x < 26.0).where(direct, series)


def _finite(x: F) -> F:
    return intrinsic("fabs.f64", x.v.type, x) < float("inf")


def _mod2(x: F) -> F:  # exact: sin(pi x) and cos(pi x) have period 2
    return F(x.ctx, x.b.frem(x.v, x.lift(2.0)))


def sinpi(x: F) -> F:
    return libc("sin", _mod2(x) * math.pi)


def cospi(x: F) -> F:
    return libc("cos", _mod2(x) * math.pi)


__all__ = ["cospi", "erfcinv", "erfcx", "erfinv", "normcdf", "normcdfinv", "sinpi"]
