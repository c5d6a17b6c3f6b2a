"""The CPU target's libdevice functions with a rounding mode (``_rn``/``_rz``/``_rd``/``_ru``).

The host computes in round-to-nearest, so each directed operation is the nearest
result corrected by one step (``nextafter``) toward the mode's direction when the
exact value lies on that side of it.  Which side is known without a wider type:

- ``a + b``: TwoSum's error term is exact;
- ``a * b``: ``fma(a, b, -r)`` is the exact error;
- ``a / b``: the remainder ``fma(-r, b, a)`` is exact, its sign times b's is the side;
- ``sqrt(x)``: ``fma(-r, r, x)``;
- ``fma(a, b, c)``: TwoSum of ``a*b``'s two halves and c (float32 computes in float64);
- conversions: the result compared back with the operand in a type that holds both.

A finite operation whose nearest result overflowed to infinity counts as lying below
(above, for -inf) it, so ``_rz``/``_rd`` give the largest finite value, as the GPU does.
Float-to-integer conversions saturate (NaN gives 0), as PTX's ``cvt`` does.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.lltypes import F32, F64
from cujit.targets.cpu.formulas import F, intrinsic, libc

_NEXTAFTER = {F32: "nextafterf", F64: "nextafter"}


def _finite(x: F) -> F:
    return intrinsic(f"fabs.{_sfx(x)}", x.v.type, x) < float("inf")


def _sfx(x: F) -> str:
    return "f32" if x.v.type == F32 else "f64"


def directed(r: F, below: F, above: F, mode: str) -> F:
    """``r`` (the nearest result) moved one step by ``mode``; ``below``/``above``: the
    exact value lies below/above ``r``."""
    if mode == "rn":
        return r
    name = _NEXTAFTER[r.v.type]
    down = libc(name, r, F(r.ctx, ll.Constant(r.v.type, float("-inf"))))
    up = libc(name, r, F(r.ctx, ll.Constant(r.v.type, float("inf"))))
    if mode == "rd":
        return below.where(down, r)
    if mode == "ru":
        return above.where(up, r)
    return ((r > 0.0) & below).where(down, ((r < 0.0) & above).where(up, r))


def _sides(r: F, err: F, inputs: list[F]) -> tuple[F, F]:
    ok = _finite(inputs[0])
    for x in inputs[1:]:
        ok = ok & _finite(x)
    overflow_hi = ok & r.eq(float("inf"))
    overflow_lo = ok & r.eq(float("-inf"))
    return (err < 0.0) | overflow_hi, (err > 0.0) | overflow_lo


def _two_sum_err(a: F, b: F, s: F) -> F:
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def add(a: F, b: F, mode: str) -> F:
    r = a + b
    return directed(r, *_sides(r, _two_sum_err(a, b, r), [a, b]), mode)


def sub(a: F, b: F, mode: str) -> F:
    return add(a, -b, mode)


def mul(a: F, b: F, mode: str) -> F:
    r = a * b
    err = intrinsic(f"fma.{_sfx(a)}", a.v.type, a, b, -r)
    return directed(r, *_sides(r, err, [a, b]), mode)


def div(a: F, b: F, mode: str) -> F:
    r = a / b
    rem = intrinsic(f"fma.{_sfx(a)}", a.v.type, -r, b, a)
    err = (b < 0.0).where(-rem, rem)  # the side of a/b - r is rem's sign times b's
    return directed(r, *_sides(r, err, [a, b]), mode)


def rcp(x: F, mode: str) -> F:
    return div(F(x.ctx, ll.Constant(x.v.type, 1.0)), x, mode)


def sqrt(x: F, mode: str) -> F:
    r = intrinsic(f"sqrt.{_sfx(x)}", x.v.type, x)
    rem = intrinsic(f"fma.{_sfx(x)}", x.v.type, -r, r, x)
    return directed(r, rem < 0.0, rem > 0.0, mode)


def fma(a: F, b: F, c: F, mode: str) -> F:
    r = intrinsic(f"fma.{_sfx(a)}", a.v.type, a, b, c)
    if a.v.type == F32:  # a*b is exact in float64: exact = s + e
        wa, wb, wc = (x.to(F64) for x in (a, b, c))
        p = wa * wb
        s = p + wc
        err = (s - r.to(F64)) + _two_sum_err(p, wc, s)
    else:  # a*b = p + pe exactly; (p + c) = s + se exactly
        p = a * b
        pe = intrinsic("fma.f64", F64, a, b, -p)
        s = p + c
        err = (s - r) + (_two_sum_err(p, c, s) + pe)
    return directed(r, *_sides(r, err, [a, b, c]), mode)


def narrow(x: F, mode: str) -> F:
    """float64 -> float32."""
    r = x.to(F32)
    return directed(r, *_sides(r, x - r.to(F64), [x]), mode)


_ROUND = {"rd": "floor", "ru": "ceil", "rz": "trunc", "rn": "rint"}


def to_int(x: F, ty: ll.Type, unsigned: bool, mode: str) -> F:
    """Float -> integer, rounded by ``mode``, saturating (``llvm.fpto[su]i.sat``)."""
    rounded = intrinsic(f"{_ROUND[mode]}.{_sfx(x)}", x.v.type, x)
    kind = "fptoui" if unsigned else "fptosi"
    return intrinsic(f"{kind}.sat.i{ty.width}.{_sfx(x)}", ty, rounded)


def from_int(i: F, ty: ll.Type, unsigned: bool, mode: str) -> F:
    """Integer -> float, rounded by ``mode``."""
    i = F(i.ctx, i.v, unsigned)
    r = i.to(ty)
    if mode == "rn":
        return r
    if i.v.type.width == 32 and ty == F32:  # both are exact in float64
        d = i.to(F64) - r.to(F64)
        return directed(r, d < 0.0, d > 0.0, mode)
    # Compare in the integer type; r may be 2**63 (2**64 unsigned), past its range.
    limit = 2.0 ** (i.v.type.width - (0 if unsigned else 1))
    past = r >= limit
    kind = "fptoui" if unsigned else "fptosi"
    back = intrinsic(f"{kind}.sat.i{i.v.type.width}.{_sfx(r)}", i.v.type, r)
    back = F(i.ctx, back.v, unsigned)
    return directed(r, past | (i < back), (r < limit) & (i > back), mode)


__all__ = [
    "add",
    "directed",
    "div",
    "fma",
    "from_int",
    "mul",
    "narrow",
    "rcp",
    "sqrt",
    "sub",
    "to_int",
]
