"""Warp-level and block-vote functions on the CPU: rendezvous through an exchange buffer.

A kernel that calls any of ``cuda.shfl_*_sync``, ``all_sync``/``any_sync``/``eq_sync``/
``ballot_sync``, ``match_any_sync``/``match_all_sync``, ``activemask``, ``syncwarp`` or
``syncthreads_count``/``_and``/``_or`` runs as coroutines (``coro.py``) under the
*warp scheduler* (``runner.py``).  Each of these calls is a rendezvous:

1. the thread writes its operand into its slot of the block's exchange buffer (hidden
   parameters ``warp.*``: one entry per thread of the block, by linear thread id,
   x fastest), with its lane mask, and sets its *state* (``BAR`` for a block
   barrier, ``WARP`` for a warp function, ``ACTIVE`` for ``activemask``, ``GRID`` for
   a grid barrier), then suspends;
2. when no thread can run any further, the scheduler *settles* each block: a thread
   at ``WARP`` with mask ``M`` is released together with every lane of ``M``, once all
   the non-exited lanes of ``M`` (lanes past the end of a partial last warp count as
   exited) wait at a warp function with that same mask, as PTX's ``shfl.sync``/
   ``vote.sync``/``match.sync`` wait for "all non-exited threads in membermask" with
   the same membermask.  Releasing copies each released lane's operand to its
   ``snap`` slot and writes the group's lane mask (its non-exited lanes) over its
   ``mask`` slot.  A block barrier releases when every live thread of the block is at
   one, its ``syncthreads_count``/``_and``/``_or`` results written to ``warp.result``;
3. the resumed thread computes its result from the snapshots of its group's lanes.

Snapshots, not the operands themselves: a released lane may run on to its next warp
function and overwrite its operand before a lane of its group has read it; the
snapshots are only rewritten at a later settle, and every released lane reads its
snapshots first thing when resumed, in the round that follows its release.

``activemask()`` is a rendezvous too: the lanes of a warp that are waiting at the same
``activemask`` call when the block settles are the active ones, each gets their mask.
A shuffle whose source lane is outside the group (not in ``mask``, exited, or past
the end of the block) is undefined in CUDA (PTX ISA: "results are undefined ... if
an active thread sources a register from an inactive thread"); here the lane gets
its own value, as for a source out of range.  If no thread can make progress (a mask
naming a lane that waits elsewhere, at a block barrier, or a lane missing from its own
mask), the scheduler stops the block and the launch raises a ``LaunchError``.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I1, I32, I64
from cujit.ir import intrinsics as intrinsic_table
from cujit.targets.cpu import coro
from cujit.targets.cpu.intrinsics import I8P, hidden

I32P, I64P = ll.PointerType(I32), ll.PointerType(I64)

# Thread states in ``warp.state`` (one byte per thread).
RUN, DONE, BAR, GRID, WARP, ACTIVE = range(6)
# ``warp.result`` per block: the count, AND and OR of the last barrier's predicates.
RESULT_SLOTS = 4

WARP_HIDDEN_PARAMS = (
    *coro.CORO_HIDDEN_PARAMS,
    ("warp.state", I8P),
    ("warp.mask", I32P),
    ("warp.val", I64P),
    ("warp.snap", I64P),
    ("warp.result", I32P),
)
_FIRST = len(coro.CORO_HIDDEN_PARAMS)
_STATE, _MASK, _VAL, _SNAP, _RESULT = range(_FIRST, _FIRST + 5)

SHUFFLES = ("cuda.shfl_sync", "cuda.shfl_up_sync", "cuda.shfl_down_sync", "cuda.shfl_xor_sync")
VOTES = ("cuda.all_sync", "cuda.any_sync", "cuda.eq_sync", "cuda.ballot_sync")
MATCHES = ("cuda.match_any_sync", "cuda.match_all_sync")
BLOCK_VOTES = ("cuda.syncthreads_count", "cuda.syncthreads_and", "cuda.syncthreads_or")
# The functions that need the warp scheduler: the intrinsic table's rendezvous.
WARP_FUNCTIONS = intrinsic_table.names_where(lambda row: row.cpu_wait == intrinsic_table.RENDEZVOUS)


def _i32(v: int) -> ll.Constant:
    return ll.Constant(I32, v)


def _linear(ctx: FunctionLowering) -> ll.Value:
    """This thread's linear index in its block (x fastest), as CUDA numbers lanes."""
    b = ctx.builder
    tx, ty, tz = (hidden(ctx, f"threadIdx.{a}") for a in "xyz")
    bx, by = hidden(ctx, "blockDim.x"), hidden(ctx, "blockDim.y")
    return b.add(b.mul(b.add(b.mul(tz, by), ty), bx), tx, name="linear_tid")


def _slot(ctx: FunctionLowering, which: int, index: ll.Value) -> ll.Value:
    return ctx.builder.gep(ctx.llfn.args[which], [index], inbounds=True)


def _park(
    ctx: FunctionLowering,
    op: ir.Intrinsic,
    state: int,
    t: ll.Value,
    mask: ll.Value | None = None,
    value: ll.Value | None = None,
) -> None:
    """Write this thread's operand (and mask) to the exchange buffer, set its state and
    suspend; the builder continues where the scheduler resumes it."""
    b = ctx.builder
    if mask is not None:
        b.store(mask, _slot(ctx, _MASK, t))
    if value is not None:
        b.store(value, _slot(ctx, _VAL, t))
    b.store(ll.Constant(ll.IntType(8), state), _slot(ctx, _STATE, t))
    coro.lower_syncthreads(ctx, op, [])


def _to_bits(ctx: FunctionLowering, value: ll.Value) -> ll.Value:
    """A 32- or 64-bit int or float as the i64 that the exchange buffer holds."""
    b = ctx.builder
    if isinstance(value.type, (ll.FloatType, ll.DoubleType)):
        value = b.bitcast(value, ll.IntType(32 if isinstance(value.type, ll.FloatType) else 64))
    if value.type.width < 64:
        value = b.zext(value, I64)
    return value


def _from_bits(ctx: FunctionLowering, bits: ll.Value, ty: ll.Type) -> ll.Value:
    b = ctx.builder
    if isinstance(ty, (ll.FloatType, ll.DoubleType)):
        width = 32 if isinstance(ty, ll.FloatType) else 64
        if width < 64:
            bits = b.trunc(bits, I32)
        return b.bitcast(bits, ty)
    return b.trunc(bits, ty) if ty.width < 64 else bits


def _lanes_fold(
    ctx: FunctionLowering, group: ll.Value, base: ll.Value, name: str, bit_of
) -> ll.Value:
    """``OR over lanes k in group of (bit_of(snap[base + k]) << k)``: an i32 mask."""
    b = ctx.builder
    fn = ctx.llfn
    pre = b.block
    head = fn.append_basic_block(f"{name}.head")
    body = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.end")
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(I32, name=f"{name}.k")
    acc = b.phi(I32, name=f"{name}.acc")
    k.add_incoming(_i32(0), pre)
    acc.add_incoming(_i32(0), pre)
    b.cbranch(b.icmp_unsigned("<", k, _i32(32)), body, done)
    b.position_at_end(body)
    member = b.trunc(b.lshr(group, k), I1)
    snap = b.load(_slot(ctx, _SNAP, b.add(base, k)))  # harmless for lanes outside: in the block
    hit = b.and_(member, bit_of(snap))
    acc_next = b.or_(acc, b.shl(b.zext(hit, I32), k))
    k.add_incoming(b.add(k, _i32(1)), b.block)
    acc.add_incoming(acc_next, b.block)
    b.branch(head)
    b.position_at_end(done)
    return acc


def lower_shuffle(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``shfl_*_sync(mask, value, lane)``: PTX's source lane ``j`` from ``lane[4:0]``
    (a whole warp: clamp 31, or 0 for ``up``); out of range, or outside the group,
    the lane keeps its own value."""
    mask, value, lane = args
    b = ctx.builder
    t = _linear(ctx)
    _park(ctx, op, WARP, t, mask, _to_bits(ctx, value))
    group = b.load(_slot(ctx, _MASK, t), name="group")
    own = b.and_(t, _i32(31))
    base = b.sub(t, own)
    delta = b.and_(lane, _i32(31))
    true = ll.Constant(I1, 1)
    if op.name == "cuda.shfl_sync":
        j, ok = delta, true
    elif op.name == "cuda.shfl_up_sync":
        j, ok = b.sub(own, delta), b.icmp_unsigned(">=", own, delta)
    elif op.name == "cuda.shfl_down_sync":
        j = b.add(own, delta)
        ok = b.icmp_unsigned("<=", j, _i32(31))
    else:
        j, ok = b.xor(own, delta), true
    ok = b.and_(ok, b.trunc(b.lshr(group, b.and_(j, _i32(31))), I1))
    src = b.select(ok, b.add(base, j), t)
    return _from_bits(ctx, b.load(_slot(ctx, _SNAP, src)), value.type)


def lower_vote(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``all_sync``/``any_sync``/``eq_sync`` (bool) and ``ballot_sync`` (the lane bits),
    over the group's non-exited lanes."""
    mask, pred = args
    b = ctx.builder
    t = _linear(ctx)
    _park(ctx, op, WARP, t, mask, b.zext(pred, I64))
    group = b.load(_slot(ctx, _MASK, t), name="group")
    base = b.sub(t, b.and_(t, _i32(31)))
    ballot = _lanes_fold(ctx, group, base, "ballot", lambda s: b.trunc(s, I1))
    if op.name == "cuda.ballot_sync":
        return ballot
    if op.name == "cuda.all_sync":
        return b.icmp_unsigned("==", ballot, group)
    if op.name == "cuda.any_sync":
        return b.icmp_unsigned("!=", ballot, _i32(0))
    return b.or_(b.icmp_unsigned("==", ballot, _i32(0)), b.icmp_unsigned("==", ballot, group))


def lower_match(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``match_any_sync`` -> the lanes whose value has this lane's bits;
    ``match_all_sync`` -> ``(group if all agree else 0, all agree)``."""
    mask, value = args
    b = ctx.builder
    t = _linear(ctx)
    _park(ctx, op, WARP, t, mask, _to_bits(ctx, value))
    group = b.load(_slot(ctx, _MASK, t), name="group")
    base = b.sub(t, b.and_(t, _i32(31)))
    mine = b.load(_slot(ctx, _SNAP, t))
    same = _lanes_fold(ctx, group, base, "match", lambda s: b.icmp_unsigned("==", s, mine))
    if op.name == "cuda.match_any_sync":
        return same
    agree = b.icmp_unsigned("==", same, group)
    pair = ll.Constant(ll.LiteralStructType([I32, I1]), None)
    pair = b.insert_value(pair, b.select(agree, group, _i32(0)), 0)
    return b.insert_value(pair, agree, 1)


def lower_syncwarp(ctx: FunctionLowering, op: ir.Intrinsic, args):
    _park(ctx, op, WARP, _linear(ctx), args[0])


def lower_activemask(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """The lanes of this warp waiting at this same call when the block settles."""
    t = _linear(ctx)
    _park(ctx, op, ACTIVE, t, mask=_i32(op.result.id))  # the call site
    return ctx.builder.load(_slot(ctx, _MASK, t), name="active")


def lower_syncthreads(ctx: FunctionLowering, op: ir.Intrinsic, args):
    _park(ctx, op, BAR, _linear(ctx))


def lower_block_vote(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``syncthreads_count/and/or(pred)``: a block barrier; the scheduler leaves the
    count, AND and OR of the block's predicates in ``warp.result``."""
    b = ctx.builder
    _park(ctx, op, BAR, _linear(ctx), value=b.zext(args[0], I64))
    k = BLOCK_VOTES.index(op.name)
    return b.load(b.gep(ctx.llfn.args[_RESULT], [_i32(k)], inbounds=True))


def lower_grid_sync(ctx: FunctionLowering, op: ir.Intrinsic, args):
    _park(ctx, op, GRID, _linear(ctx))


WARP_INTRINSICS = {
    **{name: lower_shuffle for name in SHUFFLES},
    **{name: lower_vote for name in VOTES},
    **{name: lower_match for name in MATCHES},
    **{name: lower_block_vote for name in BLOCK_VOTES},
    "cuda.syncwarp": lower_syncwarp,
    "cuda.activemask": lower_activemask,
    "cuda.syncthreads": lower_syncthreads,
    "cuda.grid_sync": lower_grid_sync,
}


def uses_warp_functions(fn: ir.Function) -> bool:
    return any(
        isinstance(op, ir.Intrinsic) and op.name in WARP_FUNCTIONS
        for block in fn.blocks
        for op in block.ops
    )
