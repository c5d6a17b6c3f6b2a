"""The coarsened variant of a kernel independent per index (docs/coarsening.md).

Each thread ``t`` runs the k consecutive indices ``base = t * k, ..., base + k - 1``.
When the last of them passes every bounds check (they are upper bounds, so all do), the
per-index work runs once for all k lanes: each access at ``i`` becomes one wide access
(``wide.load``/``wide.store``, 16 bytes aligned), the rest is repeated per lane, op by
op.  Otherwise a scalar tail runs the lanes one after the other, each with the kernel's
own checks::

    func saxpy(out, a, x, y, n)                  func saxpy(out, a, x, y, n)
      i = cuda.grid(1)                             base = cuda.grid(1) * 4
      if i < n:                        ->          if base + 3 < n:
        out[i] = a * x[i] + y[i]                     (x0..x3) = wide.load(x, base) ...
                                                     wide.store(out, base, r0, r1, r2, r3)
                                                   else: for j in 0..3 (unrolled):
                                                     if base + j < n: out[..] = ...

Running lane j's ops before lane j+1's (op by op) instead of lane after lane is the
same program: lanes touch different elements, an array stored into is read at ``i``
only, and arrays that partly overlap make the kernel as written a race between its
threads already.  The launch shrinks the grid k-fold (``cujit/coarsen.py``).
"""

from __future__ import annotations

import dataclasses
from collections import ChainMap

from cujit import ir, types
from cujit.ir.independence import Verdict, analyse
from cujit.types import Tuple, int64


def coarsen_kernel(fn: ir.Function, width: int) -> ir.Function:
    """``fn`` rewritten to run ``width`` consecutive indices per thread."""
    verdict = analyse(fn)
    if not verdict.ok or verdict.width != width:
        raise AssertionError(f"coarsening {fn.name} by {width}: {verdict.describe()}")
    return _Builder(fn, verdict).build()


class _Builder:
    def __init__(self, fn: ir.Function, v: Verdict):
        self.fn, self.v, self.k = fn, v, v.width
        self.next_id = fn.max_value_id() + 1
        self.offset = dict(v.offsets)
        self.blocks: list[ir.Block] = []
        chain = [b for b, _ in v.steps] + [v.body]
        self.chain = [fn.block(b) for b in chain]
        self.varying = _varying(self.chain, v)
        self.go_on = dict(v.steps)

    def fresh(self, t) -> ir.Value:
        self.next_id += 1
        return ir.Value(self.next_id, t)

    def build(self) -> ir.Function:
        m = len(self.chain)
        fast = list(range(m))
        tail = [[m + j * m + s for s in range(m)] for j in range(self.k)]
        ret = m + self.k * m
        entry, lanes = self._entry_ops()
        self._wide_copy(fast, tail[0][0], entry, lanes)
        for j in range(self.k):
            after = tail[j + 1][0] if j + 1 < self.k else ret
            self._scalar_copy(tail[j], ret, after, lanes[j])
        self.blocks.append(ir.Block(ret, (), (), ir.Return(loc=self.fn.loc)))
        self.blocks.sort(key=lambda b: b.id)
        return dataclasses.replace(self.fn, blocks=tuple(self.blocks), var_names=())

    def _entry_ops(self) -> tuple[list[ir.Op], list[ir.Value]]:
        loc = self.fn.loc
        t, kc, base = self.fresh(int64), self.fresh(int64), self.fresh(int64)
        ops: list[ir.Op] = [
            ir.Intrinsic(loc=loc, result=t, name="cuda.grid", args=(), attrs=(("ndim", 1),)),
            ir.Const(loc=loc, result=kc, value=self.k),
            ir.BinOp(loc=loc, result=base, op="*", lhs=t, rhs=kc),
        ]
        self.base = base
        lanes = [base]
        for j in range(1, self.k):
            c, lane = self.fresh(int64), self.fresh(int64)
            ops += [
                ir.Const(loc=loc, result=c, value=j),
                ir.BinOp(loc=loc, result=lane, op="+", lhs=base, rhs=c),
            ]
            lanes.append(lane)
        return ops, lanes

    def emit(self, op: ir.Op, env) -> ir.Op:
        new = ir.map_operands(op, lambda v: env.get(v.id, v))
        if op.result is not None:
            res = self.fresh(op.result.type)
            env[op.result.id] = res
            new = ir.replace(new, result=res)
        return new

    def _skip(self, op: ir.Op) -> bool:
        rid = op.result.id if op.result is not None else None
        return rid is not None and (rid in self.v.aux or rid in self.v.index)

    def _branch(self, term: ir.Branch, env, go_on: int, exit_to: int) -> ir.Branch:
        cont = self.go_on[self._current.id]
        targets = {cont: go_on}
        other = term.else_target if term.then_target == cont else term.then_target
        targets[other] = exit_to
        return ir.Branch(
            loc=term.loc,
            cond=env[term.cond.id],
            then_target=targets[term.then_target],
            else_target=targets[term.else_target],
        )

    # -- all k lanes at once ------------------------------------------------
    def _wide_copy(self, ids: list[int], tail: int, entry: list[ir.Op], lanes) -> None:
        shared: dict = {}
        per_lane = [{i: lane for i in self.v.index} for lane in lanes]
        last = {i: lanes[-1] for i in self.v.index}
        for s, block in enumerate(self.chain):
            self._current = block
            ops = entry if s == 0 else []
            for op in block.ops:
                if not self._skip(op):
                    ops.extend(self._wide_op(op, shared, per_lane, last))
            if s + 1 < len(self.chain):
                term = self._branch(block.term, shared, ids[s + 1], tail)
            else:
                term = ir.Return(loc=block.term.loc)
            self.blocks.append(ir.Block(ids[s], self.fn.args if s == 0 else (), tuple(ops), term))

    def _wide_op(self, op: ir.Op, shared: dict, per_lane: list, last: dict) -> list[ir.Op]:
        if op.result is not None and op.result.id in self.v.guards:
            return [self.emit(op, ChainMap(shared, last))]  # the last lane in: all are
        wide = self._wide_access(op, shared, per_lane)
        if wide is not None:
            return wide
        if not self._is_varying(op):
            return [self.emit(op, shared)]
        return [self.emit(op, ChainMap(env, shared)) for env in per_lane]

    def _wide_access(self, op: ir.Op, shared: dict, per_lane: list) -> list[ir.Op] | None:
        if not isinstance(op, (ir.GetItem, ir.SetItem)) or self.offset[op.index.id] != 0:
            return None
        arr = shared.get(op.obj.id, op.obj)
        if isinstance(op, ir.SetItem):
            values = tuple(ChainMap(env, shared).get(op.value.id, op.value) for env in per_lane)
            none = self.fresh(types.none)
            return [
                ir.Intrinsic(
                    loc=op.loc, result=none, name="wide.store", args=(arr, self.base, *values)
                )
            ]
        dtype = op.result.type
        vec = self.fresh(Tuple((dtype,) * self.k))
        out: list[ir.Op] = [
            ir.Intrinsic(loc=op.loc, result=vec, name="wide.load", args=(arr, self.base))
        ]
        for j, env in enumerate(per_lane):
            lane = self.fresh(dtype)
            env[op.result.id] = lane
            out.append(ir.TupleGet(loc=op.loc, result=lane, tuple=vec, index=j))
        return out

    def _is_varying(self, op: ir.Op) -> bool:
        return any(v.id in self.varying for v in ir.operands(op))

    # -- one lane, as the kernel was written --------------------------------
    def _scalar_copy(self, ids: list[int], exit_to: int, after: int, lane: ir.Value) -> None:
        env = {i: lane for i in self.v.index}
        for s, block in enumerate(self.chain):
            self._current = block
            ops = [self.emit(op, env) for op in block.ops if not self._skip(op)]
            if s + 1 < len(self.chain):
                term = self._branch(block.term, env, ids[s + 1], exit_to)
            else:
                term = ir.Jump(loc=block.term.loc, target=after)
            self.blocks.append(ir.Block(ids[s], (), tuple(ops), term))


def _varying(chain: list[ir.Block], v: Verdict) -> set[int]:
    """The values that differ between indices: ``i + c`` and what depends on them or
    on a load at them."""
    varying = {vid for vid, _ in v.offsets}
    for op in (op for block in chain for op in block.ops):
        if op.result is None:
            continue
        if isinstance(op, ir.GetItem) or any(x.id in varying for x in ir.operands(op)):
            varying.add(op.result.id)
    return varying
