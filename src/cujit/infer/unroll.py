"""``for x in literal_unroll(tup):``: the loop copied once per item before typing.

numba's ``literal_unroll`` lets a loop run over a tuple whose items differ in type
(arrays of different shapes, numbers of different kinds): the body is typed once
per item.  Here the untyped loop is rewritten before the first sweep: its header
and body are copied once per item, the loop value of copy ``k`` is the item ``k``
(the item itself for a constant tuple, ``tup[k]`` otherwise), and each copy's back
edge enters the next copy; the last one leaves the loop as the exhausted iterator
did.  A ``break`` still leaves from any copy and ``continue`` goes on to the next.

    block1(%6, %7):  %8 = itervalid %7;  branch %8, block2(), block5()
    block2:  %9 = itervalue %7;  %10 = iternext %7;  ...;  jump block1(%15, %10)
  becomes, for a tuple of two items,
    block7(%20, %21):  jump block8()
    block8:  %22 = const <item 0>;  %23 = const None;  ...;  jump block9(%24, %23)
    block9(%25, %26):  jump block10()
    block10: %27 = const <item 1>;  ...;  jump block11(%29, %28)
    block11(%30, %31):  jump block5()

The number of items must be known before typing: a global or closure tuple, a tuple
display, or a tuple argument of the kernel.  Values of the loop's header that the
code after the loop reads come into the exit block as new parameters, one per copy's
edge.
"""

from __future__ import annotations

import dataclasses

from cujit.device_api import is_literal_unroll
from cujit.diagnostics import Loc, UnsupportedError
from cujit.infer.function_calls import LiteralArg
from cujit.ir import (
    Block,
    Branch,
    BuildTuple,
    Call,
    Const,
    Function,
    GetItem,
    GetIter,
    IterNext,
    IterValid,
    IterValue,
    Jump,
    Op,
    Terminator,
    Value,
    map_operands,
    map_values,
    operands,
    replace,
)
from cujit.types import Tuple, Type

MAX_LOOPS = 256  # literal_unroll loops in one function, nested ones counted per copy


def unroll_literal_loops(fn: Function, arg_types: tuple[Type, ...]) -> Function:
    """``fn`` with every ``literal_unroll`` loop unrolled (``fn`` itself when none)."""
    for _ in range(MAX_LOOPS):
        found = _find_loop(fn)
        if found is None:
            return fn
        fn = _Unroller(fn, *found, arg_types).run()
    raise UnsupportedError("too many literal_unroll loops in one function", fn.loc)


class UnrollLoop(Exception):  # noqa: N818 -- a request to the driver, not an error
    """Raised by typing at a loop over a tuple whose items a local array cannot hold
    (arrays, records, tuples): the driver unrolls that loop and types again."""

    def __init__(self, iter_id: int, length: int, loc: Loc):
        super().__init__(iter_id, length)
        self.iter_id, self.length, self.loc = iter_id, length, loc


def unroll_loop(fn: Function, iter_id: int, length: int, loc: Loc) -> Function:
    """``fn`` with the loop whose GetIter result is ``iter_id`` (over a tuple of
    ``length`` items) unrolled."""
    for b in fn.blocks:
        for op in b.ops:
            if isinstance(op, GetIter) and op.result.id == iter_id:
                return _Unroller(fn, b, op, None, (), length=length).run()
    raise UnsupportedError("this loop over a tuple cannot be unrolled", loc)


def _defs(fn: Function) -> dict[int, Op]:
    return {op.result.id: op for b in fn.blocks for op in b.ops if op.result is not None}


def _find_loop(fn: Function):
    """(pre-header block, its GetIter, the literal_unroll Call) of the first such loop."""
    defs = _defs(fn)
    for b in fn.blocks:
        for op in b.ops:
            if not isinstance(op, GetIter):
                continue
            call = defs.get(op.obj.id)
            if not isinstance(call, Call):
                continue
            func = defs.get(call.func.id)
            if isinstance(func, Const) and is_literal_unroll(func.value):
                return b, op, call
    return None


def _items(fn: Function, call: Call, arg_types, defs) -> tuple[int, tuple | None]:
    """The tuple's length, and its items where they are constants."""
    if len(call.args) != 1 or call.kwargs:
        raise UnsupportedError("literal_unroll() takes one tuple", call.loc)
    tup = call.args[0]
    op = defs.get(tup.id)
    if isinstance(op, Const) and isinstance(op.value, tuple):
        return len(op.value), op.value
    if isinstance(op, BuildTuple):
        return len(op.items), None
    for p, t in zip(fn.args, arg_types, strict=False):
        if p.id == tup.id:
            t = t.base if isinstance(t, LiteralArg) else t
            if isinstance(t, Tuple):
                return len(t.items), None
    raise UnsupportedError(
        "literal_unroll() needs a tuple whose length is known when the kernel is "
        "compiled: a global or closure tuple, a tuple display or a tuple argument",
        call.loc,
    )


def _loop_header(fn: Function, pre: Block, getiter: GetIter) -> tuple[Block, int]:
    """The loop's header block and the index of its iterator parameter."""
    term = pre.term
    if isinstance(term, Jump) and getiter.result in term.args:
        header = fn.block(term.target)
        j = term.args.index(getiter.result)
        it = header.params[j]
        valid = [op for op in header.ops if isinstance(op, IterValid) and op.iter == it]
        if valid and isinstance(header.term, Branch) and header.term.cond == valid[0].result:
            return header, j
    raise UnsupportedError("literal_unroll() may only be the iterable of a for loop", getiter.loc)


def _region(fn: Function, header: Block) -> list[int]:
    """The loop body: blocks reached from the header's body edge without passing the
    header or its exit."""
    stop = {header.id, header.term.else_target}
    seen: list[int] = []
    stack = [header.term.then_target]
    while stack:
        bid = stack.pop()
        if bid in stop or bid in seen:
            continue
        seen.append(bid)
        stack.extend(target for target, _ in fn.block(bid).term.successors())
    return sorted(seen)


class _Unroller:
    """One literal_unroll loop of ``fn`` unrolled."""

    def __init__(self, fn, pre: Block, getiter: GetIter, call: Call | None, arg_types, length=0):
        self.fn, self.pre, self.getiter, self.call = fn, pre, getiter, call
        if call is None:  # a plain loop over a tuple: the item k is tup[k]
            self.n, self.consts, self.tup = length, None, getiter.obj
        else:
            self.n, self.consts = _items(fn, call, arg_types, _defs(fn))
            self.tup = call.args[0]
        self.header, self.it_index = _loop_header(fn, pre, getiter)
        self.region = _region(fn, self.header)
        self.exit = self.header.term.else_target
        self.next_value = fn.max_value_id() + 1
        self.next_block = max(b.id for b in fn.blocks) + 1
        self.inside = {self.header.id, *self.region}
        self.defined = self._defined()
        self.liveouts = self._liveouts()
        # copy k -> (block id map, value map); copy n is the exhausted header alone
        self.block_maps = [self._block_map(k) for k in range(self.n + 1)]
        self.value_maps = [self._value_map() for _ in range(self.n + 1)]
        self.exit_params = tuple(self._fresh() for _ in self.liveouts)

    def _fresh(self) -> Value:
        v = Value(self.next_value)
        self.next_value += 1
        return v

    def _block_map(self, k: int) -> dict[int, int]:
        ids = [self.header.id] + (self.region if k < self.n else [])
        out = {}
        for bid in ids:
            out[bid] = self.next_block
            self.next_block += 1
        return out

    def _defined(self) -> dict[int, int]:
        """Value id -> the block of the loop that defines it."""
        out = {}
        for bid in self.inside:
            b = self.fn.block(bid)
            out.update({p.id: bid for p in b.params})
            out.update({op.result.id: bid for op in b.ops if op.result is not None})
        return out

    def _value_map(self) -> dict[int, Value]:
        return {vid: self._fresh() for vid in sorted(self.defined)}

    def _liveouts(self) -> tuple[int, ...]:
        """The loop's values read after it (they become the exit's parameters)."""
        used = set()
        for b in self.fn.blocks:
            if b.id in self.inside:
                continue
            for op in (*b.ops, b.term):
                used.update(v.id for v in operands(op) if v.id in self.defined)
        out = tuple(sorted(used))
        if not out:
            return out
        preds = [
            b.id for b in self.fn.blocks if any(t == self.exit for t, _ in b.term.successors())
        ]
        body_defined = [v for v in out if self.defined[v] != self.header.id]
        if body_defined or any(p not in self.inside for p in preds):
            raise UnsupportedError(
                "this literal_unroll loop cannot be unrolled: code after it reads a "
                "value the loop computes; assign it to a variable before the loop",
                self.getiter.loc,
            )
        return out

    # -- rewriting ------------------------------------------------------------

    def run(self) -> Function:
        blocks: list[Block] = []
        for b in self.fn.blocks:
            if b.id == self.header.id:
                for k in range(self.n + 1):
                    blocks.extend(self._copy(k))
            elif b.id in self.inside:
                continue
            else:
                blocks.append(self._outside(b))
        names = list(self.fn.var_names)
        for vmap in self.value_maps:
            names += [(vmap[vid].id, name) for vid, name in self.fn.var_names if vid in vmap]
        return dataclasses.replace(self.fn, blocks=tuple(blocks), var_names=tuple(names))

    def _outside(self, b: Block) -> Block:
        """A block outside the loop: the pre-header enters copy 0, the exit takes the
        loop's values as new parameters, and reads of them use those."""
        rename = dict(zip(self.liveouts, self.exit_params, strict=True))

        def fix(v: Value) -> Value:
            return rename.get(v.id, v)

        ops = tuple(self._outside_op(op, fix) for op in b.ops)
        term = map_operands(b.term, fix)
        if b.id == self.pre.id:
            term = replace(term, target=self.block_maps[0][self.header.id])
        params = b.params + (self.exit_params if b.id == self.exit else ())
        return Block(b.id, params, ops, term)

    def _outside_op(self, op: Op, fix) -> Op:
        if op is self.getiter:  # the iterator is never read: a placeholder
            return Const(loc=op.loc, result=op.result, value=None)
        return map_operands(op, fix)

    def _copy(self, k: int) -> list[Block]:
        bmap, vmap = self.block_maps[k], self.value_maps[k]

        def fix(v: Value) -> Value:
            return vmap.get(v.id, v)

        out = []
        for bid in bmap:
            b = self.fn.block(bid)
            ops: list[Op] = []
            for op in b.ops:
                ops.extend(self._copy_op(op, k, fix))
            if bid == self.header.id:
                term = self._header_term(k, fix)
            else:
                term = self._retarget(map_operands(b.term, fix), k)
            out.append(Block(bmap[bid], tuple(fix(p) for p in b.params), tuple(ops), term))
        return out

    def _copy_op(self, op: Op, k: int, fix) -> list[Op]:
        it = self.header.params[self.it_index]
        is_step = isinstance(op, (IterValid, IterValue, IterNext)) and op.iter == it
        if not is_step:
            return [map_values(op, fix)]
        if isinstance(op, IterValid):
            return []  # the header of a copy always enters its body
        result = fix(op.result)
        if isinstance(op, IterNext):
            return [Const(loc=op.loc, result=result, value=None)]
        if self.consts is not None:
            return [Const(loc=op.loc, result=result, value=self.consts[k])]
        index = self._fresh()
        return [
            Const(loc=op.loc, result=index, value=k),
            GetItem(loc=op.loc, result=result, obj=self.tup, index=index),
        ]

    def _header_term(self, k: int, fix) -> Terminator:
        term = self.header.term
        loc: Loc = term.loc
        if k < self.n:
            target = self.block_maps[k][term.then_target]
            return Jump(loc=loc, target=target, args=tuple(fix(a) for a in term.then_args))
        args = tuple(fix(a) for a in term.else_args) + tuple(
            fix(Value(vid)) for vid in self.liveouts
        )
        return Jump(loc=loc, target=self.exit, args=args)

    def _retarget(self, term: Terminator, k: int) -> Terminator:
        """A body block's edges: within copy ``k``, to the next copy's header for the
        back edge, and to the exit with copy ``k``'s loop values."""
        bmap, vmap = self.block_maps[k], self.value_maps[k]
        extra = tuple(vmap[vid] for vid in self.liveouts)

        def edge(target: int, args: tuple) -> tuple[int, tuple]:
            if target == self.header.id:
                return self.block_maps[k + 1][target], args
            if target == self.exit:
                return target, args + extra
            return bmap.get(target, target), args

        if isinstance(term, Jump):
            target, args = edge(term.target, term.args)
            return replace(term, target=target, args=args)
        if isinstance(term, Branch):
            then_t, then_a = edge(term.then_target, term.then_args)
            else_t, else_a = edge(term.else_target, term.else_args)
            return replace(
                term, then_target=then_t, then_args=then_a, else_target=else_t, else_args=else_a
            )
        return term
