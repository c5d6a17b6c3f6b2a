"""Complex ``**`` (and ``pow``): numba's algorithm, compiled as a device function.

An integral real exponent of magnitude at most 100 is repeated squaring (exact
for small powers, as CPython's ``c_powi``); any other exponent goes through polar
form: ``|a| ** b.real / exp(arg(a) * b.imag)`` at angle
``arg(a) * b.real + b.imag * log|a|``.  ``0 ** b`` is 0 and ``a ** 0`` is 1.
"""

from __future__ import annotations

import math

from cujit.device_function import DeviceFunction


def _powu(x, n):
    r = 1.0 + 0.0j
    p = x
    mask = 1
    while mask > 0 and n >= mask:
        if n & mask:
            r = r * p
        mask = mask << 1
        p = p * p
    return r


powu = DeviceFunction(_powu)


def complex_power(a, b):
    """``a ** b`` for complex ``a`` and ``b`` (typed and compiled per call)."""
    if b.imag == 0.0 and b.real == math.floor(b.real) and math.fabs(b.real) <= 100.0:
        n = int(b.real)
        if n >= 0:
            return powu(a, n)
        return 1.0 / powu(a, -n)
    if b.real == 0.0 and b.imag == 0.0:
        return 1.0 + 0.0j
    if a.real == 0.0 and a.imag == 0.0:
        return 0.0j
    vabs = math.hypot(a.real, a.imag)
    length = math.pow(vabs, b.real)
    at = math.atan2(a.imag, a.real)
    phase = at * b.real
    if b.imag != 0.0:
        length = length / math.exp(at * b.imag)
        phase = phase + b.imag * math.log(vabs)
    return complex(length * math.cos(phase), length * math.sin(phase))


COMPLEX_POWER = DeviceFunction(complex_power)
