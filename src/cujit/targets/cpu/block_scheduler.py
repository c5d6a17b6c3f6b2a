"""The block scheduler: a block's threads as coroutines (kernels with ``syncthreads``).

Every thread of the block starts and runs to its first barrier; rounds then resume the
unfinished ones until none is left, and the coroutines are destroyed (their frames
freed).  A barrier needs no bookkeeping here: a round resumes every waiting thread
once, so all of them have reached the barrier before any passes it.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.lltypes import I1, I32, I64, VOID
from cujit.targets.cpu.intrinsics import I8P
from cujit.targets.cpu.irloop import declare, loop


def run_block(
    b: ll.IRBuilder, module: ll.Module, block: list[ll.Value], slots: tuple, left: ll.Value, call
) -> None:
    """Start each thread of the block, resume them round by round, destroy them."""
    handles, frames, slot_bytes, frame_bytes = slots
    zero = ll.Constant(I32, 0)
    bx, by = (b.zext(n, I64) for n in block[:2])

    def start(x, y, z):
        t = b.add(b.mul(b.add(b.mul(b.zext(z, I64), by), b.zext(y, I64)), bx), b.zext(x, I64))
        slot = b.gep(frames, [b.mul(t, slot_bytes)])
        call([x, y, z], [b.gep(handles, [t]), slot, slot_bytes, frame_bytes])

    loop(
        b,
        zero,
        block[2],
        "start.z",
        lambda z: loop(
            b,
            zero,
            block[1],
            "start.y",
            lambda y: loop(b, zero, block[0], "start.x", lambda x: start(x, y, z)),
        ),
    )

    nthreads = b.mul(b.mul(bx, by), b.zext(block[2], I64), name="nthreads")
    done = declare(module, "llvm.coro.done", I1, [I8P])
    resume = declare(module, "llvm.coro.resume", VOID, [I8P])
    destroy = declare(module, "llvm.coro.destroy", VOID, [I8P])
    fn = b.function
    pending = fn.append_basic_block("round")  # is any thread still suspended?
    b.branch(pending)
    b.position_at_end(pending)
    b.store(ll.Constant(I64, 0), left)

    def resume_one(t):
        h = b.load(b.gep(handles, [t]))
        with b.if_then(b.not_(b.call(done, [h]))):
            b.call(resume, [h])  # runs the thread to its next barrier or its end
            still = b.zext(b.not_(b.call(done, [h])), I64)
            b.store(b.add(b.load(left), still), left)

    loop(b, ll.Constant(I64, 0), nthreads, "resume", resume_one)
    again = b.icmp_unsigned("!=", b.load(left), ll.Constant(I64, 0))
    after = fn.append_basic_block("all_done")
    b.cbranch(again, pending, after)
    b.position_at_end(after)
    loop(
        b,
        ll.Constant(I64, 0),
        nthreads,
        "destroy",
        lambda t: b.call(destroy, [b.load(b.gep(handles, [t]))]),
    )
