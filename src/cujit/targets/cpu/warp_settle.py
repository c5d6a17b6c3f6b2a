"""The warp scheduler's settle function: what a block whose threads all wait may release.

Warp groups first (``warp.py``: every non-exited lane of the mask waits with the same
mask; ``activemask`` callers of one site together); if none, the block barrier once
every live thread is at it (with the ``syncthreads_count``/``_and``/``_or`` results).
"""

from __future__ import annotations

import functools

from llvmlite import ir as ll

from cujit.codegen.lltypes import I1, I8, I32, I64
from cujit.targets.cpu.intrinsics import I8P
from cujit.targets.cpu.irloop import loop

# What settling a block found (``_settle``'s result).
SETTLE_RELEASED, SETTLE_FINISHED, SETTLE_AT_GRID, SETTLE_STUCK = range(4)
SETTLE_SYMBOL = "__cujit_warp_settle"


def settle_function(module: ll.Module) -> ll.Function:  # noqa: C901 -- emits one LLVM function with one IRBuilder; its blocks read as the settle algorithm
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
    fn = ll.Function(
        module, ll.FunctionType(I32, [I8P, i32p, i64p, i64p, i32p, I64]), SETTLE_SYMBOL
    )
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    state, mask, val, snap, result, n = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    c8 = functools.partial(ll.Constant, I8)
    c32 = functools.partial(ll.Constant, I32)
    c64 = functools.partial(ll.Constant, I64)
    released = b.alloca(I64, name="released")
    ok = b.alloca(I1, name="ok")
    group = b.alloca(I32, name="group")
    live, atbar, atgrid, count = (
        b.alloca(I64, name=nm) for nm in ("live", "atbar", "atgrid", "count")
    )
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
                    waits = b.and_(
                        b.icmp_unsigned("==", sk, c8(warp.WARP)),
                        b.icmp_unsigned("==", b.load(mk(tk)), m),
                    )
                    good = b.or_(b.icmp_unsigned("==", sk, c8(warp.DONE)), waits)
                    b.store(b.and_(b.load(ok), b.or_(b.not_(bit(m, k)), good)), ok)

                loop(b, c64(0), nl, "check", check)
                with b.if_then(b.load(ok)):
                    b.store(c32(0), group)

                    def collect(k):
                        tk = b.add(base, k)
                        here = b.and_(
                            bit(m, k), b.icmp_unsigned("==", b.load(st(tk)), c8(warp.WARP))
                        )
                        lane_bit = b.shl(b.zext(here, I32), b.trunc(k, I32))
                        b.store(b.or_(b.load(group), lane_bit), group)

                    loop(b, c64(0), nl, "collect", collect)
                    g = b.load(group)

                    def release(k):
                        tk = b.add(base, k)
                        with b.if_then(bit(g, k)):
                            b.store(
                                b.load(b.gep(val, [tk], inbounds=True)),
                                b.gep(snap, [tk], inbounds=True),
                            )
                            b.store(g, mk(tk))
                            b.store(c8(warp.RUN), st(tk))

                    loop(b, c64(0), nl, "release", release)
                    b.store(b.add(b.load(released), c64(1)), released)
            s = b.load(st(t))  # (unchanged unless just released)
            with b.if_then(b.icmp_unsigned("==", s, c8(warp.ACTIVE))):
                site = b.load(mk(t))
                b.store(c32(0), group)

                def same_site(k):
                    tk = b.add(base, k)
                    here = b.and_(
                        b.icmp_unsigned("==", b.load(st(tk)), c8(warp.ACTIVE)),
                        b.icmp_unsigned("==", b.load(mk(tk)), site),
                    )
                    lane_bit = b.shl(b.zext(here, I32), b.trunc(k, I32))
                    b.store(b.or_(b.load(group), lane_bit), group)

                loop(b, lane, nl, "site", same_site)
                g = b.load(group)

                def wake(k):
                    tk = b.add(base, k)
                    with b.if_then(bit(g, k)):
                        b.store(g, mk(tk))
                        b.store(c8(warp.RUN), st(tk))

                loop(b, lane, nl, "wake", wake)
                b.store(b.add(b.load(released), c64(1)), released)

        loop(b, c64(0), nl, "lane", one_lane)

    nwarps = b.udiv(b.add(n, c64(31)), c64(32))
    loop(b, c64(0), nwarps, "warp", one_warp)
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
        for acc, cond in (
            (live, b.icmp_unsigned("!=", s, c8(warp.DONE))),
            (atbar, at_bar),
            (atgrid, b.icmp_unsigned("==", s, c8(warp.GRID))),
        ):
            b.store(b.add(b.load(acc), b.zext(cond, I64)), acc)
        pred = b.and_(b.load(b.gep(val, [t], inbounds=True)), c64(1))
        b.store(b.add(b.load(count), b.select(at_bar, pred, c64(0))), count)

    loop(b, c64(0), n, "tally", tally)
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
    for k, v in enumerate(
        (
            b.trunc(total, I32),
            b.zext(b.icmp_unsigned("==", total, nlive), I32),
            b.zext(b.icmp_unsigned("!=", total, c64(0)), I32),
        )
    ):
        b.store(v, b.gep(result, [c32(k)], inbounds=True))

    def wake_all(t):
        with b.if_then(b.icmp_unsigned("==", b.load(st(t)), c8(warp.BAR))):
            b.store(c8(warp.RUN), st(t))

    loop(b, c64(0), n, "wake_all", wake_all)
    b.ret(c32(SETTLE_RELEASED))
    b.position_at_end(not_barrier)
    b.ret(
        b.select(
            b.icmp_unsigned("==", b.load(atgrid), nlive), c32(SETTLE_AT_GRID), c32(SETTLE_STUCK)
        )
    )
    return fn
