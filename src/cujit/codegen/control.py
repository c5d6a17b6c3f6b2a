"""Control flow: blocks, block parameters as phis, terminators, range iteration.

Block parameters become LLVM ``phi`` nodes.  All LLVM blocks and their phis are
created first; each IR block is then lowered (in reverse postorder, so every
value is lowered before its uses: a definition dominates its uses, and a
dominator comes first in reverse postorder); the phis receive their incoming
values last, from the LLVM block each edge actually leaves (lowering an op may
split a block).  Blocks unreachable from the entry are not lowered.

A range iterator is the struct ``{i64 next, i64 stop, i64 step}``; ``IterNext``
returns an advanced copy (the IR is pure SSA).
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen import checks, debuginfo
from cujit.codegen.context import FunctionLowering
from cujit.codegen.functions import lower_device_return
from cujit.codegen.lltypes import ITER_NEXT, ITER_STEP, ITER_STOP, i64, value_type


def reverse_postorder(fn: ir.Function, source_order: bool = False) -> list[ir.Block]:
    """The blocks reachable from the entry, in reverse postorder.  ``source_order``
    (debug builds): of a branch's targets the first (an ``if``'s body, a loop's body)
    comes first, as the source reads; otherwise the last does."""

    def successors(block: ir.Block):
        succs = block.term.successors()
        return iter(reversed(list(succs)) if source_order else succs)

    by_id = {b.id: b for b in fn.blocks}
    seen: set[int] = set()
    order: list[ir.Block] = []
    # Iterative DFS (deep CFGs must not hit Python's recursion limit).
    stack = [(fn.blocks[0], successors(fn.blocks[0]))]
    seen.add(fn.blocks[0].id)
    while stack:
        block, succs = stack[-1]
        for target, _ in succs:
            if target not in seen:
                seen.add(target)
                nxt = by_id[target]
                stack.append((nxt, successors(nxt)))
                break
        else:
            stack.pop()
            order.append(block)
    order.reverse()
    return order


def leaf_paths(ty: ll.Type, prefix: tuple[int, ...] = ()) -> list[tuple[tuple[int, ...], ll.Type]]:
    """The scalar leaves of an aggregate LLVM type, as (index path, type)."""
    if isinstance(ty, ll.BaseStructType):
        return [leaf for k, el in enumerate(ty.elements) for leaf in leaf_paths(el, (*prefix, k))]
    if isinstance(ty, ll.ArrayType):
        return [leaf for k in range(ty.count) for leaf in leaf_paths(ty.element, (*prefix, k))]
    return [(prefix, ty)]


class BlockMap:
    """IR block id -> LLVM block, its phis, and the incoming values of each edge.

    An aggregate parameter (array, tuple, range iterator) gets one phi per scalar
    leaf, reassembled with ``insertvalue`` at the top of the block.  LLVM's scalar
    optimisations see through that (``extractvalue`` of ``insertvalue`` folds), but
    not through a phi of a whole struct: a range loop's constant step stays a
    loop-carried value and its exit test keeps both directions.
    """

    def __init__(self, ctx: FunctionLowering, blocks: list[ir.Block]):
        self.ctx = ctx
        self.llblocks: dict[int, ll.Block] = {}
        self.phis: dict[int, list[list[ll.PhiInstr]]] = {}  # block -> per param leaf phis
        self.edges: list[tuple[ll.Block, int, list[list[ll.Value]]]] = []
        for b in blocks:
            self.llblocks[b.id] = ctx.llfn.append_basic_block(f"block{b.id}")

    def create_phis(self, block: ir.Block) -> None:
        """The phis of ``block``'s parameters, at its top."""
        ctx = self.ctx
        b = ctx.builder
        b.position_at_end(self.llblocks[block.id])
        per_param = []
        for p in block.params:
            lt = value_type(p.type)
            leaves = [] if lt is None or debuginfo.merged_slot(ctx, p) else leaf_paths(lt)
            per_param.append(
                [b.phi(ty, name=f"v{p.id}" + "".join(f".{k}" for k in path)) for path, ty in leaves]
            )
        # Reassemble aggregates only after all phis: phis must lead their block.
        for p, phis in zip(block.params, per_param, strict=True):
            lt = value_type(p.type)
            slot = debuginfo.merged_slot(ctx, p)
            if slot is not None:  # each edge stored it (debug builds, ``debugvars``)
                ctx.set(p, b.load(slot))
                continue
            if lt is None or not isinstance(lt, (ll.BaseStructType, ll.ArrayType)):
                ctx.set(p, phis[0] if phis else None)
                continue
            v = ll.Constant(lt, ll.Undefined)
            for (path, _), phi in zip(leaf_paths(lt), phis, strict=True):
                v = b.insert_value(v, phi, list(path))
            ctx.set(p, v)
        self.phis[block.id] = per_param

    def edge(self, target: int, args: tuple[ir.Value, ...]) -> ll.Block:
        """Record an edge leaving the current LLVM block (the arguments' leaves are
        extracted here, before the terminator); return the target LLVM block."""
        b = self.ctx.builder
        incoming = []
        for arg, p in zip(args, self.ctx.fn.block(target).params, strict=True):
            lt = value_type(arg.type)
            slot = None if lt is None else debuginfo.merged_slot(self.ctx, p)
            if slot is not None:
                debuginfo.store_merged(self.ctx, arg, p, slot)
            if lt is None or slot is not None:
                incoming.append([])
                continue
            v = self.ctx.get(arg)
            incoming.append(
                [v if not path else b.extract_value(v, list(path)) for path, _ in leaf_paths(lt)]
            )
        self.edges.append((b.block, target, incoming))
        return self.llblocks[target]

    def fill_phis(self) -> None:
        for pred, target, incoming in self.edges:
            for phis, values in zip(self.phis[target], incoming, strict=True):
                for phi, value in zip(phis, values, strict=True):
                    phi.add_incoming(value, pred)


def lower_terminator(ctx: FunctionLowering, blocks: BlockMap, term: ir.Terminator) -> None:
    b = ctx.builder
    if isinstance(term, ir.Jump):
        b.branch(blocks.edge(term.target, term.args))
    elif isinstance(term, ir.Branch):
        cond = ctx.get(term.cond)
        then = blocks.edge(term.then_target, term.then_args)
        if term.then_target == term.else_target:
            # Both edges into one block: a phi may list a predecessor only once
            # with one value, so the else edge goes through a block of its own.
            here = b.block
            hop = ctx.llfn.append_basic_block(f"block{term.then_target}.else")
            b.position_at_end(hop)
            other = blocks.edge(term.else_target, term.else_args)
            b.branch(other)
            b.position_at_end(here)
            b.cbranch(cond, then, hop)
        else:
            b.cbranch(cond, then, blocks.edge(term.else_target, term.else_args))
    elif isinstance(term, (ir.Return, ir.Raise)):
        # Kernels return nothing.  Raise has no GPU exception to become: the thread
        # ends, after reporting it to the host in debug mode (checks.py).
        if isinstance(term, ir.Raise):
            checks.record_raise(ctx, term)
        else:
            debuginfo.returning(ctx, term.value)
        if not ctx.kernel:
            lower_device_return(ctx, term)
        elif ctx.target.lower_return is not None:
            ctx.target.lower_return(ctx)
        else:
            b.ret_void()
    else:
        raise TypeError(f"unknown terminator {type(term).__name__}")


# -- range iteration ---------------------------------------------------------


def lower_get_iter(ctx: FunctionLowering, op: ir.GetIter) -> None:
    # A range {start, stop, step} is already the iterator's initial state.
    ctx.set(op.result, ctx.get(op.obj))


def lower_iter_valid(ctx: FunctionLowering, op: ir.IterValid) -> None:
    b = ctx.builder
    it = ctx.get(op.iter)
    sign = ctx.step_signs.get(id(op))
    if sign is not None:  # a step known positive (negative): only one direction can run
        nxt, stop = b.extract_value(it, ITER_NEXT), b.extract_value(it, ITER_STOP)
        ctx.set(op.result, b.icmp_signed("<" if sign > 0 else ">", nxt, stop))
        return
    nxt, stop, step = (b.extract_value(it, k) for k in (ITER_NEXT, ITER_STOP, ITER_STEP))
    zero = i64(0)
    # Python's range: counts up while next < stop for step > 0, down while
    # next > stop for step < 0; step == 0 (a ValueError in Python) yields nothing.
    up = b.and_(b.icmp_signed(">", step, zero), b.icmp_signed("<", nxt, stop))
    down = b.and_(b.icmp_signed("<", step, zero), b.icmp_signed(">", nxt, stop))
    ctx.set(op.result, b.or_(up, down))


def lower_iter_value(ctx: FunctionLowering, op: ir.IterValue) -> None:
    ctx.set(op.result, ctx.builder.extract_value(ctx.get(op.iter), ITER_NEXT))


def lower_iter_next(ctx: FunctionLowering, op: ir.IterNext) -> None:
    b = ctx.builder
    it = ctx.get(op.iter)
    # ``nsw``: the loop variable stays within [start, stop) while the loop runs, so
    # the advance overflows only past the last value of a range whose stop lies
    # within |step| of the int64 limits (the one case left undefined).  The flag
    # lets LLVM bound the variable: ``range(n)`` indices are then known
    # non-negative and the negative-index wrap of ``a[i]`` folds away.
    advanced = b.add(b.extract_value(it, ITER_NEXT), b.extract_value(it, ITER_STEP), flags=("nsw",))
    ctx.set(op.result, b.insert_value(it, advanced, ITER_NEXT))
