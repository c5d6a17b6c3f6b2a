"""float16 negation, ``abs``, comparisons and int conversions.

A target may lower these to native half-precision instructions
(``Target.half``: name -> ``lower(ctx, ...)``; the CUDA target's are PTX's
``neg.f16``, ``abs.f16``, ``setp.*.f16`` and ``cvt.*.f16``, as numba emits them);
otherwise they are the plain LLVM operations on ``half``.

A float16 -> int conversion rounds to the nearest integer (ties to even) before it
converts, as numba's float16 casts do (PTX ``cvt.rni``), where other floats truncate.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import scalar_type
from cujit.types import Scalar, float32


def native(ctx: FunctionLowering, name: str):
    """The target's native lowering of float16 operation ``name``, or None."""
    return (ctx.target.half or {}).get(name)


def negate(ctx: FunctionLowering, x: ll.Value) -> ll.Value:
    lower = native(ctx, "neg")
    if lower is not None:
        return lower(ctx, x)
    # ``fsub -0.0, x``: fneg is newer than the LLVM 7 dialect of NVVM IR.
    return ctx.builder.fsub(ll.Constant(x.type, -0.0), x)


def absolute(ctx: FunctionLowering, t: Scalar, x: ll.Value) -> ll.Value | None:
    """``abs(x)`` natively, or None (the caller uses the math table's fabs)."""
    lower = native(ctx, "abs")
    return None if lower is None else lower(ctx, x)


def compare(ctx: FunctionLowering, cmp: str, a: ll.Value, b: ll.Value) -> ll.Value | None:
    """``a cmp b`` natively (ordered except ``!=``), or None for the generic fcmp."""
    lower = native(ctx, "compare")
    return None if lower is None else lower(ctx, cmp, a, b)


def to_int(ctx: FunctionLowering, dst: Scalar, x: ll.Value) -> ll.Value:
    lower = native(ctx, "to_int")
    if lower is not None:
        return lower(ctx, dst, x)
    b = ctx.builder
    wide = b.fpext(x, scalar_type(float32))  # exact: every half is a float
    # Round to nearest even by IEEE arithmetic alone: adding and taking away 2**23 (with
    # x's sign) leaves the float32 rounded to an integer, for |x| < 2**23 (every finite
    # half).  llvm.rint would do the same, but its host lowering went through the
    # process's libm and truncated on one machine.
    f32 = wide.type
    magic = b.select(
        b.fcmp_ordered("<", wide, ll.Constant(f32, 0.0)),
        ll.Constant(f32, -8388608.0),
        ll.Constant(f32, 8388608.0),
    )
    rounded = b.fsub(b.fadd(wide, magic), magic)
    to = scalar_type(dst)
    return b.fptosi(rounded, to) if dst.kind == "i" else b.fptoui(rounded, to)


def from_int(ctx: FunctionLowering, src: Scalar, x: ll.Value) -> ll.Value | None:
    """int -> float16 natively (round to nearest), or None for sitofp/uitofp."""
    lower = native(ctx, "from_int")
    return None if lower is None else lower(ctx, src, x)
