"""Lowering of the warp-level intrinsics: shuffles, votes, matches, lane masks, syncwarp.

Every one is a ``convergent`` call of an NVVM intrinsic (upstream LLVM's NVPTX
names, which libNVVM accepts; PTX ISA sections "shfl.sync", "vote.sync",
"match.sync", "bar.warp.sync", "activemask"):

- ``cuda.shfl_*_sync`` -> ``llvm.nvvm.shfl.sync.{idx,up,down,bfly}.i32(mask, a, b, c)``.
  ``c`` packs the clamp lane and the segment mask (PTX ISA, "shfl.sync":
  ``c = ((32 - width) << 8) | clamp``); for a whole warp it is 31 for idx, down
  and bfly, and 0 for up.  Floats move as their bits; 64-bit values move as two
  32-bit halves shuffled with the same lane operand.
- ``cuda.all_sync/any_sync/eq_sync`` -> ``llvm.nvvm.vote.{all,any,uni}.sync`` (i1),
  ``cuda.ballot_sync`` -> ``llvm.nvvm.vote.ballot.sync`` (i32).
- ``cuda.match_any_sync`` -> ``llvm.nvvm.match.any.sync.i32/i64`` (i32);
  ``cuda.match_all_sync`` -> ``llvm.nvvm.match.all.sync.i32p/i64p``, whose
  ``{i32, i1}`` result is the ``Tuple(int32, bool)`` value itself (sm_70+).
- ``cuda.activemask`` -> PTX ``activemask.b32`` (inline asm: no NVVM intrinsic);
  ``cuda.lanemask_lt`` -> ``llvm.nvvm.read.ptx.sreg.lanemask.lt``.
- ``cuda.syncwarp`` -> ``llvm.nvvm.bar.warp.sync(mask)``.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I1, I32, I64, VOID, const_int
from cujit.types import Scalar

_CONVERGENT = ("nounwind", "convergent")

# cuda.<name> -> (shfl.sync mode, the ``c`` operand for a full 32-lane warp)
_SHUFFLE_MODES = {
    "cuda.shfl_sync": ("idx", 0x1F),
    "cuda.shfl_up_sync": ("up", 0),
    "cuda.shfl_down_sync": ("down", 0x1F),
    "cuda.shfl_xor_sync": ("bfly", 0x1F),
}
_VOTE_MODES = {"cuda.all_sync": "all", "cuda.any_sync": "any", "cuda.eq_sync": "uni"}


def _shfl32(ctx: FunctionLowering, mode: str, c: int, mask, a, lane) -> ll.Value:
    f = ctx.declare(f"llvm.nvvm.shfl.sync.{mode}.i32", I32, [I32, I32, I32, I32], attrs=_CONVERGENT)
    return ctx.builder.call(f, [mask, a, lane, const_int(I32, c)])


def lower_shuffle(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``shfl_*_sync(mask, value, lane)``: 32-bit values in one shuffle, 64-bit in two."""
    mask, value, lane = args
    mode, c = _SHUFFLE_MODES[op.name]
    t: Scalar = op.result.type
    b = ctx.builder
    bits = b.bitcast(value, ll.IntType(t.bits)) if t.kind == "f" else value
    if t.bits == 32:
        out = _shfl32(ctx, mode, c, mask, bits, lane)
    else:
        lo = _shfl32(ctx, mode, c, mask, b.trunc(bits, I32), lane)
        hi = _shfl32(ctx, mode, c, mask, b.trunc(b.lshr(bits, const_int(I64, 32)), I32), lane)
        out = b.or_(b.shl(b.zext(hi, I64), const_int(I64, 32)), b.zext(lo, I64))
    return b.bitcast(out, value.type) if t.kind == "f" else out


def lower_vote(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``all_sync``/``any_sync``/``eq_sync`` -> bool; ``ballot_sync`` -> the lane bits."""
    mask, pred = args
    if op.name == "cuda.ballot_sync":
        f = ctx.declare("llvm.nvvm.vote.ballot.sync", I32, [I32, I1], attrs=_CONVERGENT)
    else:
        f = ctx.declare(
            f"llvm.nvvm.vote.{_VOTE_MODES[op.name]}.sync", I1, [I32, I1], attrs=_CONVERGENT
        )
    return ctx.builder.call(f, [mask, pred])


def lower_match(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``match_any_sync`` -> i32 mask; ``match_all_sync`` -> ``{i32 mask, i1 all-equal}``."""
    mask, value = args
    width = op.args[1].type.bits
    ity = ll.IntType(width)
    if op.args[1].type.kind == "f":
        value = ctx.builder.bitcast(value, ity)
    if op.name == "cuda.match_any_sync":
        f = ctx.declare(f"llvm.nvvm.match.any.sync.i{width}", I32, [I32, ity], attrs=_CONVERGENT)
    else:
        f = ctx.declare(
            f"llvm.nvvm.match.all.sync.i{width}p",
            ll.LiteralStructType([I32, I1]),
            [I32, ity],
            attrs=_CONVERGENT,
        )
    return ctx.builder.call(f, [mask, value])


def lower_activemask(ctx: FunctionLowering, op: ir.Intrinsic, args):
    # side_effect: the answer depends on where the call runs, so it must not be
    # merged with or hoisted past other code.
    asm = ll.InlineAsm(ll.FunctionType(I32, []), "activemask.b32 $0;", "=r", side_effect=True)
    return ctx.builder.call(asm, [])


def lower_lanemask_lt(ctx: FunctionLowering, op: ir.Intrinsic, args):
    f = ctx.declare("llvm.nvvm.read.ptx.sreg.lanemask.lt", I32, [], attrs=("nounwind", "readnone"))
    return ctx.builder.call(f, [])


def lower_syncwarp(ctx: FunctionLowering, op: ir.Intrinsic, args):
    f = ctx.declare("llvm.nvvm.bar.warp.sync", VOID, [I32], attrs=_CONVERGENT)
    ctx.builder.call(f, [args[0]])


WARP_INTRINSICS = {
    **{name: lower_shuffle for name in _SHUFFLE_MODES},
    **{name: lower_vote for name in (*_VOTE_MODES, "cuda.ballot_sync")},
    "cuda.match_any_sync": lower_match,
    "cuda.match_all_sync": lower_match,
    "cuda.activemask": lower_activemask,
    "cuda.lanemask_lt": lower_lanemask_lt,
    "cuda.syncwarp": lower_syncwarp,
}
