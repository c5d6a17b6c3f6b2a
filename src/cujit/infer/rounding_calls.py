"""``round`` and ``pow`` with numba's meaning.

``round(x)`` of a float rounds half to even and is an int64 (libdevice's ``rint``);
of an integer it is the integer.  ``round(x, ndigits)`` of a float is a float of
x's type, computed by ``round_ndigits`` below, which is compiled as a device
function for the call (the scaling, then half-to-even on the scaled value, as
numba and CPython's ``float.__round__`` fallback do).  ``pow(x, y)`` is ``x ** y``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from cujit.device_function import DeviceFunction
from cujit.diagnostics import TypingError
from cujit.infer.arith import type_binop
from cujit.infer.context import Typer
from cujit.ir import BinOp, Intrinsic, Value
from cujit.types import NoneType, float32, int64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def round_ndigits(x, ndigits):
    """``round(x, ndigits)`` of a float (typed and compiled for each call's types)."""
    if math.isinf(x) or math.isnan(x):
        return x
    pow2 = 1.0
    if ndigits > 22:  # 10**ndigits is inexact beyond 1e22: scale in two steps
        pow1 = _pow10(ndigits - 22)
        pow2 = 1e22
    else:
        pow1 = _pow10(abs(ndigits))
    if ndigits >= 0:
        y = (x * pow1) * pow2
        if math.isinf(y):
            return x
    else:
        y = x / pow1
    z = math.copysign(float(round(y)), y)  # half to even; keeps the sign of a zero
    if ndigits >= 0:
        return (z / pow2) / pow1
    return z * pow1


def _pow10_of(n):
    """10.0 ** n, exact for n <= 22 (products of exact powers of ten)."""
    p = 1.0
    for _ in range(n):
        p *= 10.0
    return p


_pow10 = DeviceFunction(_pow10_of)  # round_ndigits calls it by this global name


_ROUND_NDIGITS = DeviceFunction(round_ndigits)


def _rint(t: Typer, x: Value, loc) -> Value:
    name = "libdevice.rintf" if x.type == float32 else "libdevice.rint"
    return t.emit(Intrinsic(loc=loc, result=t.fresh(x.type), name=name, args=(x,)))


def call_round(t: Typer, site: CallSite) -> Value:
    site.expect(1, 2, ("ndigits",))
    x = site.arg(0, "number")
    xt = t.scalar(x, site.loc, "round()")
    if xt.is_complex:
        raise TypingError("round() of a complex number is not supported", site.loc)
    nd = site.arg(1, "ndigits", None)
    if nd is not None and not isinstance(nd.type, NoneType):
        nd = t.integer(nd, site.loc, "round()'s ndigits")
        if not xt.is_float:
            raise TypingError(
                "round(x, ndigits) of an integer is not supported in kernels; round a float",
                site.loc,
            )
        from cujit.infer.function_calls import call_device_function

        call_device_function(t, site.op, _ROUND_NDIGITS, _with_args(site, [x, nd]))
        out = t.value(site.op.result)
        return t.cast(out, xt, site.loc)
    if not xt.is_float:
        return t.cast(x, int64, site.loc) if xt != int64 else x
    return t.cast(_rint(t, x, site.loc), int64, site.loc)


def _with_args(site: CallSite, args: list[Value]) -> CallSite:
    return type(site)(site.op, "round", args, {})


def call_pow(t: Typer, site: CallSite) -> Value:
    site.expect(2, 2)
    a, b = site.args
    type_binop(t, BinOp(loc=site.loc, result=site.op.result, op="**", lhs=a, rhs=b))
    return t.value(site.op.result)


def rounding_rules() -> dict:
    return {round: call_round, pow: call_pow}
