"""Complex numbers: a complex64 value is the LLVM struct ``{float, float}``, a
complex128 ``{double, double}`` (real part first, as NumPy lays them out in memory).

Arithmetic is done on the parts.  Division uses the scaled algorithm CPython's
``complex.__truediv__`` uses (Smith's method: divide by the larger part of the
divisor first), so quotients do not overflow where the naive formula would; the
``cmath`` functions are written with the target's real math table (``hypot``,
``atan2``, ``exp``, ``log``, ``sin``, ``cos``, ``sinh``, ``cosh``), so every target
that has those has them.

Also here: NumPy's NaN-propagating ``np.minimum``/``np.maximum`` on real scalars.
"""

from __future__ import annotations

import math

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import scalar_type
from cujit.types import Scalar


def parts(ctx: FunctionLowering, z: ll.Value) -> tuple[ll.Value, ll.Value]:
    b = ctx.builder
    return b.extract_value(z, 0), b.extract_value(z, 1)


def build(ctx: FunctionLowering, t: Scalar, re: ll.Value, im: ll.Value) -> ll.Value:
    b = ctx.builder
    z = ll.Constant(scalar_type(t), ll.Undefined)
    return b.insert_value(b.insert_value(z, re, 0), im, 1)


def _fconst(like: ll.Value, value: float) -> ll.Constant:
    return ll.Constant(like.type, value)


def binop(ctx: FunctionLowering, t: Scalar, op: str, a: ll.Value, c: ll.Value) -> ll.Value:
    """``a op c`` for complex ``a`` and ``c`` of type ``t``; op in + - * /."""
    b = ctx.builder
    ar, ai = parts(ctx, a)
    cr, ci = parts(ctx, c)
    if op == "+":
        return build(ctx, t, b.fadd(ar, cr), b.fadd(ai, ci))
    if op == "-":
        return build(ctx, t, b.fsub(ar, cr), b.fsub(ai, ci))
    if op == "*":
        re = b.fsub(b.fmul(ar, cr), b.fmul(ai, ci))
        im = b.fadd(b.fmul(ar, ci), b.fmul(ai, cr))
        return build(ctx, t, re, im)
    if op == "/":
        return _divide(ctx, t, ar, ai, cr, ci)
    raise AssertionError(f"complex binop {op}")


def _divide(ctx, t: Scalar, ar, ai, cr, ci) -> ll.Value:
    b = ctx.builder
    pt = t.part_type
    abs_r = ctx.call_math("fabs", pt, [cr])
    abs_i = ctx.call_math("fabs", pt, [ci])
    # |cr| >= |ci|: ratio = ci / cr, denom = cr + ci * ratio
    r1 = b.fdiv(ci, cr)
    d1 = b.fadd(cr, b.fmul(ci, r1))
    re1 = b.fdiv(b.fadd(ar, b.fmul(ai, r1)), d1)
    im1 = b.fdiv(b.fsub(ai, b.fmul(ar, r1)), d1)
    # |ci| > |cr|: ratio = cr / ci, denom = cr * ratio + ci
    r2 = b.fdiv(cr, ci)
    d2 = b.fadd(b.fmul(cr, r2), ci)
    re2 = b.fdiv(b.fadd(b.fmul(ar, r2), ai), d2)
    im2 = b.fdiv(b.fsub(b.fmul(ai, r2), ar), d2)
    # A NaN divisor part fails both ordered tests and takes the second branch: NaN out.
    first = b.fcmp_ordered(">=", abs_r, abs_i)
    return build(ctx, t, b.select(first, re1, re2), b.select(first, im1, im2))


def negate(ctx: FunctionLowering, t: Scalar, z: ll.Value) -> ll.Value:
    b = ctx.builder
    re, im = parts(ctx, z)
    return build(ctx, t, b.fsub(_fconst(re, -0.0), re), b.fsub(_fconst(im, -0.0), im))


def compare(ctx: FunctionLowering, cmp: str, a: ll.Value, c: ll.Value) -> ll.Value:
    b = ctx.builder
    ar, ai = parts(ctx, a)
    cr, ci = parts(ctx, c)
    if cmp == "==":
        return b.and_(b.fcmp_ordered("==", ar, cr), b.fcmp_ordered("==", ai, ci))
    if cmp == "!=":
        return b.or_(b.fcmp_unordered("!=", ar, cr), b.fcmp_unordered("!=", ai, ci))
    raise AssertionError(f"complex compare {cmp}")


def cast(ctx: FunctionLowering, src: Scalar, dst: Scalar, x: ll.Value, real_cast) -> ll.Value:
    """Conversions to and from complex (``real_cast`` converts between real scalars)."""
    b = ctx.builder
    if dst.kind == "b":  # truthiness: either part non-zero
        re, im = parts(ctx, x)
        zero = _fconst(re, 0.0)
        return b.or_(b.fcmp_unordered("!=", re, zero), b.fcmp_unordered("!=", im, zero))
    pt = dst.part_type
    if src.is_complex:
        re, im = parts(ctx, x)
        return build(
            ctx, dst, real_cast(ctx, src.part_type, pt, re), real_cast(ctx, src.part_type, pt, im)
        )
    re = real_cast(ctx, src, pt, x)
    return build(ctx, dst, re, ll.Constant(scalar_type(pt), 0.0))


# -- intrinsics -----------------------------------------------------------------------


def lower_real(ctx: FunctionLowering, op: ir.Intrinsic, args):
    return ctx.builder.extract_value(args[0], 0)


def lower_imag(ctx: FunctionLowering, op: ir.Intrinsic, args):
    return ctx.builder.extract_value(args[0], 1)


def lower_build(ctx: FunctionLowering, op: ir.Intrinsic, args):
    return build(ctx, op.result.type, args[0], args[1])


def lower_conj(ctx: FunctionLowering, op: ir.Intrinsic, args):
    re, im = parts(ctx, args[0])
    b = ctx.builder
    return build(ctx, op.result.type, re, b.fsub(_fconst(im, -0.0), im))


def lower_abs(ctx: FunctionLowering, op: ir.Intrinsic, args):
    re, im = parts(ctx, args[0])
    return ctx.call_math("hypot", op.result.type, [re, im])


def lower_phase(ctx: FunctionLowering, op: ir.Intrinsic, args):
    re, im = parts(ctx, args[0])
    return ctx.call_math("atan2", op.result.type, [im, re])


def _cmath(ctx: FunctionLowering, name: str, t: Scalar, z: ll.Value) -> ll.Value:
    b = ctx.builder
    pt = t.part_type
    re, im = parts(ctx, z)

    def m(f, *xs):
        return ctx.call_math(f, pt, list(xs))

    if name == "exp":  # e**re * (cos im + i sin im)
        r = m("exp", re)
        return build(ctx, t, b.fmul(r, m("cos", im)), b.fmul(r, m("sin", im)))
    if name in ("log", "log10"):  # log|z| + i arg z
        lr, li = m("log", m("hypot", re, im)), m("atan2", im, re)
        if name == "log10":
            k = _fconst(re, 1.0 / math.log(10.0))
            lr, li = b.fmul(lr, k), b.fmul(li, k)
        return build(ctx, t, lr, li)
    if name == "sqrt":
        # s = sqrt((|re| + |z|) / 2); re >= 0: (s, im / 2s), else (|im| / 2s, ±s)
        half = _fconst(re, 0.5)
        s = m("sqrt", b.fmul(b.fadd(m("fabs", re), m("hypot", re, im)), half))
        q = b.fdiv(b.fmul(im, half), s)  # im / 2s
        zero = _fconst(re, 0.0)
        both_zero = b.and_(b.fcmp_ordered("==", re, zero), b.fcmp_ordered("==", im, zero))
        q = b.select(both_zero, zero, q)  # sqrt(0) is 0 (0/0 otherwise)
        nonneg = b.fcmp_unordered(">=", re, zero)
        out_re = b.select(nonneg, s, m("fabs", q))
        out_im = b.select(nonneg, q, m("copysign", s, im))
        return build(ctx, t, out_re, out_im)
    if name == "sin":  # sin re cosh im + i cos re sinh im
        return build(
            ctx, t, b.fmul(m("sin", re), m("cosh", im)), b.fmul(m("cos", re), m("sinh", im))
        )
    if name == "cos":  # cos re cosh im - i sin re sinh im
        nim = b.fmul(m("sin", re), m("sinh", im))
        return build(ctx, t, b.fmul(m("cos", re), m("cosh", im)), b.fsub(_fconst(nim, -0.0), nim))
    raise AssertionError(f"cmath.{name}")


def lower_cmath(ctx: FunctionLowering, op: ir.Intrinsic, args):
    return _cmath(ctx, op.name.split(".", 1)[1], op.result.type, args[0])


def lower_np_minmax(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``np.minimum``/``np.maximum`` on floats: a NaN on either side is the result."""
    a, c = args
    b = ctx.builder
    less = op.name == "np.minimum"
    pick_a = b.fcmp_ordered("<" if less else ">", a, c)
    out = b.select(pick_a, a, c)
    out = b.select(b.fcmp_unordered("uno", a, a), a, out)
    return out  # c NaN: the ordered compare failed, so out is already c


CMATH_FUNCTIONS = ("sqrt", "exp", "log", "log10", "sin", "cos")

COMPLEX_INTRINSICS = {
    "complex.real": lower_real,
    "complex.imag": lower_imag,
    "complex.build": lower_build,
    "complex.conj": lower_conj,
    "complex.abs": lower_abs,
    "cmath.phase": lower_phase,
    **{f"cmath.{f}": lower_cmath for f in CMATH_FUNCTIONS},
    "np.minimum": lower_np_minmax,
    "np.maximum": lower_np_minmax,
}
