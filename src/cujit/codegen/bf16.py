"""bfloat16 in LLVM IR: a value is its 16 bits (``i16``), as libNVVM takes no ``bfloat``.

Widening to float32 is exact (the bits become float32's upper half); narrowing rounds
the float32 bit pattern with integer arithmetic (nearest-even by default, or toward
zero, +inf, -inf), so both targets give the same bits.  A float64 (or an integer, via
float64) first narrows to float32 rounding to odd, which makes the second rounding
to bfloat16 the correct one.  Arithmetic computes in float32 and rounds once
(``cujit.types.bf16`` says why that is exact for ``+ - * /``); on the CUDA target
``+ - *`` use the sm_90 instructions (``add.bf16``...) where the architecture
that libNVVM compiles for has them (``__nvvm_reflect("__CUDA_ARCH")``).
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.lltypes import F32, F64, I32
from cujit.types import Scalar, float32, float64
from cujit.types.bf16 import QUIET_NAN_BITS, is_bfloat16

I16 = ll.IntType(16)

# No rounding modifier, as CUDA's __hadd/__hsub/__hmul (ptxas may fuse a mul and an add
# into one fma); the ``h*_rn`` functions compute in float32 instead (infer/bf16_calls.py).
_NATIVE = {"+": "add.bf16", "-": "sub.bf16", "*": "mul.bf16"}
_NATIVE_ARCH = 900  # __CUDA_ARCH of the first architecture with add/sub/mul.bf16


def involves(*types) -> bool:
    """Whether any of ``types`` is bfloat16 (its ops are lowered here)."""
    return any(is_bfloat16(t) for t in types)


def to_f32(b: ll.IRBuilder, x: ll.Value) -> ll.Value:
    """The float32 of bfloat16 bits ``x`` (exact)."""
    wide = b.shl(b.zext(x, I32), ll.Constant(I32, 16))
    return b.bitcast(wide, F32)


def from_f32(b: ll.IRBuilder, x: ll.Value, mode: str = "rn") -> ll.Value:
    """The bfloat16 bits of float32 ``x``, rounded by ``mode`` ('rn', 'rz', 'ru', 'rd');
    a NaN becomes the quiet NaN of its sign."""
    bits = b.bitcast(x, I32)
    c = lambda v: ll.Constant(I32, v)  # noqa: E731
    if mode == "rn":  # add half an ulp, less one unless the kept part is odd: ties to even
        odd = b.and_(b.lshr(bits, c(16)), c(1))
        bits = b.add(bits, b.add(odd, c(0x7FFF)))
    elif mode in ("ru", "rd"):  # away from zero when the sign matches the direction
        negative = b.icmp_signed("<", bits, c(0))
        away = b.not_(negative) if mode == "ru" else negative
        bits = b.add(bits, b.select(away, c(0xFFFF), c(0)))
    rounded = b.trunc(b.lshr(bits, c(16)), I16)
    sign = b.trunc(b.and_(b.lshr(b.bitcast(x, I32), c(16)), c(0x8000)), I16)
    nan = b.or_(sign, ll.Constant(I16, QUIET_NAN_BITS))
    return b.select(b.fcmp_unordered("uno", x, x), nan, rounded)


def f64_to_f32_odd(ctx, x: ll.Value) -> ll.Value:
    """float64 ``x`` narrowed to float32 rounding to odd: an inexact result is the
    float32 toward zero with its last bit set (what later roundings need to be exact)."""
    b = ctx.builder
    near = b.fptrunc(x, F32)
    back = b.fpext(near, F64)
    fabs = ctx.module.declare_intrinsic("llvm.fabs", [F64])
    past = b.fcmp_ordered(">", b.call(fabs, [back]), b.call(fabs, [x]))
    bits = b.sub(b.bitcast(near, I32), b.zext(past, I32))  # one ulp back toward zero
    inexact = b.fcmp_ordered("!=", back, x)
    odd = b.select(inexact, b.or_(bits, ll.Constant(I32, 1)), bits)
    return b.bitcast(odd, F32)


def narrow(ctx, src: Scalar, x: ll.Value, cast, mode: str = "rn") -> ll.Value:
    """The bfloat16 bits of ``x`` of type ``src``; ``cast`` is codegen's scalar cast."""
    b = ctx.builder
    if src.kind == "f" and src.bits <= 32:  # float16 widens to float32 exactly
        return from_f32(b, cast(ctx, src, float32, x) if src.bits < 32 else x, mode)
    wide = x if src == float64 else cast(ctx, src, float64, x)
    return from_f32(b, f64_to_f32_odd(ctx, wide), mode)


def cast(ctx, src: Scalar, dst: Scalar, x: ll.Value, scalar_cast) -> ll.Value:
    """``x`` converted from ``src`` to ``dst``, one of them bfloat16."""
    if is_bfloat16(src) and is_bfloat16(dst):
        return x
    if is_bfloat16(src):
        return scalar_cast(ctx, float32, dst, to_f32(ctx.builder, x))
    return narrow(ctx, src, x, scalar_cast)


def constant(value) -> ll.Constant:
    from cujit.types.bf16 import to_bits

    return ll.Constant(I16, to_bits(float(value)))


def _arch_at_least(ctx, arch: int) -> ll.Value:
    """An i1 that libNVVM folds: does the architecture compiled for reach ``arch``?"""
    module = ctx.module
    name = ".cujit.reflect.cuda_arch"
    text = bytearray(b"__CUDA_ARCH\0")
    gv = module.globals.get(name)
    if gv is None:
        gv = ll.GlobalVariable(module, ll.ArrayType(ll.IntType(8), len(text)), name, addrspace=1)
        gv.initializer = ll.Constant(gv.type.pointee, text)
        gv.global_constant = True
        gv.linkage = "private"
    i8p = ll.PointerType(ll.IntType(8))
    reflect = ctx.declare("__nvvm_reflect", I32, [i8p])
    b = ctx.builder
    p = b.addrspacecast(b.gep(gv, [ll.Constant(I32, 0), ll.Constant(I32, 0)]), i8p)
    return b.icmp_signed(">=", b.call(reflect, [p]), ll.Constant(I32, arch))


def _emulated(ctx, op: str, a: ll.Value, bv: ll.Value) -> ll.Value:
    b = ctx.builder
    method = {"+": b.fadd, "-": b.fsub, "*": b.fmul, "/": b.fdiv}[op]
    return from_f32(b, method(to_f32(b, a), to_f32(b, bv)))


def binop(ctx, op: str, a: ll.Value, bv: ll.Value) -> ll.Value:
    """bfloat16 ``a op b`` for ``+ - * /``, rounded to nearest even."""
    if op not in _NATIVE or ctx.target.name != "cuda":
        return _emulated(ctx, op, a, bv)
    b = ctx.builder
    native_block = ctx.llfn.append_basic_block("bf16.native")
    other_block = ctx.llfn.append_basic_block("bf16.emulated")
    join = ctx.llfn.append_basic_block("bf16.join")
    b.cbranch(_arch_at_least(ctx, _NATIVE_ARCH), native_block, other_block)
    b.position_at_end(native_block)
    asm = ll.InlineAsm(ll.FunctionType(I16, [I16, I16]), f"{_NATIVE[op]} $0, $1, $2;", "=h,h,h")
    native = b.call(asm, [a, bv])
    b.branch(join)
    b.position_at_end(other_block)
    emulated = _emulated(ctx, op, a, bv)
    emulated_end = b.block
    b.branch(join)
    b.position_at_end(join)
    phi = b.phi(I16)
    phi.add_incoming(native, native_block)
    phi.add_incoming(emulated, emulated_end)
    return phi


def negate(b: ll.IRBuilder, x: ll.Value) -> ll.Value:
    """``-x``: the sign bit flipped (exact, NaN too, as ``neg.bf16``)."""
    return b.xor(x, ll.Constant(I16, 0x8000))


def widen_both(ctx, a: ll.Value, bv: ll.Value) -> tuple[ll.Value, ll.Value]:
    """Both operands as float32 (for comparisons)."""
    return to_f32(ctx.builder, a), to_f32(ctx.builder, bv)


# -- the ``bf16.*`` intrinsics (rows in ``cujit.ir.intrinsics``), the same on both targets


def _lower_same_bits(ctx, op, args):  # bf16.bits, bf16.from_bits: both are an i16
    return args[0]


def _lower_from_f32(mode: str):
    def lower(ctx, op, args):
        return from_f32(ctx.builder, args[0], mode)

    return lower


def _lower_from_f64(mode: str):
    def lower(ctx, op, args):
        return from_f32(ctx.builder, f64_to_f32_odd(ctx, args[0]), mode)

    return lower


def _lower_nan_minmax(greater: bool):
    """``bf16.max_nan``/``min_nan``: a NaN operand gives the quiet NaN."""

    def lower(ctx, op, args):
        b = ctx.builder
        x, y = widen_both(ctx, *args)
        pick_x = b.fcmp_ordered(">" if greater else "<", x, y)
        chosen = b.select(pick_x, args[0], args[1])
        nan = b.fcmp_unordered("uno", x, y)
        return b.select(nan, ll.Constant(I16, QUIET_NAN_BITS), chosen)

    return lower


MODES = ("rn", "rz", "ru", "rd")

BF16_INTRINSICS = {
    "bf16.bits": _lower_same_bits,
    "bf16.from_bits": _lower_same_bits,
    **{f"bf16.from_f32.{m}": _lower_from_f32(m) for m in MODES if m != "rn"},
    **{f"bf16.from_f64.{m}": _lower_from_f64(m) for m in MODES},
    "bf16.max_nan": _lower_nan_minmax(True),
    "bf16.min_nan": _lower_nan_minmax(False),
}
