"""``cuda.syncthreads`` on the CPU: each CUDA thread is an LLVM coroutine.

A kernel that contains a barrier is lowered as a switched-resume coroutine
(LLVM, "Coroutines in LLVM"): every ``syncthreads`` is a suspend point, and
``runner.py``'s per-block scheduler starts every thread of the block, then
resumes each suspended thread in turn, round after round, until all have
finished.  Every thread runs up to its k-th barrier before any thread runs past
it, which is exactly the barrier's contract, wherever the barriers sit (in
loops, under branches that are uniform in practice).  A thread that has
returned simply drops out of later rounds, as an exited GPU thread no longer
counts at a barrier.  The coroutine passes (CoroEarly/Split/Cleanup) run in
LLVM's default pipeline from ``-O1`` up, so ``engine.py`` never uses ``-O0``.

What the hooks emit::

    entry:   %id = coro.id(0, null, null, null); %mem = %slot or malloc(coro.size())
             %hdl = coro.begin(%id, %mem); store %hdl -> *%handle_out
    sync:    switch coro.suspend(none, false) [0: continue, 1: cleanup, default: suspend]
    return:  br final
    final:   switch coro.suspend(none, true) [0: unreachable, 1: cleanup, default: suspend]
    cleanup: free(coro.free(%id, %hdl)) unless it is %slot; br suspend
    suspend: coro.end(%hdl, false, none); ret void

A grid barrier (``cuda.cg.this_grid().sync()``) is a suspend point too, after the
thread sets its "parked" flag (a hidden parameter); such kernels run every thread of
the grid under one scheduler (``runner.py``), which resumes parked threads only
when no thread can run further.

Warp functions and block votes are suspend points too, under the warp scheduler
(``warp.py``): the thread records its operand and state in the block's exchange buffer
first.

The frame (every value live across a barrier, local arrays included) is one per
thread, in a slot of the worker's frame buffer (``launch.py`` sizes the slots by
the size the kernel reported on its first launch) or, when larger, on the heap,
freed when the scheduler destroys the finished coroutine.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir as ll
from llvmlite.ir.values import FunctionAttributes

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I1, I8, I32, I64, VOID
from cujit.ir import intrinsics as intrinsic_table
from cujit.targets.cpu.intrinsics import HIDDEN_PARAMS, I8P

# After the thread state: where the ramp stores its handle, this thread's frame slot
# and its size, and where to report the frame size the coroutine needs.
CORO_HIDDEN_PARAMS = (
    *HIDDEN_PARAMS,
    ("coro.handle", ll.PointerType(I8P)),
    ("coro.slot", I8P),
    ("coro.slot_bytes", I64),
    ("coro.frame_bytes", ll.PointerType(I64)),
)
# Kernels with a grid barrier also get this thread's "parked" flag: set before it
# suspends at ``grid_sync``, cleared by the scheduler when the whole grid got there.
GRID_HIDDEN_PARAMS = (*CORO_HIDDEN_PARAMS, ("grid.parked", I8P))


class TokenType(ll.types.Type):
    """LLVM's ``token`` type (llvmlite.ir has none); ``Constant(TOKEN, None)`` is ``none``."""

    null = "none"

    def _to_string(self) -> str:
        return "token"


TOKEN = TokenType()
NONE_TOKEN = ll.Constant(TOKEN, None)


class _CoroutineAttributes(FunctionAttributes):
    # llvmlite checks attribute names against a list without ``presplitcoroutine``,
    # the attribute that tells CoroSplit the function is a coroutine still to split.
    _known = FunctionAttributes._known | {"presplitcoroutine"}


@dataclass
class CoroState:
    id: ll.Value
    handle: ll.Value
    final: ll.Block
    cleanup: ll.Block
    suspend: ll.Block


def _decl(ctx: FunctionLowering, name: str, ret: ll.Type, args: list[ll.Type]) -> ll.Function:
    return ctx.declare(name, ret, args, attrs=("nounwind",))


def coro_prologue(ctx: FunctionLowering) -> None:
    """Make the kernel a coroutine: its frame, handle, and the shared exit blocks."""
    fn = ctx.llfn
    fn.attributes = _CoroutineAttributes(fn.attributes)
    fn.attributes.add("presplitcoroutine")
    b = ctx.builder
    handle_out, slot, slot_bytes, size_out = fn.args[len(HIDDEN_PARAMS) : len(CORO_HIDDEN_PARAMS)]
    null = ll.Constant(I8P, None)
    cid = b.call(
        _decl(ctx, "llvm.coro.id", TOKEN, [I32, I8P, I8P, I8P]),
        [ll.Constant(I32, 0), null, null, null],
        name="coro.id",
    )
    # The frame goes in the slot the runner provides when it fits (the usual case
    # from the second launch on: the size is reported back), else on the heap.
    size = b.call(_decl(ctx, "llvm.coro.size.i64", I64, []), [], name="coro.size")
    b.store(size, size_out)
    with b.if_else(b.icmp_unsigned("<=", size, slot_bytes)) as (fits, spills):
        with fits:
            in_slot = b.block
        with spills:
            heap = b.call(_decl(ctx, "malloc", I8P, [I64]), [size])
            on_heap = b.block
    mem = b.phi(I8P, name="coro.mem")
    mem.add_incoming(slot, in_slot)
    mem.add_incoming(heap, on_heap)
    hdl = b.call(_decl(ctx, "llvm.coro.begin", I8P, [TOKEN, I8P]), [cid, mem], name="coro.hdl")
    b.store(hdl, handle_out)

    state = CoroState(
        cid,
        hdl,
        fn.append_basic_block("coro.final"),
        fn.append_basic_block("coro.cleanup"),
        fn.append_basic_block("coro.suspend"),
    )
    ctx.target_state["coro"] = state
    here = b.block
    # final: the last suspend; resuming past it is undefined, destroying it cleans up.
    b.position_at_end(state.final)
    trap = fn.append_basic_block("coro.resumed_after_end")
    _suspend_switch(ctx, state, final=True, resume=trap)
    b.position_at_end(trap)
    b.unreachable()
    b.position_at_end(state.cleanup)
    frame = b.call(_decl(ctx, "llvm.coro.free", I8P, [TOKEN, I8P]), [cid, hdl])
    with b.if_then(b.icmp_unsigned("!=", frame, slot)):
        b.call(_decl(ctx, "free", VOID, [I8P]), [frame])
    b.branch(state.suspend)
    b.position_at_end(state.suspend)
    b.call(
        _decl(ctx, "llvm.coro.end", VOID, [I8P, I1, TOKEN]), [hdl, ll.Constant(I1, 0), NONE_TOKEN]
    )
    b.ret_void()
    b.position_at_end(here)


def _suspend_switch(ctx: FunctionLowering, state: CoroState, final: bool, resume: ll.Block) -> None:
    """``switch coro.suspend(...)``: 0 resumes at ``resume``, 1 destroys, else suspends."""
    b = ctx.builder
    s = b.call(
        _decl(ctx, "llvm.coro.suspend", I8, [TOKEN, I1]), [NONE_TOKEN, ll.Constant(I1, int(final))]
    )
    sw = b.switch(s, state.suspend)
    sw.add_case(ll.Constant(I8, 0), resume)
    sw.add_case(ll.Constant(I8, 1), state.cleanup)


def coro_return(ctx: FunctionLowering) -> None:
    """A thread's end is the final suspend point (the scheduler sees ``coro.done``)."""
    ctx.builder.branch(ctx.target_state["coro"].final)


def lower_syncthreads(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.syncthreads()``: suspend; the scheduler resumes once all threads got here."""
    state: CoroState = ctx.target_state["coro"]
    after = ctx.llfn.append_basic_block(f"sync{op.result.id}")
    _suspend_switch(ctx, state, final=False, resume=after)
    ctx.builder.position_at_end(after)


def lower_grid_sync(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.cg.this_grid().sync()``: park (set this thread's flag), then suspend; the
    grid scheduler (``runner.py``) resumes parked threads only once no thread of the
    grid can run any further."""
    ctx.builder.store(ll.Constant(I8, 1), ctx.llfn.args[len(CORO_HIDDEN_PARAMS)])
    lower_syncthreads(ctx, op, args)


# The calls that suspend the thread on the CPU target, from the intrinsic table: the
# barriers of the block and grid schedulers (``COROUTINE``) and the rendezvous of the
# warp scheduler (``warp.py``).
BARRIERS = intrinsic_table.names_where(lambda row: row.cpu_wait == intrinsic_table.COROUTINE)
_SUSPENDING = intrinsic_table.names_where(lambda row: row.suspends)


def suspends(fn: ir.Function) -> bool:
    """Whether ``fn``, or a device function it calls, waits at a barrier or a warp
    function: on the CPU target such a device function is inlined into the kernel
    (``passes.inline``), since only the kernel itself can be a coroutine."""
    return any(
        isinstance(op, ir.Intrinsic) and op.name in _SUSPENDING
        for f in fn.reachable()
        for block in f.blocks
        for op in block.ops
    )


def uses_barrier(fn: ir.Function) -> bool:
    """Whether the typed function calls ``cuda.syncthreads`` or syncs the grid (then it
    needs the coroutine form)."""
    return any(
        isinstance(op, ir.Intrinsic) and op.name in BARRIERS
        for block in fn.blocks
        for op in block.ops
    )
