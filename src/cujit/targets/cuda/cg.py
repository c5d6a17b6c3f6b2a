"""``cuda.cg.this_grid().sync()`` on the GPU: the grid-wide barrier.

Why this implementation.  numba links NVIDIA's device runtime (``libcudadevrt.a``)
and calls its ``cudaCGGetIntrinsicHandle``/``cudaCGSynchronize``.  That library
ships with the CUDA toolkit, not with the pip wheels cujit compiles with (libNVVM,
nvJitLink); ``cuda.pathfinder`` cannot even locate it (NVIDIA/cuda-python#716).  So
cujit does what the cooperative-groups headers of CUDA 12/13 (and CCCL) do inline,
needing nothing beyond the driver:

- a cooperative launch (``cuLaunchCooperativeKernel``, which the runtime uses for
  every kernel that has this barrier) gives the grid a driver-allocated workspace in
  global memory whose address sits in the special registers ``%envreg1`` (high 32
  bits) and ``%envreg2`` (low 32 bits) (PTX ISA, "Special Registers: %envreg<32>": set
  by the driver).  Its layout is two u32: the workspace size, then the barrier word.
  Outside a cooperative launch the address is 0; the barrier then traps rather than
  write through a null pointer;
- the barrier word counts arrivals, one per block.  Block (0, 0, 0) adds
  ``0x80000000 - (nblocks - 1)`` and every other block adds 1, so one barrier's
  arrivals add exactly ``0x80000000``: the top bit flips once, when the last block
  arrives, whatever the order, and the low bits come back to where they were for the
  next barrier.  Each block waits until the top bit differs from the value its own
  ``atomic add`` returned.

Per block::

    bar.sync 0                             every thread of the block has arrived
    thread (0,0,0): membar.gl              the block's writes before the barrier ...
                    old = atom.add [bar], n   ... are visible before it counts
                    spin: ld.relaxed [bar] until its top bit != old's
                    membar.gl              later reads see the other blocks' writes
    bar.sync 0                             the block's other threads wait for thread 0

Only one thread per block touches global memory; the others wait at ``bar.sync``.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I32, I64, VOID, i64

_FLIP = 0x80000000  # the barrier word's top bit
_BARRIER_OFFSET = 4  # bytes: the barrier word follows the u32 workspace size


def _sreg(ctx: FunctionLowering, name: str) -> ll.Value:
    f = ctx.declare(f"llvm.nvvm.read.ptx.sreg.{name}", I32, [], attrs=("nounwind", "readnone"))
    return ctx.builder.call(f, [])


def _any_nonzero(ctx: FunctionLowering, reg: str) -> ll.Value:
    """``reg.x | reg.y | reg.z != 0``: not the first thread / block on every axis."""
    b = ctx.builder
    bits = b.or_(b.or_(_sreg(ctx, f"{reg}.x"), _sreg(ctx, f"{reg}.y")), _sreg(ctx, f"{reg}.z"))
    return b.icmp_unsigned("!=", bits, ll.Constant(I32, 0))


def _envreg(ctx: FunctionLowering, k: int) -> ll.Value:
    # NVVM has no intrinsic for %envreg<k>; inline PTX reads it (as %dynamic_smem_size).
    asm = ll.InlineAsm(
        ll.FunctionType(I32, []), f"mov.u32 $0, %envreg{k};", "=r", side_effect=False
    )
    return ctx.builder.zext(ctx.builder.call(asm, []), I64)


def _barrier_word(ctx: FunctionLowering) -> ll.Value:
    """``i32 addrspace(1)*`` to the workspace's barrier word; traps if there is none."""
    b = ctx.builder
    base = b.or_(b.shl(_envreg(ctx, 1), i64(32)), _envreg(ctx, 2))
    with b.if_then(b.icmp_unsigned("==", base, i64(0)), likely=False):
        b.call(ctx.declare("llvm.trap", VOID, [], attrs=("noreturn", "nounwind")), [])
    addr = b.add(base, i64(_BARRIER_OFFSET))
    return b.inttoptr(addr, ll.PointerType(I32, ctx.target.global_addrspace))


def lower_grid_sync(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    barrier = ctx.declare("llvm.nvvm.barrier0", VOID, [], attrs=("nounwind", "convergent"))
    fence = ctx.declare("llvm.nvvm.membar.gl", VOID, [], attrs=("nounwind",))
    b.call(barrier, [])
    with b.if_then(b.not_(_any_nonzero(ctx, "tid"))):
        word = _barrier_word(ctx)
        nblocks = b.mul(
            b.mul(_sreg(ctx, "nctaid.x"), _sreg(ctx, "nctaid.y")), _sreg(ctx, "nctaid.z")
        )
        first = ll.Constant(I32, _FLIP + 1)  # 0x80000000 - (nblocks - 1), mod 2**32
        arrival = b.select(_any_nonzero(ctx, "ctaid"), ll.Constant(I32, 1), b.sub(first, nblocks))
        b.call(fence, [])
        old = b.atomic_rmw("add", word, arrival, "monotonic")
        spin = ctx.llfn.append_basic_block(ctx.unique_name("grid_sync.spin"))
        done = ctx.llfn.append_basic_block(ctx.unique_name("grid_sync.open"))
        b.branch(spin)
        b.position_at_end(spin)
        now = b.load_atomic(word, "monotonic", align=4)  # reread every turn, never hoisted
        flipped = b.and_(b.xor(old, now), ll.Constant(I32, _FLIP))
        b.cbranch(b.icmp_unsigned("!=", flipped, ll.Constant(I32, 0)), done, spin)
        b.position_at_end(done)
        b.call(fence, [])
    b.call(barrier, [])
