"""The warp scheduler: kernels with warp functions or block votes (``warp.py``).

Each thread records its state (runnable, exited, at a block barrier, in a warp
function, in ``activemask``, at the grid barrier) in the block's exchange buffer;
rounds resume the runnable threads, then ``warp_settle`` releases the warp groups that
are complete, else the block barrier once every live thread is at it.  A block that
can release nothing while some thread still waits is recorded in the worker's
``stuck`` field and the launch raises; with a grid sync, the whole grid runs under one
such scheduler and is released when every live thread waits at the grid barrier.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.lltypes import I1, I8, I32, I64, VOID
from cujit.targets.cpu.intrinsics import I8P
from cujit.targets.cpu.irloop import block_index, declare, loop
from cujit.targets.cpu.runner_abi import BLOCK_ALIGN, WORKER_STUCK, WORKER_XCHG, block_stride
from cujit.targets.cpu.warp_settle import (
    SETTLE_AT_GRID,
    SETTLE_FINISHED,
    SETTLE_RELEASED,
    SETTLE_STUCK,
    settle_function,
)


def exchange_fields(b: ll.IRBuilder, worker: ll.Value) -> tuple[list[ll.Value], ll.Value]:
    """The worker's exchange buffers, typed (state, mask, val, snap, result), and where a
    block that cannot make progress is recorded."""
    zero = ll.Constant(I32, 0)
    types = (
        I8P,
        ll.PointerType(I32),
        ll.PointerType(I64),
        ll.PointerType(I64),
        ll.PointerType(I32),
    )
    out = []
    slots = ("state", "mask", "val", "snap", "result")
    for k, (ty, nm) in enumerate(zip(types, slots, strict=True)):
        raw = b.load(b.gep(worker, [zero, ll.Constant(I32, WORKER_XCHG + k)], inbounds=True))
        out.append(b.bitcast(raw, ty, name=f"xchg.{nm}"))
    stuck = b.gep(worker, [zero, ll.Constant(I32, WORKER_STUCK)], inbounds=True)
    return out, stuck


def _set_state(b: ll.IRBuilder, state: ll.Value, t: ll.Value, value: int) -> None:
    from cujit.targets.cpu import warp  # noqa: F401  (the codes)

    b.store(ll.Constant(I8, value), b.gep(state, [t], inbounds=True))


def _resume_runnable(
    b: ll.IRBuilder, module: ll.Module, handle: ll.Value, state: ll.Value, t: ll.Value
) -> None:
    """Resume the thread whose coroutine is ``handle`` if its state is RUN; mark it DONE
    when it has finished."""
    from cujit.targets.cpu import warp

    done = declare(module, "llvm.coro.done", I1, [I8P])
    resume = declare(module, "llvm.coro.resume", VOID, [I8P])
    slot = b.gep(state, [t], inbounds=True)
    with b.if_then(b.icmp_unsigned("==", b.load(slot), ll.Constant(I8, warp.RUN))):
        b.call(resume, [handle])
        with b.if_then(b.call(done, [handle])):
            b.store(ll.Constant(I8, warp.DONE), slot)


def _started(
    b: ll.IRBuilder, module: ll.Module, handle: ll.Value, state: ll.Value, t: ll.Value
) -> None:
    from cujit.targets.cpu import warp

    done = declare(module, "llvm.coro.done", I1, [I8P])
    with b.if_then(b.call(done, [handle])):
        b.store(ll.Constant(I8, warp.DONE), b.gep(state, [t], inbounds=True))


def run_warp_block(
    b: ll.IRBuilder,
    module: ll.Module,
    block: list[ll.Value],
    slots: tuple,
    xchg: list[ll.Value],
    stuck: ll.Value,
    linear: ll.Value,
    call,
) -> None:
    """One block under the warp scheduler: start every thread, then settle and resume
    round after round; a block that cannot make progress is recorded in ``stuck``
    (1 + its linear number) and ends the worker's run."""
    from cujit.targets.cpu import warp

    handles, frames, slot_bytes, frame_bytes = slots
    state, mask, val, snap, result = xchg
    zero = ll.Constant(I32, 0)
    i64_0 = ll.Constant(I64, 0)
    bx, by = (b.zext(n, I64) for n in block[:2])
    nthreads = b.mul(b.mul(bx, by), b.zext(block[2], I64), name="nthreads")
    loop(b, i64_0, nthreads, "init", lambda t: _set_state(b, state, t, warp.RUN))

    def start(x, y, z):
        t = b.add(b.mul(b.add(b.mul(b.zext(z, I64), by), b.zext(y, I64)), bx), b.zext(x, I64))
        slot = b.gep(frames, [b.mul(t, slot_bytes)])
        hp = b.gep(handles, [t])
        call([x, y, z], [hp, slot, slot_bytes, frame_bytes, *xchg])
        _started(b, module, b.load(hp), state, t)

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

    settle = settle_function(module)
    destroy = declare(module, "llvm.coro.destroy", VOID, [I8P])
    fn = b.function
    rnd = fn.append_basic_block("warp.round")
    run = fn.append_basic_block("warp.run")
    settled = fn.append_basic_block("warp.settled")
    blocked = fn.append_basic_block("warp.stuck")
    finished = fn.append_basic_block("warp.finished")
    b.branch(rnd)
    b.position_at_end(rnd)
    code = b.call(settle, [state, mask, val, snap, result, nthreads])
    b.cbranch(b.icmp_unsigned("==", code, ll.Constant(I32, SETTLE_RELEASED)), run, settled)
    b.position_at_end(run)
    loop(
        b,
        i64_0,
        nthreads,
        "warp.resume",
        lambda t: _resume_runnable(b, module, b.load(b.gep(handles, [t])), state, t),
    )
    b.branch(rnd)
    b.position_at_end(settled)
    b.cbranch(b.icmp_unsigned("==", code, ll.Constant(I32, SETTLE_FINISHED)), finished, blocked)

    def destroy_all():
        loop(
            b,
            i64_0,
            nthreads,
            "warp.destroy",
            lambda t: b.call(destroy, [b.load(b.gep(handles, [t]))]),
        )

    b.position_at_end(blocked)
    b.store(b.add(linear, ll.Constant(I64, 1)), stuck)
    destroy_all()
    b.ret_void()
    b.position_at_end(finished)
    destroy_all()


def run_warp_grid(
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
    xchg,
    stuck,
) -> None:
    """The whole grid under the warp scheduler (grid sync and warp functions): blocks
    settle one by one; when none can release anything and every live thread of the
    grid waits at the grid barrier, the grid is released."""
    from cujit.targets.cpu import warp

    shared, dynshared, static_shared = buffers
    handles, frames, slot_bytes, frame_bytes = slots
    state, mask, val, snap, result = xchg
    zero = ll.Constant(I32, 0)
    i64_0, i64_1 = ll.Constant(I64, 0), ll.Constant(I64, 1)
    bx, by = (b.zext(n, I64) for n in block[:2])
    nthreads = b.mul(b.mul(bx, by), b.zext(block[2], I64), name="nthreads")
    nslots = b.mul(
        b.udiv(b.add(nthreads, ll.Constant(I64, 31)), ll.Constant(I64, 32)),
        ll.Constant(I64, 32),
        name="nslots",
    )
    dyn_stride = b.and_(
        b.add(dynbytes, ll.Constant(I64, BLOCK_ALIGN - 1)), ll.Constant(I64, -BLOCK_ALIGN)
    )
    released = b.alloca(I64, name="released")
    at_grid = b.alloca(I64, name="at_grid")
    which = b.alloca(I64, name="stuck_block")

    def own(blk):
        """Block ``blk``'s exchange slices."""
        first = b.mul(blk, nslots)
        return [
            b.gep(state, [first]),
            b.gep(mask, [first]),
            b.gep(val, [first]),
            b.gep(snap, [first]),
            b.gep(result, [b.mul(blk, ll.Constant(I64, warp.RESULT_SLOTS))]),
        ]

    def each_thread(body):
        """``body(handle index, exchange index)`` for every thread of the grid."""
        loop(
            b,
            i64_0,
            nblocks,
            "g.block",
            lambda blk: loop(
                b,
                i64_0,
                nthreads,
                "g.thread",
                lambda t: body(b.add(b.mul(blk, nthreads), t), b.add(b.mul(blk, nslots), t)),
            ),
        )

    each_thread(lambda h, x: _set_state(b, state, x, warp.RUN))

    def start_block(linear: ll.Value) -> None:
        ctaid = block_index(b, linear, grid)
        mem = [
            b.gep(shared, [b.mul(linear, ll.Constant(I64, block_stride(static_shared)))]),
            b.gep(dynshared, [b.mul(linear, dyn_stride)]),
        ]
        mine = own(linear)

        def start(x, y, z):
            local = b.add(
                b.mul(b.add(b.mul(b.zext(z, I64), by), b.zext(y, I64)), bx), b.zext(x, I64)
            )
            t = b.add(b.mul(linear, nthreads), local)
            hp = b.gep(handles, [t])
            extra = [hp, b.gep(frames, [b.mul(t, slot_bytes)]), slot_bytes, frame_bytes, *mine]
            b.call(kernel, [*mem, dynbytes, x, y, z, *ctaid, *block, *grid, *extra] + params)
            _started(b, module, b.load(hp), state, b.add(b.mul(linear, nslots), local))

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

    settle = settle_function(module)
    destroy = declare(module, "llvm.coro.destroy", VOID, [I8P])
    fn = b.function
    rnd = fn.append_basic_block("grid.round")
    run = fn.append_basic_block("grid.run")
    not_released = fn.append_basic_block("grid.none_released")
    not_stuck = fn.append_basic_block("grid.not_stuck")
    blocked = fn.append_basic_block("grid.stuck")
    release = fn.append_basic_block("grid.release")
    finished = fn.append_basic_block("grid.finished")
    b.branch(rnd)
    b.position_at_end(rnd)
    for acc in (released, at_grid, which):
        b.store(i64_0, acc)

    def settle_block(blk):
        code = b.call(settle, [*own(blk), nthreads])
        for acc, k in ((released, SETTLE_RELEASED), (at_grid, SETTLE_AT_GRID)):
            hit = b.zext(b.icmp_unsigned("==", code, ll.Constant(I32, k)), I64)
            b.store(b.or_(b.load(acc), hit), acc)
        with b.if_then(b.icmp_unsigned("==", code, ll.Constant(I32, SETTLE_STUCK))):
            b.store(b.add(blk, i64_1), which)

    loop(b, i64_0, nblocks, "grid.settle", settle_block)
    b.cbranch(b.icmp_unsigned("!=", b.load(which), i64_0), blocked, not_stuck)
    b.position_at_end(not_stuck)
    b.cbranch(b.icmp_unsigned("!=", b.load(released), i64_0), run, not_released)
    b.position_at_end(run)
    each_thread(lambda h, x: _resume_runnable(b, module, b.load(b.gep(handles, [h])), state, x))
    b.branch(rnd)
    b.position_at_end(not_released)
    b.cbranch(b.icmp_unsigned("!=", b.load(at_grid), i64_0), release, finished)
    b.position_at_end(release)

    def unpark(h, x):
        slot = b.gep(state, [x], inbounds=True)
        with b.if_then(b.icmp_unsigned("==", b.load(slot), ll.Constant(I8, warp.GRID))):
            b.store(ll.Constant(I8, warp.RUN), slot)

    each_thread(unpark)
    b.branch(run)

    def destroy_all():
        each_thread(lambda h, x: b.call(destroy, [b.load(b.gep(handles, [h]))]))

    b.position_at_end(blocked)
    b.store(b.load(which), stuck)
    destroy_all()
    b.ret_void()
    b.position_at_end(finished)
    destroy_all()
