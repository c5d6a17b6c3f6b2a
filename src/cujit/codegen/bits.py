"""Lowering of the bit and float intrinsics: ``cuda.popc``, ``brev``, ``clz``, ``ffs``,
``fma``, ``cbrt``, ``selp``.

They are LLVM's generic intrinsics, so every target shares them: the NVVM IR spec
lists them as supported and libNVVM turns each into one PTX instruction (PTX ISA,
"Integer Arithmetic Instructions": ``popc``, ``clz``, ``brev``, ``bfind``; widths
below 32 bits are widened), and the host's LLVM lowers them for the CPU target.

- ``popc(x)``  -> ``llvm.ctpop.iN`` (same type as ``x``);
- ``clz(x)``   -> ``llvm.ctlz.iN(x, false)`` (``clz(0)`` is the bit width);
- ``brev(x)``  -> ``llvm.bitreverse.i32/i64``;
- ``ffs(x)``   -> ``x == 0 ? 0 : cttz(x) + 1`` as uint32 (1-based, as CUDA's ``__ffs``);
- ``fma(a, b, c)`` -> ``llvm.fma.f16/f32/f64`` (PTX ``fma.rn``: one rounding);
- ``selp(test, a, b)`` -> ``select`` (PTX ``selp``: both values computed, no branch);
- ``cbrt(x)``  -> the target's math table (libdevice's ``__nv_cbrt``, the C
  library's ``cbrt``): ``builtins.COMMON_INTRINSICS`` maps it.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I1, I32, const_int


def lower_popc(ctx: FunctionLowering, op: ir.Intrinsic, args):
    return ctx.builder.ctpop(args[0])


def lower_clz(ctx: FunctionLowering, op: ir.Intrinsic, args):
    # is_zero_undef = false: clz(0) is defined as the width (PTX ``clz`` gives 32/64).
    return ctx.builder.ctlz(args[0], ll.Constant(I1, 0))


def lower_brev(ctx: FunctionLowering, op: ir.Intrinsic, args):
    return ctx.builder.bitreverse(args[0])


def lower_ffs(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """The 1-based position of the lowest set bit; 0 when no bit is set."""
    (x,) = args
    b = ctx.builder
    zero = const_int(x.type, 0)
    # is_zero_undef = true is safe: the select discards the x == 0 case.
    pos = b.add(b.cttz(x, ll.Constant(I1, 1)), const_int(x.type, 1))
    pos = b.select(b.icmp_unsigned("==", x, zero), zero, pos)
    if x.type.width > 32:
        return b.trunc(pos, I32)
    if x.type.width < 32:
        return b.zext(pos, I32)
    return pos


def lower_fma(ctx: FunctionLowering, op: ir.Intrinsic, args):
    return ctx.builder.fma(*args)


def lower_selp(ctx: FunctionLowering, op: ir.Intrinsic, args):
    return ctx.builder.select(*args)


BIT_INTRINSICS = {
    "cuda.popc": lower_popc,
    "cuda.clz": lower_clz,
    "cuda.brev": lower_brev,
    "cuda.ffs": lower_ffs,
    "cuda.fma": lower_fma,
    "cuda.selp": lower_selp,
}
