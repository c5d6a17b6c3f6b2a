"""Stage 2: split a decoded function into basic blocks.

The CFG records, for each block, its instruction range, its successors (the
fall-through ``next`` and the jump ``target`` of its last instruction), its
predecessors, the operand-stack depth on entry, and whether it is a loop
header (the target of a back edge).  Unreachable code is dropped; block ids
follow instruction order and block 0 starts at instruction 0.
"""

from __future__ import annotations

from cujit.bytecode import Bytecode, Instr, format_instr
from cujit.cfg.stack import stack_effect
from cujit.frozen import frozen


class CFGError(Exception):
    """Bytecode whose stack depths disagree: a bug in stage 1, never the user's."""


@frozen
class BasicBlock:
    """A run of bytecode instructions with one entry and one exit."""

    id: int
    start: int  # first instruction index
    end: int  # one past the last
    depth: int  # operand-stack depth on entry
    next: int | None  # successor when the last instruction does not jump
    target: int | None  # successor when it jumps
    preds: tuple[int, ...]  # distinct predecessor ids, ascending
    loop_header: bool

    @property
    def succs(self) -> tuple[int, ...]:
        out = [s for s in (self.next, self.target) if s is not None]
        return tuple(dict.fromkeys(out))


@frozen
class CFG:
    """A function's basic blocks in bytecode order, from its decoded bytecode."""

    bytecode: Bytecode
    blocks: tuple[BasicBlock, ...]

    def instrs(self, block: BasicBlock) -> tuple[Instr, ...]:
        return self.bytecode.instrs[block.start : block.end]


def _leaders(instrs: tuple[Instr, ...]) -> list[int]:
    leaders = {0}
    for i, ins in enumerate(instrs):
        if ins.is_jump:
            leaders.add(ins.arg)
        if ins.ends_block and i + 1 < len(instrs):
            leaders.add(i + 1)
    return sorted(leaders)


def _edges(instrs, start: int, end: int) -> tuple[int | None, int | None]:
    """(fall-through start index, jump start index) of the block [start, end)."""
    last = instrs[end - 1]
    nxt = None if last.op in ("JUMP", "RETURN", "RAISE") or end >= len(instrs) else end
    return nxt, (last.arg if last.is_jump else None)


def _depths(instrs, ranges: dict[int, int]) -> dict[int, int]:
    """Stack depth at each reachable block start (a worklist from the entry)."""
    depth = {0: 0}
    work = [0]
    while work:
        start = work.pop()
        end, d = ranges[start], depth[start]
        for ins in instrs[start : end - 1]:
            d += stack_effect(ins, jump=False)
        nxt, tgt = _edges(instrs, start, end)
        last = instrs[end - 1]
        for succ, jump in ((nxt, False), (tgt, True)):
            if succ is None:
                continue
            sd = d + stack_effect(last, jump=jump)
            if sd < 0:
                raise CFGError(f"stack underflow at instruction {end - 1}")
            if succ not in depth:
                depth[succ] = sd
                work.append(succ)
            elif depth[succ] != sd:
                raise CFGError(f"stack depth {depth[succ]} != {sd} at instruction {succ}")
    return depth


def _back_edges(succs: dict[int, tuple[int, ...]]) -> set[tuple[int, int]]:
    """Edges into a block still on the DFS stack (the code is reducible)."""
    out, state = set(), {}
    stack = [(0, iter(succs[0]))]
    state[0] = "open"
    while stack:
        node, it = stack[-1]
        for s in it:
            if state.get(s) == "open":
                out.add((node, s))
            elif s not in state:
                state[s] = "open"
                stack.append((s, iter(succs[s])))
                break
        else:
            state[node] = "done"
            stack.pop()
    return out


def build_cfg(bc: Bytecode) -> CFG:
    """Basic blocks, edges, entry stack depths and loop headers of ``bc``."""
    instrs = bc.instrs
    leaders = _leaders(instrs)
    ranges = dict(zip(leaders, [*leaders[1:], len(instrs)], strict=True))
    depth = _depths(instrs, ranges)
    starts = sorted(depth)  # reachable blocks only
    bid = {s: i for i, s in enumerate(starts)}
    edges = {
        bid[s]: tuple(bid[x] if x is not None else None for x in _edges(instrs, s, ranges[s]))
        for s in starts
    }
    succs = {b: tuple(dict.fromkeys(x for x in e if x is not None)) for b, e in edges.items()}
    back = _back_edges(succs)
    preds: dict[int, set[int]] = {b: set() for b in succs}
    for b, ss in succs.items():
        for s in ss:
            preds[s].add(b)
    headers = {t for _, t in back}
    blocks = tuple(
        BasicBlock(
            id=bid[s],
            start=s,
            end=ranges[s],
            depth=depth[s],
            next=edges[bid[s]][0],
            target=edges[bid[s]][1],
            preds=tuple(sorted(preds[bid[s]])),
            loop_header=bid[s] in headers,
        )
        for s in starts
    )
    return CFG(bc, blocks)


def format_cfg(cfg: CFG) -> str:
    """The deterministic CFG listing used by golden tests and ``--emit=cfg``."""
    lines = [f"cfg {cfg.bytecode.name}"]
    for b in cfg.blocks:
        head = f"block{b.id}: depth={b.depth}"
        if b.loop_header:
            head += " loop-header"
        if b.preds:
            head += " preds=" + ",".join(f"block{p}" for p in b.preds)
        lines.append(head)
        lines += ["  " + format_instr(i, cfg.bytecode.instrs[i]) for i in range(b.start, b.end)]
        out = []
        if b.next is not None:
            out.append(f"next=block{b.next}")
        if b.target is not None:
            out.append(f"target=block{b.target}")
        lines.append("  => " + (" ".join(out) if out else "exit"))
    return "\n".join(lines) + "\n"
