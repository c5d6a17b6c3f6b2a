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
# for grid sync: one "parked" byte per thread of the grid
WORKER = ll.LiteralStructType([I8P, I8P, I8PP, I8P, I64, I64, I8P])
WORKER_FRAME_BYTES = 5
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
                 coroutine: bool, grid_sync: bool = False, static_shared: int = 0) -> str:
    """Add the block runner for ``kernel`` (whose last ``len(flat_types)`` parameters are
    the ABI's); return the runner's symbol.  ``grid_sync``: the whole-grid scheduler,
    blocks ``block_stride(static_shared)`` bytes apart in the static shared buffer."""
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
    left = b.alloca(I64, name="left") if coroutine else None

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

        if coroutine:
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
