"""``cmath``'s elementary functions as kernel Python, compiled as device functions.

Each function takes one complex number and returns one, with the special values of
C99 Annex G (the ones CPython's ``cmath`` returns): the cases with an infinite or NaN
part are decided first, then the finite formula runs.  The inverse functions use
Kahan's formulas ("Branch Cuts for Complex Elementary Functions", 1987), written with
square roots of ``1 ± z`` so that the signs of zeros pick the side of a branch cut,
and a large-argument form (``log|z| + log 4``) that also takes the infinities.

The circular functions are the hyperbolic ones rotated: ``sin z = -i sinh(iz)``,
``cos z = cosh(iz)``, ``tan z = -i tanh(iz)``, ``asin z = -i asinh(iz)``,
``atan z = -i atanh(iz)``; Annex G defines their special values the same way.
The rules in ``cmath_calls`` cast a result back to the argument's complex type.
"""

from __future__ import annotations

import cmath
import math

from cujit.device_function import DeviceFunction

_NAN = float("nan")
_INF = float("inf")
_LN4 = math.log(4.0)
# Above this part magnitude the square roots' squares could overflow (in float32 too):
# the large-argument form is exact to the format's precision there.
_LARGE = 3.4028234663852886e38 / 4.0
_ATANH_LARGE = math.sqrt(_LARGE)
_ATANH_SMALL = math.sqrt(1.1754943508222875e-38)


def c_exp(z):
    x, y = z.real, z.imag
    if math.isfinite(x) and math.isfinite(y):
        r = math.exp(x)
        return complex(r * math.cos(y), r * math.sin(y))
    if math.isnan(x):
        return complex(x, y if y == 0.0 else x)
    if math.isinf(x) and not math.isfinite(y):
        if x < 0.0:
            return complex(0.0, 0.0)
        return complex(x, _NAN)
    if math.isinf(x):
        if y == 0.0:  # e**±inf * (1 + i0): the zero stays
            return complex(math.exp(x), y)
        c, s = math.cos(y), math.sin(y)
        if x > 0.0:
            return complex(math.copysign(x, c), math.copysign(x, s))
        return complex(math.copysign(0.0, c), math.copysign(0.0, s))
    return complex(_NAN, _NAN)  # finite x, y infinite or NaN


def c_sqrt(z):
    x, y = z.real, z.imag
    if math.isinf(y):
        return complex(_INF, y)
    if math.isnan(x):
        return complex(x, x)
    if math.isinf(x):
        if x > 0.0:  # +inf + i0 (NaN y: +inf + iNaN)
            return complex(x, math.copysign(y - y, y))
        return complex(abs(y - y), math.copysign(_INF, y))
    if x == 0.0 and y == 0.0:
        return complex(0.0, y)
    scaled = abs(x) >= _LARGE or abs(y) >= _LARGE
    if scaled:
        x, y = x * 0.25, y * 0.25
    # s = sqrt((|x| + |z|) / 2); x >= 0: (s, y / 2s), else (|y| / 2s, ±s)
    s = math.sqrt((abs(x) + math.hypot(x, y)) * 0.5)
    q = y / (2.0 * s)
    if scaled:
        s, q = s * 2.0, q * 2.0
    if x >= 0.0:
        return complex(s, q)
    return complex(abs(q), math.copysign(s, y))


def c_cosh(z):
    x, y = z.real, z.imag
    if math.isfinite(x) and math.isfinite(y):
        return complex(math.cosh(x) * math.cos(y), math.sinh(x) * math.sin(y))
    if math.isinf(x):
        if math.isnan(y) or y == 0.0:
            imag = y
        elif math.isinf(y):
            imag = _NAN
        else:
            return complex(math.copysign(_INF, math.cos(y)), math.copysign(_INF, math.sin(y) * x))
        return complex(_INF, imag if x > 0.0 else -imag)
    if y == 0.0 or x == 0.0:  # NaN + i0 (the zero's sign unspecified: +0)
        return complex(_NAN, 0.0)
    return complex(_NAN, _NAN)


def c_sinh(z):
    x, y = z.real, z.imag
    if math.isfinite(x) and math.isfinite(y):
        return complex(math.sinh(x) * math.cos(y), math.cosh(x) * math.sin(y))
    if math.isinf(x):
        if y == 0.0:
            return complex(x, y)
        if not math.isfinite(y):  # ±inf + iNaN (the sign unspecified: +)
            return complex(_INF, _NAN)
        return complex(math.copysign(_INF, math.cos(y) * x), math.copysign(_INF, math.sin(y)))
    if y == 0.0:  # x NaN
        return complex(x, y)
    if x == 0.0:  # y infinite or NaN: ±0 + iNaN (the sign unspecified: +)
        return complex(0.0, _NAN)
    return complex(_NAN, _NAN)


def c_tanh(z):
    x, y = z.real, z.imag
    if math.isinf(x):
        if math.isfinite(y):
            return complex(math.copysign(1.0, x), math.copysign(0.0, math.sin(2.0 * y)))
        return complex(math.copysign(1.0, x), 0.0)
    if math.isnan(x):
        return complex(x, y if y == 0.0 else x)
    if not math.isfinite(y):
        return complex(_NAN, _NAN)
    if abs(x) > 22.0:  # tanh x is ±1 to double precision; the imaginary part underflows
        e = math.exp(-2.0 * abs(x))
        return complex(math.copysign(1.0, x), 4.0 * math.sin(y) * math.cos(y) * e)
    # (tanh x (1 + tan² y) + i tan y sech² x) / (1 + tanh² x tan² y): no cancellation
    tx, ty = math.tanh(x), math.tan(y)
    sech = 1.0 / math.cosh(x)
    p = tx * ty
    d = 1.0 + p * p
    return complex(tx * (1.0 + ty * ty) / d, ty / d * sech * sech)


def c_sin(z):
    r = cmath.sinh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


def c_cos(z):
    return cmath.cosh(complex(-z.imag, z.real))


def c_tan(z):
    r = cmath.tanh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


def c_acos(z):
    x, y = z.real, z.imag
    if abs(x) > _LARGE or abs(y) > _LARGE:
        big = math.log(math.hypot(x * 0.5, y * 0.5)) + _LN4
        if math.isnan(y):  # ±inf + iNaN: NaN ± i inf (the sign unspecified: +)
            return complex(y, big)
        return complex(math.atan2(abs(y), x), math.copysign(big, -y))
    if x == 0.0 and math.isnan(y):
        return complex(math.pi / 2.0, y)
    a = cmath.sqrt(complex(1.0 - x, -y))  # sqrt(1 - z)
    b = cmath.sqrt(complex(1.0 + x, y))  # sqrt(1 + z)
    return complex(2.0 * math.atan2(a.real, b.real), math.asinh(b.real * a.imag - b.imag * a.real))


def c_acosh(z):
    x, y = z.real, z.imag
    if abs(x) > _LARGE or abs(y) > _LARGE:
        big = math.log(math.hypot(x * 0.5, y * 0.5)) + _LN4
        return complex(big, math.atan2(y, x))
    a = cmath.sqrt(complex(x - 1.0, y))  # sqrt(z - 1)
    b = cmath.sqrt(complex(x + 1.0, y))  # sqrt(z + 1)
    return complex(math.asinh(a.real * b.real + a.imag * b.imag), 2.0 * math.atan2(a.imag, b.real))


def c_asinh(z):
    x, y = z.real, z.imag
    if abs(x) > _LARGE or abs(y) > _LARGE:
        big = math.log(math.hypot(x * 0.5, y * 0.5)) + _LN4
        if math.isnan(x):  # NaN ± i inf: ±inf + iNaN (the sign unspecified: +)
            return complex(big, x)
        return complex(math.copysign(big, x), math.atan2(y, abs(x)))
    if math.isnan(x) and y == 0.0:
        return complex(x, y)
    a = cmath.sqrt(complex(1.0 + y, -x))  # sqrt(1 - iz)
    b = cmath.sqrt(complex(1.0 - y, x))  # sqrt(1 + iz)
    return complex(
        math.asinh(a.real * b.imag - a.imag * b.real),
        math.atan2(y, a.real * b.real - a.imag * b.imag),
    )


def c_asin(z):
    r = cmath.asinh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


def _atanh_nonneg(x, y):
    """atanh(x + iy) for x >= 0 (or NaN)."""
    ay = abs(y)
    if math.isnan(x) or x > _ATANH_LARGE or ay > _ATANH_LARGE:
        if math.isinf(y):
            real = math.copysign(0.0, x)
        elif math.isinf(x):
            real = 0.0
        else:  # 1/z's real part, scaled against overflow
            h = math.hypot(x * 0.5, y * 0.5)
            real = x / 4.0 / h / h
        return complex(real, math.copysign(math.pi / 2.0, y))
    if x == 1.0 and ay < _ATANH_SMALL:
        if ay == 0.0:
            return complex(_INF, y)
        real = -math.log(math.sqrt(ay) / math.sqrt(math.hypot(ay, 2.0)))
        return complex(real, math.copysign(math.atan2(2.0, -ay) / 2.0, y))
    u = 1.0 - x
    real = math.log1p(4.0 * x / (u * u + ay * ay)) * 0.25
    return complex(real, -math.atan2(-2.0 * y, u * (1.0 + x) - ay * ay) * 0.5)


_atanh_right = DeviceFunction(_atanh_nonneg)


def c_atanh(z):
    x, y = z.real, z.imag
    if math.isnan(x):
        if math.isinf(y):
            return complex(0.0, math.copysign(math.pi / 2.0, y))
        return complex(x, x)
    if math.isnan(y):
        if math.isinf(x) or x == 0.0:
            return complex(math.copysign(0.0, x), y)
        return complex(y, y)
    if x < 0.0:  # atanh is odd
        r = _atanh_right(-x, -y)
        return complex(-r.real, -r.imag)
    return _atanh_right(x, y)


def c_atan(z):
    r = cmath.atanh(complex(-z.imag, z.real))
    return complex(r.imag, -r.real)


def c_log_base(z, base):
    return cmath.log(z) / cmath.log(base)


def c_rect(r, phi):
    """r * (cos phi + i sin phi); an infinite r keeps a zero part a (signed) zero."""
    if math.isnan(r):
        return complex(r, 0.0 if phi == 0.0 else r)
    if not math.isfinite(phi):
        if r == 0.0:
            return complex(0.0, 0.0)
        if math.isinf(r):
            return complex(_INF, phi)
    re, im = math.cos(phi), math.sin(phi)
    if math.isinf(r):
        re = re / r if re == 0.0 else re * r
        im = im / r if im == 0.0 else im * r
        return complex(re, im)
    return complex(re * r, im * r)


_FUNCTIONS = {
    "exp": c_exp,
    "sqrt": c_sqrt,
    "sin": c_sin,
    "cos": c_cos,
    "tan": c_tan,
    "sinh": c_sinh,
    "cosh": c_cosh,
    "tanh": c_tanh,
    "asin": c_asin,
    "acos": c_acos,
    "atan": c_atan,
    "asinh": c_asinh,
    "acosh": c_acosh,
    "atanh": c_atanh,
}
# One DeviceFunction per function, so that every kernel shares its compiled callee.
DEVICE_FUNCTIONS = {name: DeviceFunction(f) for name, f in _FUNCTIONS.items()}
LOG_BASE = DeviceFunction(c_log_base)
RECT = DeviceFunction(c_rect)
