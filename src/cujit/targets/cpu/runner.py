"""The grid runner: compiled code that runs blocks of a kernel on one host thread.

The entry (here) claims blocks and hands each to one of four schedulers, a module
each: ``thread_loop`` (no barriers), ``block_scheduler`` (``syncthreads``),
``grid_scheduler`` (a grid sync) and ``warp_scheduler`` (warp functions and block
votes, with ``warp_settle``).  ``runner_abi`` holds the structs the host fills.

``build_runner`` adds to the kernel's module the exported entry

    void <kernel>__cpu_run(i8* args, %Launch* launch, %Worker* worker)

``args`` holds the kernel's flat ABI parameters as one C struct; ``launch`` the
grid and block shape and a block counter shared by all workers; ``worker``
this host thread's private shared-memory buffers (and coroutine handle slots).
Each worker claims ``chunk`` blocks at a time with an atomic add on the counter
until the grid is exhausted, so two cores balance themselves without Python in
the loop; before each claim it polls the stop flag that Ctrl-C sets (``guard.py``).  Per block:

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

from llvmlite import ir as ll

from cujit.codegen.lltypes import I32, I64, VOID
from cujit.targets.cpu.block_scheduler import run_block
from cujit.targets.cpu.grid_scheduler import run_grid
from cujit.targets.cpu.guard import emit_poll
from cujit.targets.cpu.intrinsics import I8P
from cujit.targets.cpu.irloop import loop
from cujit.targets.cpu.runner_abi import LAUNCH, LAUNCH_NEXT, WORKER, WORKER_FRAME_BYTES, run_symbol
from cujit.targets.cpu.thread_loop import run_threads
from cujit.targets.cpu.warp_scheduler import exchange_fields, run_warp_block, run_warp_grid


def build_runner(  # noqa: C901 -- one IR builder emits the runner for each scheduler (plain, coroutine, warp, grid sync)
    module: ll.Module,
    kernel: ll.Function,
    flat_types: list[ll.Type],
    coroutine: bool,
    grid_sync: bool = False,
    static_shared: int = 0,
    warp: bool = False,
) -> str:
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
    fn = ll.Function(
        module, ll.FunctionType(VOID, [I8P, LAUNCH.as_pointer(), WORKER.as_pointer()]), name
    )
    raw, launch, worker = fn.args
    for arg, n in zip(fn.args, ("args", "launch", "worker"), strict=True):
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
    dynbytes, nblocks, chunk = (
        field(launch, k, n) for k, n in ((6, "dynbytes"), (7, "nblocks"), (8, "chunk"))
    )
    shared, dynshared, handles, frames, slot_bytes = (
        field(worker, k, n)
        for k, n in (
            (0, "shared"),
            (1, "dynshared"),
            (2, "handles"),
            (3, "frames"),
            (4, "slot_bytes"),
        )
    )
    frame_bytes = b.gep(worker, [zero, ll.Constant(I32, WORKER_FRAME_BYTES)], inbounds=True)
    counter = b.gep(launch, [zero, ll.Constant(I32, LAUNCH_NEXT)], inbounds=True)
    # The scheduler's count of suspended threads: an entry-block alloca (one in
    # the loop would grow the stack per block), promoted to a register by mem2reg.
    left = b.alloca(I64, name="left") if coroutine and not warp else None

    if warp:
        xchg, stuck = exchange_fields(b, worker)
    if grid_sync and warp:
        run_warp_grid(
            b,
            module,
            kernel,
            params,
            grid,
            block,
            dynbytes,
            nblocks,
            (shared, dynshared, static_shared),
            (handles, frames, slot_bytes, frame_bytes),
            xchg,
            stuck,
        )
        b.ret_void()
        return name
    if grid_sync:
        parked = field(worker, 6, "parked")
        run_grid(
            b,
            module,
            kernel,
            params,
            grid,
            block,
            dynbytes,
            nblocks,
            (shared, dynshared, static_shared),
            (handles, frames, slot_bytes, frame_bytes),
            parked,
        )
        b.ret_void()
        return name

    claim = fn.append_basic_block("claim")
    work = fn.append_basic_block("work")
    finish = fn.append_basic_block("finish")
    b.branch(claim)
    b.position_at_end(claim)
    emit_poll(b, module)  # Ctrl-C: no more blocks (guard.py)
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
        ctaid = [b.trunc(c, I32, name=f"blockIdx.{a}") for c, a in zip(ctaid, "xyz", strict=True)]

        def call(tid: list[ll.Value], extra: list[ll.Value]) -> None:
            hidden = [shared, dynshared, dynbytes, *tid, *ctaid, *block, *grid, *extra]
            b.call(kernel, hidden + params)

        if warp:
            run_warp_block(
                b,
                module,
                block,
                (handles, frames, slot_bytes, frame_bytes),
                xchg,
                stuck,
                linear,
                call,
            )
        elif coroutine:
            run_block(b, module, block, (handles, frames, slot_bytes, frame_bytes), left, call)
        else:
            run_threads(b, block, call)

    loop(b, first, end, "block", one_block)
    b.branch(claim)
    b.position_at_end(finish)
    b.ret_void()
    return name
