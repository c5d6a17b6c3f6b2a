"""Stage 3 driver: walk the CFG in reverse post-order and build SSA blocks.

The abstract state of a block is its Python locals and its operand stack,
both holding SSA values.  A block with one predecessor inherits that
predecessor's exit state directly; a merge block (several predecessors, or
the first bytecode block when a loop jumps back to it) takes one parameter
per live-in local and one per stack slot, and every edge passes arguments.
``simplify.clean_up`` then drops parameters that carry a single value.

    x = 0                       block0(%0 n):
    while x < n:                  %1 = const 0 ...   jump block1(%1)
        x += 1                  block1(%2):  <- x is a parameter of the loop header
"""

from __future__ import annotations

from dataclasses import field

from cujit.cfg import CFG
from cujit.diagnostics import Loc
from cujit.frozen import mutable
from cujit.ir import Block, Function, Jump, Op, Terminator, Undef, Value
from cujit.irgen.liveness import live_in_locals
from cujit.irgen.simplify import clean_up


@mutable
class State:
    """Python locals (None: unassigned) and the operand stack, as SSA values."""

    locals: dict[str, Value | None]
    stack: list[Value]

    def copy(self) -> "State":
        return State(dict(self.locals), list(self.stack))

    def pop(self) -> Value:
        return self.stack.pop()

    def push(self, v: Value) -> None:
        self.stack.append(v)


@mutable
class BlockBuf:
    """An IR block under construction."""

    id: int
    params: tuple[Value, ...] = ()
    ops: list[Op] = field(default_factory=list)
    term: Terminator | None = None


class IRBuilder:
    def __init__(self, cfg: CFG):
        self.cfg = cfg
        self.bc = cfg.bytecode
        self._next_value = 0
        self.defs: dict[int, Op] = {}
        self.live = live_in_locals(cfg)
        entry = cfg.blocks[0]
        # A loop back to instruction 0 needs an entry block of its own: the
        # entry's params must be exactly the arguments.
        self.shift = 1 if entry.preds else 0
        self.bufs: dict[int, BlockBuf] = {}
        self._params: dict[int, tuple[Value, ...]] = {}
        self._entry_state: dict[int, State] = {}
        self._entry_ops: dict[int, list[Op]] = {}
        self._undefs: dict[tuple[int, str], Value] = {}
        self.var_names: dict[tuple[int, str], None] = {}  # (value id, name): Function.var_names
        self._next_block = len(cfg.blocks) + self.shift
        self.cur: BlockBuf | None = None

    # -- values and ops ---------------------------------------------------
    def value(self) -> Value:
        self._next_value += 1
        return Value(self._next_value - 1)

    def make(self, cls, loc: Loc, **fields) -> Op:
        """An op with a fresh result, not yet placed in a block."""
        op = cls(loc=loc, result=self.value(), **fields)
        self.defs[op.result.id] = op
        return op

    def emit(self, cls, loc: Loc, **fields) -> Value:
        op = self.make(cls, loc, **fields)
        self.cur.ops.append(op)
        return op.result

    # -- blocks and edges -------------------------------------------------
    def ir_id(self, cfg_id: int) -> int:
        return cfg_id + self.shift

    def is_merge(self, cfg_id: int) -> bool:
        preds = self.cfg.blocks[cfg_id].preds
        return len(preds) > 1 or (cfg_id == 0 and bool(preds))

    def _layout(self, cfg_id: int) -> list[str]:
        live = self.live[cfg_id]
        return [n for n in self.bc.local_names if n in live]

    def params(self, cfg_id: int) -> tuple[Value, ...]:
        if cfg_id not in self._params:
            n = len(self._layout(cfg_id)) + self.cfg.blocks[cfg_id].depth
            self._params[cfg_id] = tuple(self.value() for _ in range(n))
        return self._params[cfg_id]

    def local(self, src: BlockBuf, state: State, name: str, loc: Loc) -> Value:
        v = state.locals.get(name)
        if v is not None:
            return v
        key = (src.id, name)
        if key not in self._undefs:
            op = self.make(Undef, loc, name=name)
            src.ops.append(op)
            self._undefs[key] = op.result
        return self._undefs[key]

    def edge(
        self, src: BlockBuf, state: State, target: int, loc: Loc, extra_ops: tuple[Op, ...] = ()
    ) -> tuple[int, tuple[Value, ...]]:
        """Leave ``src`` for CFG block ``target`` with ``state``: (IR block id, args).
        ``extra_ops`` must run on this edge only (the values a FOR_ITER pushes)."""
        if not self.is_merge(target):
            self._entry_state[target] = state.copy()
            self._entry_ops[target] = list(extra_ops)
            return self.ir_id(target), ()
        if extra_ops:
            eb = BlockBuf(self._next_block, ops=list(extra_ops))
            self._next_block += 1
            self.bufs[eb.id] = eb
            tid, args = self.edge(eb, state, target, loc)
            eb.term = Jump(loc=loc, target=tid, args=args)
            return eb.id, ()
        args = [self.local(src, state, n, loc) for n in self._layout(target)]
        return self.ir_id(target), (*args, *state.stack)

    def _merge_state(self, cfg_id: int) -> State:
        names = self._layout(cfg_id)
        ps = self.params(cfg_id)
        locs: dict[str, Value | None] = dict.fromkeys(self.bc.local_names)
        # ps holds the locals' parameters, then the stack's: the locals are the first ones.
        local_ps = ps[: len(names)]
        locs.update(zip(names, local_ps, strict=True))
        self.var_names.update(((p.id, n), None) for n, p in zip(names, local_ps, strict=True))
        return State(locs, list(ps[len(names) :]))

    def _rpo(self) -> list[int]:
        seen, order = set(), []
        stack = [(0, iter(self.cfg.blocks[0].succs))]
        seen.add(0)
        while stack:
            node, it = stack[-1]
            for s in it:
                if s not in seen:
                    seen.add(s)
                    stack.append((s, iter(self.cfg.blocks[s].succs)))
                    break
            else:
                order.append(node)
                stack.pop()
        return order[::-1]

    # -- driver -----------------------------------------------------------
    def build(self) -> Function:
        from cujit.irgen.instructions import translate_block

        bc = self.bc
        args = tuple(self.value() for _ in bc.arg_names)
        start = State(dict.fromkeys(bc.local_names), [])
        start.locals.update(zip(bc.arg_names, args, strict=True))
        if self.shift:
            entry = BlockBuf(0, params=args)
            self.bufs[0] = entry
            tid, eargs = self.edge(entry, start, 0, bc.loc)
            entry.term = Jump(loc=bc.loc, target=tid, args=eargs)
        else:
            self._entry_state[0] = start
        for cfg_id in self._rpo():
            if self.is_merge(cfg_id):
                state, params = self._merge_state(cfg_id), self.params(cfg_id)
            else:
                state, params = self._entry_state[cfg_id], ()
                if cfg_id == 0:
                    params = args
            buf = BlockBuf(self.ir_id(cfg_id), params=params, ops=self._entry_ops.get(cfg_id, []))
            self.bufs[buf.id] = buf
            self.cur = buf
            translate_block(self, self.cfg.blocks[cfg_id], state)
        blocks = tuple(
            Block(b.id, tuple(b.params), tuple(b.ops), b.term) for _, b in sorted(self.bufs.items())
        )
        blocks, var_names = clean_up(blocks, tuple(self.var_names))
        return Function(
            name=bc.name, arg_names=bc.arg_names, blocks=blocks, loc=bc.loc, var_names=var_names
        )
