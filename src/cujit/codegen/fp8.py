"""fp8 in LLVM IR: a value is its byte; conversions are integer arithmetic on the float32
bits, the same on both targets (``cujit.types.fp8`` gives the formats).

Encoding rounds the float32 magnitude's bits at the format's last mantissa bit (to
nearest even; e8m0 toward zero or upward), shifting further for the format's
subnormals, then rebiases the exponent; a code past the largest finite one saturates
to it (SATFINITE) or becomes the format's infinity or NaN.  A float64 first narrows to
float32 by round-to-odd, so it is rounded once.  Decoding is exact.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen import bf16
from cujit.codegen.lltypes import F32, I32
from cujit.types import Scalar, float32, float64
from cujit.types.fp8 import FORMATS, Format, is_fp8

I8 = ll.IntType(8)


def _c(v: int) -> ll.Constant:
    return ll.Constant(I32, v)


def _select_max(b, x, y):
    return b.select(b.icmp_unsigned(">", x, y), x, y)


def _round_magnitude(b, fmt: Format, a: ll.Value, mode: str) -> ll.Value:
    """The code (no sign) of the float32 magnitude bits ``a`` (finite), unsaturated."""
    e_min = 127 - fmt.bias + 1  # float32 exponent field of the format's smallest normal
    raw_e = b.lshr(a, _c(23))
    e = _select_max(b, raw_e, _c(1))
    implicit = b.select(b.icmp_unsigned(">", raw_e, _c(0)), _c(0x800000), _c(0))
    m = b.or_(b.and_(a, _c(0x7FFFFF)), implicit)
    # below the format's normals the mantissa loses (e_min - e) more bits
    extra = b.select(b.icmp_unsigned("<", e, _c(e_min)), b.sub(_c(e_min), e), _c(0))
    sh = b.add(extra, _c(23 - fmt.mantissa))
    sh = b.select(b.icmp_unsigned(">", sh, _c(31)), _c(31), sh)
    low_mask = b.sub(b.shl(_c(1), sh), _c(1))
    kept = b.lshr(m, sh)
    if mode == "rn":  # up past the halfway point, or at it when the kept part is odd
        below_half = b.lshr(low_mask, _c(1))  # halfway - 1
        even = b.and_(b.not_(kept), _c(1))
        up = b.icmp_unsigned(">", b.and_(m, low_mask), b.add(below_half, even))
    elif mode == "rp":
        up = b.icmp_unsigned("!=", b.and_(m, low_mask), _c(0))
    else:  # rz
        up = ll.Constant(ll.IntType(1), 0)
    kept = b.add(kept, b.zext(up, I32))
    # the exponent field: (e - e_min + 1) for normals, 0 for subnormals; a carry out of
    # the mantissa moves into it, as in the code's bit layout
    field = b.select(b.icmp_unsigned("<", e, _c(e_min)), _c(0), b.sub(e, _c(e_min - 1)))
    base = b.shl(field, _c(fmt.mantissa))
    mant = b.sub(kept, b.select(b.icmp_unsigned("<", e, _c(e_min)), _c(0), _c(1 << fmt.mantissa)))
    return b.add(base, mant)


def encode(ctx, fmt: Format, x: ll.Value, sat: bool, mode: str = "rn") -> ll.Value:
    """The fp8 code of float32 ``x``: ``sat`` saturates overflow (SATFINITE)."""
    b = ctx.builder
    bits = b.bitcast(x, I32)
    a = b.and_(bits, _c(0x7FFFFFFF))
    is_nan = b.icmp_unsigned(">", a, _c(0x7F800000))
    finite_a = b.select(b.icmp_unsigned("<", a, _c(0x7F800000)), a, _c(0x7F7FFFFF))
    code = _round_magnitude(b, fmt, finite_a, mode)
    over = b.or_(
        b.icmp_unsigned(">", code, _c(fmt.max_finite)), b.icmp_unsigned("==", a, _c(0x7F800000))
    )
    if sat:
        too_big = _c(fmt.max_finite)
    else:
        too_big = _c(fmt.infinity if fmt.infinity is not None else fmt.nan)
    code = b.select(over, too_big, code)
    if fmt.exponent < 8:  # signed formats keep the sign (e8m0 has none)
        code = b.or_(code, b.and_(b.lshr(bits, _c(24)), _c(0x80)))
    code = b.select(is_nan, _c(fmt.nan), code)
    return b.trunc(code, I8)


def decode(ctx, fmt: Format, code: ll.Value) -> ll.Value:
    """The float32 value of fp8 ``code`` (exact)."""
    b = ctx.builder
    c = b.zext(code, I32)
    if fmt.exponent == 8:  # e8m0: 2**(c - 127); 0 is 2**-127 (a float32 subnormal)
        bits = b.select(b.icmp_unsigned("==", c, _c(0)), _c(0x00400000), b.shl(c, _c(23)))
        bits = b.select(b.icmp_unsigned("==", c, _c(0xFF)), _c(0x7FC00000), bits)
        return b.bitcast(bits, F32)
    sign = b.shl(b.and_(c, _c(0x80)), _c(24))
    e = b.and_(b.lshr(c, _c(fmt.mantissa)), _c((1 << fmt.exponent) - 1))
    m = b.and_(c, _c((1 << fmt.mantissa) - 1))
    normal = b.or_(b.shl(b.add(e, _c(127 - fmt.bias)), _c(23)), b.shl(m, _c(23 - fmt.mantissa)))
    scale = ll.Constant(F32, 2.0 ** (1 - fmt.bias - fmt.mantissa))
    sub = b.bitcast(b.fmul(b.uitofp(m, F32), scale), I32)
    bits = b.select(b.icmp_unsigned("==", e, _c(0)), sub, normal)
    if fmt.infinity is not None:  # the top exponent: infinity (m == 0) or NaN
        special = b.select(b.icmp_unsigned("==", m, _c(0)), _c(0x7F800000), _c(0x7FC00000))
        bits = b.select(b.icmp_unsigned("==", e, _c((1 << fmt.exponent) - 1)), special, bits)
    else:
        bits = b.select(
            b.icmp_unsigned("==", b.and_(c, _c(0x7F)), _c(fmt.nan)), _c(0x7FC00000), bits
        )
    return b.bitcast(b.or_(bits, sign), F32)


def _to_f32(ctx, src: Scalar, x: ll.Value, scalar_cast) -> ll.Value:
    """Any number as float32 for encoding; a float64 (or an integer) by round-to-odd."""
    if src.kind == "f" and src.bits <= 32:
        if bf16.involves(src):
            return bf16.to_f32(ctx.builder, x)
        return scalar_cast(ctx, src, float32, x) if src.bits < 32 else x
    wide = x if src == float64 else scalar_cast(ctx, src, float64, x)
    return bf16.f64_to_f32_odd(ctx, wide)


def cast(ctx, src: Scalar, dst: Scalar, x: ll.Value, scalar_cast) -> ll.Value:
    """``x`` converted from ``src`` to ``dst``, one of them fp8 (CUDA's constructors and
    conversion operators)."""
    if src == dst:
        return x
    if is_fp8(src):
        wide = decode(ctx, FORMATS[src.name], x)
        return scalar_cast(ctx, float32, dst, wide)
    wide = _to_f32(ctx, src, x, scalar_cast)
    if is_fp8(dst) and dst.name == "fp8_e8m0":
        return encode(ctx, dst.format, wide, sat=True, mode="rp")
    return encode(ctx, dst.format, wide, sat=True)


def involves(*types) -> bool:
    return any(is_fp8(t) for t in types)


# -- the ``fp8.*`` intrinsics (rows in ``cujit.ir.intrinsics``), the same on both targets


def _lower_encode(ctx, op, args):
    """``fp8.encode``: float32 or float64 -> the code (uint8) by attributes format, sat,
    mode."""
    fmt = FORMATS[op.attr("format")]
    x = args[0]
    if x.type == ll.DoubleType():  # rounded once: float32 by round-to-odd first
        x = bf16.f64_to_f32_odd(ctx, x)
    return encode(ctx, fmt, x, bool(op.attr("sat")), op.attr("mode"))


def _lower_e8m0_to_bf16_bits(ctx, op, args):
    """CUDA's ``__nv_cvt_e8m0_to_bf16raw``: the code shifted into bfloat16's exponent;
    0 is 2**-127 (0x0040), 0xFF the NaN 0x7FFF."""
    b = ctx.builder
    i16 = ll.IntType(16)
    c = b.zext(args[0], i16)
    bits = b.shl(c, ll.Constant(i16, 7))
    bits = b.select(b.icmp_unsigned("==", c, ll.Constant(i16, 0)), ll.Constant(i16, 0x40), bits)
    return b.select(
        b.icmp_unsigned("==", c, ll.Constant(i16, 0xFF)), ll.Constant(i16, 0x7FFF), bits
    )


FP8_INTRINSICS = {
    "fp8.encode": _lower_encode,
    "fp8.e8m0_to_bf16_bits": _lower_e8m0_to_bf16_bits,
}
