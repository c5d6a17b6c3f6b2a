"""The grid runner: compiled code that runs blocks of a kernel on one host thread.

``build_runner`` adds to the kernel's module the exported entry

    void <kernel>__cpu_run(i8* args, %Launch* launch, %Worker* worker)

``args`` holds the kernel's flat ABI parameters as one C struct; ``launch`` the
grid and block shape and a block counter shared by all workers; ``worker``
this host thread's private shared-memory buffers (and coroutine handle slots).
Each worker claims ``chunk`` blocks at a time with an atomic add on the counter
until the grid is exhausted, so two cores balance themselves without Python in
the loop.  Per block:

- a kernel without barriers runs as a plain loop nest ``z, y, x`` over the
  threads, calling the kernel (``alwaysinline``: after inlining, ``threadIdx.x``
  is the inner loop's counter and LLVM optimises the loop as a whole);
- a kernel with barriers (``coro.py``) starts every thread's coroutine, then
  resumes the unfinished ones round by round until none is left, then destroys
  them (freeing their frames).

A kernel that syncs the grid (``cuda.cg.this_grid().sync()``) needs every block
alive at once, so its runner does not claim blocks: one call runs the whole grid,
every thread of every block a coroutine under one scheduler, each block with its
own slice of the worker's shared buffers (``block_stride`` bytes apart).  Rounds
resume the threads that are neither finished nor parked at the grid barrier; when
a round leaves none runnable, the parked ones (the whole grid has arrived) are
released together.

A kernel with warp functions or block votes (``warp.py``) runs under the warp
scheduler: each thread records its state (runnable, exited, at a block barrier, in a
warp function, in ``activemask``, at the grid barrier) in the block's exchange buffer;
rounds resume the runnable threads, then ``settle`` releases the warp groups that are
complete, else the block barrier once every live thread is at it.  A block that can
release nothing while some thread is still waiting is recorded in the worker's
``stuck`` field and the launch raises; with a grid sync, the whole grid runs under one
such scheduler and is released when every live thread waits at the grid barrier.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir as ll

from cujit.codegen.lltypes import I1, I8, I32, I64, VOID
from cujit.targets.cpu.intrinsics import I8P

I8PP = ll.PointerType(I8P)
# grid x y z, block x y z, dynamic shared bytes, block count, blocks per claim, next block
LAUNCH = ll.LiteralStructType([I32] * 6 + [I64] * 4)
LAUNCH_NEXT = 9
# static shared buffer, dynamic shared buffer, and for coroutines: handle slots (one
# per thread), frame slots, bytes per frame slot, frame size the kernel reports, and
# for grid sync: one "parked" byte per thread of the grid; for the warp scheduler
# (warp.py): the exchange buffers (state, mask, val, snap, result) and the record of a
# block that could not make progress (1 + its linear number, or 0)
WORKER = ll.LiteralStructType([I8P, I8P, I8PP, I8P, I64, I64, I8P, *[I8P] * 5, I64])
WORKER_FRAME_BYTES = 5
WORKER_XCHG = 7
WORKER_STUCK = 12
BLOCK_ALIGN = 64  # bytes between blocks' shared buffers in a grid-sync run: a multiple


def block_stride(nbytes: int) -> int:
    """Bytes between two blocks' slices of a shared buffer of ``nbytes`` per block."""
    return -(-nbytes // BLOCK_ALIGN) * BLOCK_ALIGN


def run_symbol(kernel_name: str) -> str:
    return f"{kernel_name}__cpu_run"


def _loop(b: ll.IRBuilder, start: ll.Value, stop: ll.Value, name: str,
          body: Callable[[ll.Value], None]) -> None:
    """``for i in range(start, stop): body(i)`` (unsigned), leaving ``b`` after the loop."""
    fn = b.function
    pre = b.block
    head = fn.append_basic_block(f"{name}.head")
    inner = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.end")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(start.type, name=name)
    i.add_incoming(start, pre)
    b.cbranch(b.icmp_unsigned("<", i, stop), inner, done)
    b.position_at_end(inner)
    body(i)
    i.add_incoming(b.add(i, ll.Constant(start.type, 1), flags=("nuw",)), b.block)
    b.branch(head)
    b.position_at_end(done)


def _decl(module: ll.Module, name: str, ret: ll.Type, args: list[ll.Type]) -> ll.Function:
    f = module.globals.get(name)
    if f is None:
        f = ll.Function(module, ll.FunctionType(ret, args), name)
        f.attributes.add("nounwind")
    return f


def build_runner(module: ll.Module, kernel: ll.Function, flat_types: list[ll.Type],
                 coroutine: bool, grid_sync: bool = False, static_shared: int = 0,
                 warp: bool = False) -> str:
    """Add the block runner for ``kernel`` (whose last ``len(flat_types)`` parameters are
    the ABI's); return the runner's symbol.  ``grid_sync``: the whole-grid scheduler,
    blocks ``block_stride(static_shared)`` bytes apart in the static shared buffer;
    ``warp``: the warp scheduler (``warp.py``), per block or, with ``grid_sync``, for
    the whole grid."""
    kernel.linkage = "internal"
    if not coroutine:
        kernel.attributes.add("alwaysinline")
    args_t = ll.LiteralStructType(flat_types)
    name = run_symbol(kernel.name)
    fn = ll.Function(module, ll.FunctionType(VOID, [I8P, LAUNCH.as_pointer(),
                                                    WORKER.as_pointer()]), name)
    raw, launch, worker = fn.args
    for arg, n in zip(fn.args, ("args", "launch", "worker")):
        arg.name = n
    fn.attributes.add("nounwind")
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    zero = ll.Constant(I32, 0)

    def field(ptr: ll.Value, k: int, name: str) -> ll.Value:
        return b.load(b.gep(ptr, [zero, ll.Constant(I32, k)], inbounds=True), name=name)

    argp = b.bitcast(raw, args_t.as_pointer())
    params = [field(argp, k, f"p{k}") for k in range(len(flat_types))]
    grid = [field(launch, k, f"grid.{a}") for k, a in enumerate("xyz")]
    block = [field(launch, 3 + k, f"block.{a}") for k, a in enumerate("xyz")]
    dynbytes, nblocks, chunk = (field(launch, k, n) for k, n in
                                ((6, "dynbytes"), (7, "nblocks"), (8, "chunk")))
    shared, dynshared, handles, frames, slot_bytes = (
        field(worker, k, n) for k, n in
        ((0, "shared"), (1, "dynshared"), (2, "handles"), (3, "frames"), (4, "slot_bytes")))
    frame_bytes = b.gep(worker, [zero, ll.Constant(I32, WORKER_FRAME_BYTES)], inbounds=True)
    counter = b.gep(launch, [zero, ll.Constant(I32, LAUNCH_NEXT)], inbounds=True)
    # The scheduler's count of suspended threads: an entry-block alloca (one in
    # the loop would grow the stack per block), promoted to a register by mem2reg.
    left = b.alloca(I64, name="left") if coroutine and not warp else None

    if warp:
        xchg, stuck = _xchg_fields(b, worker)
    if grid_sync and warp:
        _run_warp_grid(b, module, kernel, params, grid, block, dynbytes, nblocks,
                       (shared, dynshared, static_shared),
                       (handles, frames, slot_bytes, frame_bytes), xchg, stuck)
        b.ret_void()
        return name
    if grid_sync:
        parked = field(worker, 6, "parked")
        _run_grid(b, module, kernel, params, grid, block, dynbytes, nblocks,
                  (shared, dynshared, static_shared), (handles, frames, slot_bytes, frame_bytes),
                  parked)
        b.ret_void()
        return name

    claim = fn.append_basic_block("claim")
    work = fn.append_basic_block("work")
    finish = fn.append_basic_block("finish")
    b.branch(claim)
    b.position_at_end(claim)
    first = b.atomic_rmw("add", counter, chunk, "monotonic", name="first")
    b.cbranch(b.icmp_unsigned(">=", first, nblocks), finish, work)
    b.position_at_end(work)
    end = b.add(first, chunk)
    end = b.select(b.icmp_unsigned("<", end, nblocks), end, nblocks, name="last")

    gx, gy = (b.zext(g, I64) for g in grid[:2])

    def one_block(linear: ll.Value) -> None:
        # blockIdx from the linear block number, x fastest (as CUDA numbers blocks)
        rest = b.udiv(linear, gx)
        ctaid = [b.urem(linear, gx), b.urem(rest, gy), b.udiv(rest, gy)]
        ctaid = [b.trunc(c, I32, name=f"blockIdx.{a}") for c, a in zip(ctaid, "xyz")]

        def call(tid: list[ll.Value], extra: list[ll.Value]) -> None:
            hidden = [shared, dynshared, dynbytes, *tid, *ctaid, *block, *grid, *extra]
            b.call(kernel, hidden + params)

        if warp:
            _run_warp_block(b, module, block, (handles, frames, slot_bytes, frame_bytes),
                            xchg, stuck, linear, call)
        elif coroutine:
            _run_coroutines(b, module, block, (handles, frames, slot_bytes, frame_bytes), left, call)
        else:
            _loop(b, zero, block[2], "tid.z", lambda z: _loop(
                b, zero, block[1], "tid.y", lambda y: _loop(
                    b, zero, block[0], "tid.x", lambda x: call([x, y, z], []))))

    _loop(b, first, end, "block", one_block)
    b.branch(claim)
    b.position_at_end(finish)
    b.ret_void()
    return name


def _run_coroutines(b: ll.IRBuilder, module: ll.Module, block: list[ll.Value],
                    slots: tuple, left: ll.Value, call) -> None:
    """Start each thread of the block, resume them round by round, destroy them."""
    handles, frames, slot_bytes, frame_bytes = slots
    zero = ll.Constant(I32, 0)
    bx, by = (b.zext(n, I64) for n in block[:2])

    def start(x, y, z):
        t = b.add(b.mul(b.add(b.mul(b.zext(z, I64), by), b.zext(y, I64)), bx), b.zext(x, I64))
        slot = b.gep(frames, [b.mul(t, slot_bytes)])
        call([x, y, z], [b.gep(handles, [t]), slot, slot_bytes, frame_bytes])

    _loop(b, zero, block[2], "start.z", lambda z: _loop(
        b, zero, block[1], "start.y", lambda y: _loop(
            b, zero, block[0], "start.x", lambda x: start(x, y, z))))

    nthreads = b.mul(b.mul(bx, by), b.zext(block[2], I64), name="nthreads")
    done = _decl(module, "llvm.coro.done", I1, [I8P])
    resume = _decl(module, "llvm.coro.resume", VOID, [I8P])
    destroy = _decl(module, "llvm.coro.destroy", VOID, [I8P])
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

    _loop(b, ll.Constant(I64, 0), nthreads, "resume", resume_one)
    again = b.icmp_unsigned("!=", b.load(left), ll.Constant(I64, 0))
    after = fn.append_basic_block("all_done")
    b.cbranch(again, pending, after)
    b.position_at_end(after)
    _loop(b, ll.Constant(I64, 0), nthreads, "destroy",
          lambda t: b.call(destroy, [b.load(b.gep(handles, [t]))]))


def _ctaid(b: ll.IRBuilder, linear: ll.Value, grid: list[ll.Value]) -> list[ll.Value]:
    """blockIdx from the linear block number, x fastest (as CUDA numbers blocks)."""
    gx, gy = (b.zext(g, I64) for g in grid[:2])
    rest = b.udiv(linear, gx)
    ctaid = [b.urem(linear, gx), b.urem(rest, gy), b.udiv(rest, gy)]
    return [b.trunc(c, I32, name=f"blockIdx.{a}") for c, a in zip(ctaid, "xyz")]


def _run_grid(b: ll.IRBuilder, module: ll.Module, kernel: ll.Function, params, grid, block,
              dynbytes, nblocks, buffers, slots, parked) -> None:
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
        ctaid = _ctaid(b, linear, grid)
        own = [b.gep(shared, [b.mul(linear, ll.Constant(I64, block_stride(static_shared)))]),
               b.gep(dynshared, [b.mul(linear, dyn_stride)])]
        first = b.mul(linear, nthreads)

        def start(x, y, z):
            local = b.add(b.mul(b.add(b.mul(b.zext(z, I64), by), b.zext(y, I64)), bx),
                          b.zext(x, I64))
            t = b.add(first, local)
            extra = [b.gep(handles, [t]), b.gep(frames, [b.mul(t, slot_bytes)]), slot_bytes,
                     frame_bytes, b.gep(parked, [t])]
            b.call(kernel, [*own, dynbytes, x, y, z, *ctaid, *block, *grid, *extra] + params)

        _loop(b, zero, block[2], "start.z", lambda z: _loop(
            b, zero, block[1], "start.y", lambda y: _loop(
                b, zero, block[0], "start.x", lambda x: start(x, y, z))))

    _loop(b, i64_0, nblocks, "start.block", start_block)

    done = _decl(module, "llvm.coro.done", I1, [I8P])
    resume = _decl(module, "llvm.coro.resume", VOID, [I8P])
    destroy = _decl(module, "llvm.coro.destroy", VOID, [I8P])
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
                count = b.select(b.icmp_unsigned("!=", b.load(flag), ll.Constant(I8, 0)),
                                 waiting, runnable)
                b.store(b.add(b.load(count), i64_1), count)

    _loop(b, i64_0, total, "grid.resume", resume_one)
    release = fn.append_basic_block("grid.release")
    settled = fn.append_basic_block("grid.settled")
    finished = fn.append_basic_block("grid.finished")
    b.cbranch(b.icmp_unsigned("!=", b.load(runnable), i64_0), one_round, settled)
    b.position_at_end(settled)  # nothing can run: all done, or all arrived at the barrier
    b.cbranch(b.icmp_unsigned("!=", b.load(waiting), i64_0), release, finished)
    b.position_at_end(release)
    _loop(b, i64_0, total, "grid.unpark",
          lambda t: b.store(ll.Constant(I8, 0), b.gep(parked, [t])))
    b.branch(one_round)
    b.position_at_end(finished)
    _loop(b, i64_0, total, "grid.destroy",
          lambda t: b.call(destroy, [b.load(b.gep(handles, [t]))]))


# -- the warp scheduler (warp.py): rendezvous of warp functions and block votes ----------

# What settling a block found (``_settle``'s result).
SETTLE_RELEASED, SETTLE_FINISHED, SETTLE_AT_GRID, SETTLE_STUCK = range(4)
SETTLE_SYMBOL = "__cujit_warp_settle"


def warp_slots(nthreads: int) -> int:
    """Exchange-buffer entries per block: whole warps, so a lane may read any lane of its
    warp's slots (the last warp of a block may be partial)."""
    return -(-nthreads // 32) * 32


def _settle(module: ll.Module) -> ll.Function:
    """``i32 settle(i8* state, i32* mask, i64* val, i64* snap, i32* result, i64 n)``:
    release what can be released among a block's ``n`` threads, none of which is
    runnable.  Warp groups first (``warp.py``: every non-exited lane of the mask waits
    with the same mask; ``activemask`` callers of one site together); if none, the block
    barrier once every live thread is at it.  Returns a ``SETTLE_*`` code."""
    from cujit.targets.cpu import warp

    fn = module.globals.get(SETTLE_SYMBOL)
    if fn is not None:
        return fn
    i32p, i64p = ll.PointerType(I32), ll.PointerType(I64)
    fn = ll.Function(module, ll.FunctionType(I32, [I8P, i32p, i64p, i64p, i32p, I64]),
                     SETTLE_SYMBOL)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    state, mask, val, snap, result, n = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    c8 = lambda v: ll.Constant(I8, v)
    c32 = lambda v: ll.Constant(I32, v)
    c64 = lambda v: ll.Constant(I64, v)
    released = b.alloca(I64, name="released")
    ok = b.alloca(I1, name="ok")
    group = b.alloca(I32, name="group")
    live, atbar, atgrid, count = (b.alloca(I64, name=nm) for nm in
                                  ("live", "atbar", "atgrid", "count"))
    b.store(c64(0), released)

    def st(t):
        return b.gep(state, [t], inbounds=True)

    def mk(t):
        return b.gep(mask, [t], inbounds=True)

    def bit(m, k):  # lane k (i64) of the i32 mask m
        return b.trunc(b.lshr(m, b.trunc(k, I32)), I1)

    def one_warp(w):
        base = b.mul(w, c64(32))
        rest = b.sub(n, base)
        nl = b.select(b.icmp_unsigned("<", rest, c64(32)), rest, c64(32), name="lanes")

        def one_lane(lane):
            t = b.add(base, lane)
            s = b.load(st(t))
            with b.if_then(b.icmp_unsigned("==", s, c8(warp.WARP))):
                m = b.load(mk(t))
                b.store(bit(m, lane), ok)  # a lane outside its own mask never settles

                def check(k):
                    tk = b.add(base, k)
                    sk = b.load(st(tk))
                    waits = b.and_(b.icmp_unsigned("==", sk, c8(warp.WARP)),
                                   b.icmp_unsigned("==", b.load(mk(tk)), m))
                    good = b.or_(b.icmp_unsigned("==", sk, c8(warp.DONE)), waits)
                    b.store(b.and_(b.load(ok), b.or_(b.not_(bit(m, k)), good)), ok)

                _loop(b, c64(0), nl, "check", check)
                with b.if_then(b.load(ok)):
                    b.store(c32(0), group)

                    def collect(k):
                        tk = b.add(base, k)
                        here = b.and_(bit(m, k),
                                      b.icmp_unsigned("==", b.load(st(tk)), c8(warp.WARP)))
                        lane_bit = b.shl(b.zext(here, I32), b.trunc(k, I32))
                        b.store(b.or_(b.load(group), lane_bit), group)

                    _loop(b, c64(0), nl, "collect", collect)
                    g = b.load(group)

                    def release(k):
                        tk = b.add(base, k)
                        with b.if_then(bit(g, k)):
                            b.store(b.load(b.gep(val, [tk], inbounds=True)),
                                    b.gep(snap, [tk], inbounds=True))
                            b.store(g, mk(tk))
                            b.store(c8(warp.RUN), st(tk))

                    _loop(b, c64(0), nl, "release", release)
                    b.store(b.add(b.load(released), c64(1)), released)
            s = b.load(st(t))  # (unchanged unless just released)
            with b.if_then(b.icmp_unsigned("==", s, c8(warp.ACTIVE))):
                site = b.load(mk(t))
                b.store(c32(0), group)

                def same_site(k):
                    tk = b.add(base, k)
                    here = b.and_(b.icmp_unsigned("==", b.load(st(tk)), c8(warp.ACTIVE)),
                                  b.icmp_unsigned("==", b.load(mk(tk)), site))
                    lane_bit = b.shl(b.zext(here, I32), b.trunc(k, I32))
                    b.store(b.or_(b.load(group), lane_bit), group)

                _loop(b, lane, nl, "site", same_site)
                g = b.load(group)

                def wake(k):
                    tk = b.add(base, k)
                    with b.if_then(bit(g, k)):
                        b.store(g, mk(tk))
                        b.store(c8(warp.RUN), st(tk))

                _loop(b, lane, nl, "wake", wake)
                b.store(b.add(b.load(released), c64(1)), released)

        _loop(b, c64(0), nl, "lane", one_lane)

    nwarps = b.udiv(b.add(n, c64(31)), c64(32))
    _loop(b, c64(0), nwarps, "warp", one_warp)
    some = fn.append_basic_block("released")
    block_level = fn.append_basic_block("block_level")
    b.cbranch(b.icmp_unsigned("!=", b.load(released), c64(0)), some, block_level)
    b.position_at_end(some)
    b.ret(c32(SETTLE_RELEASED))
    b.position_at_end(block_level)
    for acc in (live, atbar, atgrid, count):
        b.store(c64(0), acc)

    def tally(t):
        s = b.load(st(t))
        at_bar = b.icmp_unsigned("==", s, c8(warp.BAR))
        for acc, cond in ((live, b.icmp_unsigned("!=", s, c8(warp.DONE))), (atbar, at_bar),
                          (atgrid, b.icmp_unsigned("==", s, c8(warp.GRID)))):
            b.store(b.add(b.load(acc), b.zext(cond, I64)), acc)
        pred = b.and_(b.load(b.gep(val, [t], inbounds=True)), c64(1))
        b.store(b.add(b.load(count), b.select(at_bar, pred, c64(0))), count)

    _loop(b, c64(0), n, "tally", tally)
    nlive = b.load(live)
    finished = fn.append_basic_block("finished")
    not_finished = fn.append_basic_block("not_finished")
    b.cbranch(b.icmp_unsigned("==", nlive, c64(0)), finished, not_finished)
    b.position_at_end(finished)
    b.ret(c32(SETTLE_FINISHED))
    b.position_at_end(not_finished)
    barrier = fn.append_basic_block("barrier")
    not_barrier = fn.append_basic_block("not_barrier")
    b.cbranch(b.icmp_unsigned("==", b.load(atbar), nlive), barrier, not_barrier)
    b.position_at_end(barrier)
    total = b.load(count)
    for k, v in enumerate((b.trunc(total, I32),
                           b.zext(b.icmp_unsigned("==", total, nlive), I32),
                           b.zext(b.icmp_unsigned("!=", total, c64(0)), I32))):
        b.store(v, b.gep(result, [c32(k)], inbounds=True))

    def wake_all(t):
        with b.if_then(b.icmp_unsigned("==", b.load(st(t)), c8(warp.BAR))):
            b.store(c8(warp.RUN), st(t))

    _loop(b, c64(0), n, "wake_all", wake_all)
    b.ret(c32(SETTLE_RELEASED))
    b.position_at_end(not_barrier)
    b.ret(b.select(b.icmp_unsigned("==", b.load(atgrid), nlive), c32(SETTLE_AT_GRID),
                   c32(SETTLE_STUCK)))
    return fn


def _xchg_fields(b: ll.IRBuilder, worker: ll.Value) -> tuple[list[ll.Value], ll.Value]:
    """The worker's exchange buffers, typed (state, mask, val, snap, result), and where a
    block that cannot make progress is recorded."""
    zero = ll.Constant(I32, 0)
    types = (I8P, ll.PointerType(I32), ll.PointerType(I64), ll.PointerType(I64),
             ll.PointerType(I32))
    out = []
    for k, (ty, nm) in enumerate(zip(types, ("state", "mask", "val", "snap", "result"))):
        raw = b.load(b.gep(worker, [zero, ll.Constant(I32, WORKER_XCHG + k)], inbounds=True))
        out.append(b.bitcast(raw, ty, name=f"xchg.{nm}"))
    stuck = b.gep(worker, [zero, ll.Constant(I32, WORKER_STUCK)], inbounds=True)
    return out, stuck


def _set_state(b: ll.IRBuilder, state: ll.Value, t: ll.Value, value: int) -> None:
    from cujit.targets.cpu import warp  # noqa: F401  (the codes)

    b.store(ll.Constant(I8, value), b.gep(state, [t], inbounds=True))


def _resume_runnable(b: ll.IRBuilder, module: ll.Module, handle: ll.Value, state: ll.Value,
                     t: ll.Value) -> None:
    """Resume the thread whose coroutine is ``handle`` if its state is RUN; mark it DONE
    when it has finished."""
    from cujit.targets.cpu import warp

    done = _decl(module, "llvm.coro.done", I1, [I8P])
    resume = _decl(module, "llvm.coro.resume", VOID, [I8P])
    slot = b.gep(state, [t], inbounds=True)
    with b.if_then(b.icmp_unsigned("==", b.load(slot), ll.Constant(I8, warp.RUN))):
        b.call(resume, [handle])
        with b.if_then(b.call(done, [handle])):
            b.store(ll.Constant(I8, warp.DONE), slot)


def _started(b: ll.IRBuilder, module: ll.Module, handle: ll.Value, state: ll.Value,
             t: ll.Value) -> None:
    from cujit.targets.cpu import warp

    done = _decl(module, "llvm.coro.done", I1, [I8P])
    with b.if_then(b.call(done, [handle])):
        b.store(ll.Constant(I8, warp.DONE), b.gep(state, [t], inbounds=True))


def _run_warp_block(b: ll.IRBuilder, module: ll.Module, block: list[ll.Value], slots: tuple,
                    xchg: list[ll.Value], stuck: ll.Value, linear: ll.Value, call) -> None:
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
    _loop(b, i64_0, nthreads, "init", lambda t: _set_state(b, state, t, warp.RUN))

    def start(x, y, z):
        t = b.add(b.mul(b.add(b.mul(b.zext(z, I64), by), b.zext(y, I64)), bx), b.zext(x, I64))
        slot = b.gep(frames, [b.mul(t, slot_bytes)])
        hp = b.gep(handles, [t])
        call([x, y, z], [hp, slot, slot_bytes, frame_bytes, *xchg])
        _started(b, module, b.load(hp), state, t)

    _loop(b, zero, block[2], "start.z", lambda z: _loop(
        b, zero, block[1], "start.y", lambda y: _loop(
            b, zero, block[0], "start.x", lambda x: start(x, y, z))))

    settle = _settle(module)
    destroy = _decl(module, "llvm.coro.destroy", VOID, [I8P])
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
    _loop(b, i64_0, nthreads, "warp.resume",
          lambda t: _resume_runnable(b, module, b.load(b.gep(handles, [t])), state, t))
    b.branch(rnd)
    b.position_at_end(settled)
    b.cbranch(b.icmp_unsigned("==", code, ll.Constant(I32, SETTLE_FINISHED)), finished, blocked)

    def destroy_all():
        _loop(b, i64_0, nthreads, "warp.destroy",
              lambda t: b.call(destroy, [b.load(b.gep(handles, [t]))]))

    b.position_at_end(blocked)
    b.store(b.add(linear, ll.Constant(I64, 1)), stuck)
    destroy_all()
    b.ret_void()
    b.position_at_end(finished)
    destroy_all()


def _run_warp_grid(b: ll.IRBuilder, module: ll.Module, kernel: ll.Function, params, grid,
                   block, dynbytes, nblocks, buffers, slots, xchg, stuck) -> None:
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
    nslots = b.mul(b.udiv(b.add(nthreads, ll.Constant(I64, 31)), ll.Constant(I64, 32)),
                   ll.Constant(I64, 32), name="nslots")
    dyn_stride = b.and_(b.add(dynbytes, ll.Constant(I64, BLOCK_ALIGN - 1)),
                        ll.Constant(I64, -BLOCK_ALIGN))
    released = b.alloca(I64, name="released")
    at_grid = b.alloca(I64, name="at_grid")
    which = b.alloca(I64, name="stuck_block")

    def own(blk):
        """Block ``blk``'s exchange slices."""
        first = b.mul(blk, nslots)
        return [b.gep(state, [first]), b.gep(mask, [first]), b.gep(val, [first]),
                b.gep(snap, [first]),
                b.gep(result, [b.mul(blk, ll.Constant(I64, warp.RESULT_SLOTS))])]

    def each_thread(body):
        """``body(handle index, exchange index)`` for every thread of the grid."""
        _loop(b, i64_0, nblocks, "g.block", lambda blk: _loop(
            b, i64_0, nthreads, "g.thread",
            lambda t: body(b.add(b.mul(blk, nthreads), t), b.add(b.mul(blk, nslots), t))))

    each_thread(lambda h, x: _set_state(b, state, x, warp.RUN))

    def start_block(linear: ll.Value) -> None:
        ctaid = _ctaid(b, linear, grid)
        mem = [b.gep(shared, [b.mul(linear, ll.Constant(I64, block_stride(static_shared)))]),
               b.gep(dynshared, [b.mul(linear, dyn_stride)])]
        mine = own(linear)

        def start(x, y, z):
            local = b.add(b.mul(b.add(b.mul(b.zext(z, I64), by), b.zext(y, I64)), bx),
                          b.zext(x, I64))
            t = b.add(b.mul(linear, nthreads), local)
            hp = b.gep(handles, [t])
            extra = [hp, b.gep(frames, [b.mul(t, slot_bytes)]), slot_bytes, frame_bytes, *mine]
            b.call(kernel, [*mem, dynbytes, x, y, z, *ctaid, *block, *grid, *extra] + params)
            _started(b, module, b.load(hp), state, b.add(b.mul(linear, nslots), local))

        _loop(b, zero, block[2], "start.z", lambda z: _loop(
            b, zero, block[1], "start.y", lambda y: _loop(
                b, zero, block[0], "start.x", lambda x: start(x, y, z))))

    _loop(b, i64_0, nblocks, "start.block", start_block)

    settle = _settle(module)
    destroy = _decl(module, "llvm.coro.destroy", VOID, [I8P])
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

    _loop(b, i64_0, nblocks, "grid.settle", settle_block)
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
