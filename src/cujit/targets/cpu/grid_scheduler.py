"""The grid scheduler: every thread of the grid as a coroutine (kernels that sync the grid).

One call runs the whole grid, each block with its own slice of the worker's shared
buffers (``block_stride`` bytes apart).  Rounds resume the threads that are neither
finished nor parked at the grid barrier; when a round leaves none runnable, the parked
ones (the whole grid has arrived) are released together.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.lltypes import I1, I8, I32, I64, VOID
from cujit.targets.cpu.intrinsics import I8P
from cujit.targets.cpu.irloop import block_index, declare, loop
from cujit.targets.cpu.runner_abi import BLOCK_ALIGN, block_stride


def run_grid(
    b: ll.IRBuilder,
    module: ll.Module,
    kernel: ll.Function,
    params,
    grid,
    block,
    dynbytes,
    nblocks,
    buffers,
    slots,
    parked,
) -> None:
    """Every thread of the grid as a coroutine under one scheduler (grid sync)."""
    shared, dynshared, static_shared = buffers
    handles, frames, slot_bytes, frame_bytes = slots
    zero = ll.Constant(I32, 0)
    i64_0, i64_1 = ll.Constant(I64, 0), ll.Constant(I64, 1)
    bx, by = (b.zext(n, I64) for n in block[:2])
    nthreads = b.mul(b.mul(bx, by), b.zext(block[2], I64), name="nthreads")
    total = b.mul(nblocks, nthreads, name="grid_threads")
    mask = ll.Constant(I64, -BLOCK_ALIGN)
    dyn_stride = b.and_(b.add(dynbytes, ll.Constant(I64, BLOCK_ALIGN - 1)), mask)
    runnable = b.alloca(I64, name="runnable")
    waiting = b.alloca(I64, name="waiting")

    def start_block(linear: ll.Value) -> None:
        ctaid = block_index(b, linear, grid)
        own = [
            b.gep(shared, [b.mul(linear, ll.Constant(I64, block_stride(static_shared)))]),
            b.gep(dynshared, [b.mul(linear, dyn_stride)]),
        ]
        first = b.mul(linear, nthreads)

        def start(x, y, z):
            local = b.add(
                b.mul(b.add(b.mul(b.zext(z, I64), by), b.zext(y, I64)), bx), b.zext(x, I64)
            )
            t = b.add(first, local)
            extra = [
                b.gep(handles, [t]),
                b.gep(frames, [b.mul(t, slot_bytes)]),
                slot_bytes,
                frame_bytes,
                b.gep(parked, [t]),
            ]
            b.call(kernel, [*own, dynbytes, x, y, z, *ctaid, *block, *grid, *extra] + params)

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

    loop(b, i64_0, nblocks, "start.block", start_block)

    done = declare(module, "llvm.coro.done", I1, [I8P])
    resume = declare(module, "llvm.coro.resume", VOID, [I8P])
    destroy = declare(module, "llvm.coro.destroy", VOID, [I8P])
    fn = b.function
    one_round = fn.append_basic_block("grid.round")
    b.branch(one_round)
    b.position_at_end(one_round)
    b.store(i64_0, runnable)
    b.store(i64_0, waiting)

    def resume_one(t):
        h = b.load(b.gep(handles, [t]))
        flag = b.gep(parked, [t])
        with b.if_then(b.not_(b.call(done, [h]))):
            with b.if_then(b.icmp_unsigned("==", b.load(flag), ll.Constant(I8, 0))):
                b.call(resume, [h])  # to its next barrier (block or grid) or its end
            with b.if_then(b.not_(b.call(done, [h]))):
                count = b.select(
                    b.icmp_unsigned("!=", b.load(flag), ll.Constant(I8, 0)), waiting, runnable
                )
                b.store(b.add(b.load(count), i64_1), count)

    loop(b, i64_0, total, "grid.resume", resume_one)
    release = fn.append_basic_block("grid.release")
    settled = fn.append_basic_block("grid.settled")
    finished = fn.append_basic_block("grid.finished")
    b.cbranch(b.icmp_unsigned("!=", b.load(runnable), i64_0), one_round, settled)
    b.position_at_end(settled)  # nothing can run: all done, or all arrived at the barrier
    b.cbranch(b.icmp_unsigned("!=", b.load(waiting), i64_0), release, finished)
    b.position_at_end(release)
    loop(b, i64_0, total, "grid.unpark", lambda t: b.store(ll.Constant(I8, 0), b.gep(parked, [t])))
    b.branch(one_round)
    b.position_at_end(finished)
    loop(b, i64_0, total, "grid.destroy", lambda t: b.call(destroy, [b.load(b.gep(handles, [t]))]))
