"""Whole-function facts read off typed IR.

``written_arguments``: which kernel arguments the kernel may store into.  The runtime
uses it to refuse a read-only buffer (a CuPy array marked read-only, a DLPack export
without write access) passed where the kernel writes, before anything is launched.

May-alias sets are tracked per value: an argument aliases itself; a block parameter
aliases whatever its incoming edges pass; any other op's result aliases what its
operands alias (tuples carry their items' sets, so ``t = (x, y); t[0][i] = v`` marks
both).  The answer errs on the side of "written": it never misses a store.

``uses_grid_sync``: whether the kernel (or a device function it calls) has a grid-wide
barrier (the CPU target then runs its grid scheduler); ``needs_cooperative_launch``:
whether numba would mark the kernel cooperative (a grid group taken, a grid sync, a
cooperative foreign function), so that the runtime launches it with
``cuLaunchCooperativeKernel``.

``non_overflowing_adds``: the integer additions that cannot overflow, found from value
ranges; lowering marks them ``nsw``, which lets LLVM count the trips of a grid-stride
``while i < x.size: ...; i += stride`` loop and unroll it.
"""

from __future__ import annotations

from cujit.ir.arith import BinOp, Cast, Compare, Const
from cujit.ir.calls import SELF_CALL, CallFunction, Intrinsic
from cujit.ir.control import Branch
from cujit.ir.core import Function, operands
from cujit.ir.intrinsics import row as intrinsic_row
from cujit.ir.memory import SetItem, TupleGet
from cujit.types.core import Array, Scalar


def written_arguments(fn: Function) -> tuple[bool, ...]:
    """One flag per kernel argument: True if the kernel may write into it."""
    written: dict[int, tuple[bool, ...]] = {}  # by id(callee), each answered once
    for f in _callees_first(fn):
        written[id(f)] = _written(f, written)
    return written[id(fn)]


def _callees_first(fn: Function) -> list[Function]:
    """``fn`` and every function it calls, each once and after everything it calls."""
    order: list[Function] = []
    seen = {id(fn)}
    stack = [(fn, iter(fn.callees))]
    while stack:
        f, it = stack[-1]
        callee = next(it, None)
        if callee is None:
            order.append(f)
            stack.pop()
        elif id(callee) not in seen:
            seen.add(id(callee))
            stack.append((callee, iter(callee.callees)))
    return order


def _written(fn: Function, callees: dict[int, tuple[bool, ...]]) -> tuple[bool, ...]:
    """``written_arguments`` of ``fn``, its callees' answers in ``callees``."""
    aliases: dict[int, frozenset[int]] = {p.id: frozenset((i,)) for i, p in enumerate(fn.args)}
    flows = _alias_flows(fn)
    while _widen(aliases, flows):  # sets only grow, over a finite set of arguments: this ends
        pass
    written: set[int] = set()
    for op in fn.all_ops():
        for v in _stored_operands(fn, op, callees):
            written |= aliases.get(v.id, frozenset())
    return tuple(i in written for i in range(len(fn.args)))


def _alias_flows(fn: Function) -> list[tuple[int, tuple[int, ...]]]:
    """Each flow of may-alias sets, read off the function once: (value id, the ids whose
    sets it takes in), an op's result from its operands, a block parameter from the
    arguments its incoming edges pass."""
    flows = []
    for block in fn.blocks:
        for op in block.ops:
            if op.result is not None:
                sources = tuple(v.id for v in operands(op))
                if sources:
                    flows.append((op.result.id, sources))
        for target, args in block.term.successors():
            for param, arg in zip(fn.block(target).params, args, strict=True):
                flows.append((param.id, (arg.id,)))
    return flows


def _widen(aliases: dict[int, frozenset[int]], flows) -> bool:
    """One sweep of ``flows`` over ``aliases``; whether any set grew."""
    changed = False
    for vid, sources in flows:
        new = frozenset().union(*[aliases[s] for s in sources if s in aliases])
        if new:
            old = aliases.get(vid, frozenset())
            if not new <= old:
                aliases[vid] = old | new
                changed = True
    return changed


def _stored_operands(fn: Function, op, callees: dict[int, tuple[bool, ...]]) -> tuple:
    """The operands whose memory ``op`` may store into (``callees``: what each device
    function writes, by id)."""
    if isinstance(op, SetItem):
        return (op.obj,)
    if isinstance(op, Intrinsic):  # the intrinsic table says which operand it stores into
        row = intrinsic_row(op.name)
        return () if row is None or row.stores_into is None else (op.args[row.stores_into],)
    if isinstance(op, CallFunction) and op.callee == SELF_CALL:
        return op.args  # a recursive call: any of them, as far as this analysis sees
    if isinstance(op, CallFunction):  # a device function writes what its body writes
        flags = callees[id(fn.callee(op.callee))]
        return tuple(arg for arg, w in zip(op.args, flags, strict=True) if w)
    return ()


GRID_SYNC = "cuda.grid_sync"


def grid_sync_op(fn: Function) -> Intrinsic | None:
    """The first grid-wide barrier (``cuda.cg.this_grid().sync()``) in ``fn`` or in a
    device function it calls, if any.  A kernel with one must be launched
    cooperatively: every block resident at once, or the barrier never opens."""
    for f in fn.reachable():
        for op in f.all_ops():
            if isinstance(op, Intrinsic) and op.name == GRID_SYNC:
                return op
    return None


def uses_grid_sync(fn: Function) -> bool:
    return grid_sync_op(fn) is not None


def needs_cooperative_launch(fn: Function) -> bool:
    """Whether ``fn`` or a device function it calls makes its kernel cooperative, as
    numba marks one: it takes the grid group (``cuda.cg.this_grid()``), syncs the grid,
    or calls a foreign function declared with ``use_cooperative=True``."""
    return any(_cooperative_op(op) for f in fn.reachable() for op in f.all_ops())


def _cooperative_op(op) -> bool:
    if not isinstance(op, Intrinsic):
        return False
    row = intrinsic_row(op.name)  # None for a name the verifier will refuse
    return (row is not None and row.cooperative) or (
        op.name == "foreign.call" and op.attr("cooperative", False)
    )


# -- value ranges for integer additions ------------------------------------------------
# The most elements a C- or F-contiguous array can have: its bytes lie in one address
# space, of at most 2**57 bytes on any host or GPU cujit runs on.  (A layout-'A' array
# may be a zero-stride view of any extent: its extents get no bound.)
MAX_CONTIGUOUS_EXTENT = 2**57
# The values each special register can hold, inclusive, from CUDA's launch limits: blocks
# of at most 1024 threads (64 along z), grids of at most 2**31 - 1 blocks along x and
# 65535 along y and z (the CUDA target also hands them to LLVM: ``targets/cuda``).
SPECIAL_REGISTER_RANGES = {
    "threadIdx.x": (0, 1023),
    "threadIdx.y": (0, 1023),
    "threadIdx.z": (0, 63),
    "blockDim.x": (1, 1024),
    "blockDim.y": (1, 1024),
    "blockDim.z": (1, 64),
    "blockIdx.x": (0, 2**31 - 2),
    "blockIdx.y": (0, 65534),
    "blockIdx.z": (0, 65534),
    "gridDim.x": (1, 2**31 - 1),
    "gridDim.y": (1, 65535),
    "gridDim.z": (1, 65535),
    "laneid": (0, 31),
    "warpsize": (32, 32),
}
_GRID_1D = (0, (2**31 - 1) * 1024 - 1)  # cuda.grid(1)
_GRIDSIZE_1D = (1, (2**31 - 1) * 1024)  # cuda.gridsize(1)


def non_overflowing_adds(fn: Function) -> frozenset[int]:
    """The result ids of ``fn``'s signed integer ``+`` ops that cannot overflow
    (``_proved_adds``, which has the rules), swept to convergence or for three sweeps."""
    order = _reverse_postorder(fn)
    return _proved_adds(fn, order, 3 if _has_back_edge(order) else 1, stop_early=True)


def _proved_adds(fn: Function, order: list, sweeps: int, stop_early: bool) -> frozenset[int]:  # noqa: C901 -- one range analysis (guards, loop counters, a few sweeps); its parts share the range map
    """The result ids of ``fn``'s signed integer ``+`` ops that cannot overflow.

    Ranges ``(lo, hi)`` (None: unbounded) come from constants, the launch's special
    registers, ``cuda.grid(1)``/``gridsize(1)``, contiguous arrays' extents, widening
    casts and additions and products of bounded values.  A block parameter takes the
    widest range its incoming edges pass, and an edge taken when ``v < n`` (or
    ``v <= n``) holds passes ``v`` bounded above by ``n``: so in the body of
    ``while i < x.size: ...; i += stride`` the index is below the extent, and adding a
    stride of at most the grid's size cannot overflow.
    """
    defs = {op.result.id: op for op in fn.all_ops() if op.result is not None}
    ranges: dict[int, tuple] = {}
    # Per block, its incoming edges: (source block id, the arguments, the Compare that
    # holds when the edge is taken, if any).
    incoming: dict[int, list] = {b.id: [] for b in fn.blocks}
    for b in fn.blocks:
        term = b.term
        for k, (target, args) in enumerate(term.successors()):
            guard = None
            if isinstance(term, Branch) and k == 0 and term.then_target != term.else_target:
                guard = defs.get(term.cond.id)
            incoming[target].append((b.id, args, guard if isinstance(guard, Compare) else None))

    def rng(v) -> tuple:
        return ranges.get(v.id, (None, None))

    def bound(guard) -> tuple[int, int] | None:
        """(value id, its upper bound) that ``guard`` (taken as true) establishes."""
        if guard is None or guard.op not in ("<", "<="):
            return None
        hi = rng(guard.rhs)[1]
        return None if hi is None else (guard.lhs.id, hi - (guard.op == "<"))

    # Upper bounds that hold throughout a block: those of the guard on its one incoming
    # edge, and whatever held in that edge's source (which then dominates the block).
    facts: dict[int, dict[int, int]] = {}

    def edge_range(source: int, arg, guard) -> tuple:
        lo, hi = rng(arg)
        known = [facts.get(source, {}).get(arg.id)]
        b = bound(guard)
        if b is not None and b[0] == arg.id:
            known.append(b[1])
        for k in known:
            if k is not None:
                hi = k if hi is None else min(hi, k)
        return lo, hi

    # Each sweep derives every range from the previous sweep's (a loop's back edge passes
    # values computed later in the order): all start unbounded, and every sweep's ranges
    # hold on their own, so the last one decides, converged or not.  A sweep that ends
    # with the ranges and facts it began with would repeat itself, so the sweeps stop
    # there; without a back edge every value's inputs come before it in the order (SSA
    # definitions dominate their uses), so the first sweep is already final.
    result: set[int] = set()
    for _ in range(sweeps):
        before = (dict(ranges), dict(facts))
        result = set()
        for block in order:
            edges = incoming[block.id]
            here: dict[int, int] = {}
            if len(edges) == 1 and block is not order[0]:
                source, _, guard = edges[0]
                here = dict(facts.get(source, {}))
                b = bound(guard)
                if b is not None:
                    here[b[0]] = min(b[1], here.get(b[0], b[1]))
            facts[block.id] = here
            for k, p in enumerate(block.params):
                spans = [edge_range(src, args[k], guard) for src, args, guard in edges]
                if spans and _is_int(p.type):
                    los, his = [lo for lo, _ in spans], [hi for _, hi in spans]
                    ranges[p.id] = _clip(
                        p.type,
                        (None if None in los else min(los), None if None in his else max(his)),
                    )
            for op in block.ops:
                if op.result is None or not _is_int(op.result.type):
                    continue
                if (
                    isinstance(op, BinOp)
                    and op.op == "+"
                    and op.result.type.kind == "i"
                    and _fits(op.result.type, rng(op.lhs), rng(op.rhs))
                ):
                    result.add(op.result.id)
                ranges[op.result.id] = _clip(op.result.type, _op_range(op, rng, defs))
        if stop_early and (ranges, facts) == before:
            break
    return frozenset(result)


def _has_back_edge(order: list) -> bool:
    """Whether an edge of the reachable blocks ``order`` (in reverse postorder) goes to a
    block no later in it: a loop."""
    position = {b.id: k for k, b in enumerate(order)}
    return any(
        position[target] <= k
        for k, block in enumerate(order)
        for target, _ in block.term.successors()
    )


def _is_int(t) -> bool:
    return isinstance(t, Scalar) and t.kind in ("i", "u")


def _limits(t: Scalar) -> tuple[int, int]:
    if t.kind == "u":
        return 0, 2**t.bits - 1
    return -(2 ** (t.bits - 1)), 2 ** (t.bits - 1) - 1


def _clip(t: Scalar, r: tuple) -> tuple:
    """``r``, or unbounded where it leaves the type's range (the value would wrap)."""
    lo, hi = r
    tmin, tmax = _limits(t)
    if (lo is not None and lo < tmin) or (hi is not None and hi > tmax):
        return None, None
    return r


def _fits(t: Scalar, a: tuple, b: tuple) -> bool:
    """Whether ``a + b`` stays within signed type ``t`` for every value of the ranges."""
    tmin, tmax = _limits(t)
    up = a[1] is not None and b[1] is not None and a[1] + b[1] <= tmax
    # Adding a non-negative value cannot go below the other operand's own minimum.
    down = (
        (a[0] is not None and b[0] is not None and a[0] + b[0] >= tmin)
        or (a[0] is not None and a[0] >= 0)
        or (b[0] is not None and b[0] >= 0)
    )
    return up and down


def _op_range(op, rng, defs) -> tuple:  # noqa: C901 -- one branch per op whose value range is known (constants, special registers, shapes, + and *)
    if isinstance(op, Const) and isinstance(op.value, int) and not isinstance(op.value, bool):
        return op.value, op.value
    if isinstance(op, Intrinsic):
        if op.name == "cuda.sreg":
            return SPECIAL_REGISTER_RANGES.get(op.attr("reg"), (None, None))
        if op.name == "cuda.grid" and op.attr("ndim") == 1:
            return _GRID_1D
        if op.name == "cuda.gridsize" and op.attr("ndim") == 1:
            return _GRIDSIZE_1D
        if op.name == "array.size" and _contiguous(op.args[0]):
            return 0, MAX_CONTIGUOUS_EXTENT
        return None, None
    if isinstance(op, TupleGet):  # an extent of a contiguous array's shape
        src = defs.get(op.tuple.id)
        if isinstance(src, Intrinsic) and src.name == "array.shape" and _contiguous(src.args[0]):
            return 0, MAX_CONTIGUOUS_EXTENT
        return None, None
    if isinstance(op, Cast) and _is_int(op.operand.type):
        return rng(op.operand)  # clipped to the target type by the caller
    if isinstance(op, BinOp) and op.op in ("+", "*"):
        (alo, ahi), (blo, bhi) = rng(op.lhs), rng(op.rhs)
        if None in (alo, ahi, blo, bhi):
            if op.op == "+":
                return (
                    None if None in (alo, blo) else alo + blo,
                    None if None in (ahi, bhi) else ahi + bhi,
                )
            return None, None
        if op.op == "+":
            return alo + blo, ahi + bhi
        products = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
        return min(products), max(products)
    return None, None


def _contiguous(v) -> bool:
    return isinstance(v.type, Array) and v.type.layout in ("C", "F")


def _reverse_postorder(fn: Function) -> list:
    by_id = {b.id: b for b in fn.blocks}
    seen, order = {fn.blocks[0].id}, []
    stack = [(fn.blocks[0], iter(fn.blocks[0].term.successors()))]
    while stack:
        block, succs = stack[-1]
        for target, _ in succs:
            if target not in seen:
                seen.add(target)
                stack.append((by_id[target], iter(by_id[target].term.successors())))
                break
        else:
            stack.pop()
            order.append(block)
    return order[::-1]
