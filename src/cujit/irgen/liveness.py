"""Which Python locals are live on entry to each CFG block.

irgen gives a block one parameter per live-in local, so a local that is dead
at a merge point never becomes a parameter (and never needs an ``Undef``).
"""

from __future__ import annotations

from cujit.cfg import CFG


def live_in_locals(cfg: CFG) -> dict[int, frozenset[str]]:
    gen: dict[int, set[str]] = {}
    kill: dict[int, set[str]] = {}
    for b in cfg.blocks:
        g, k = set(), set()
        for ins in cfg.instrs(b):
            if ins.op == "LOAD_FAST" and ins.arg not in k:
                g.add(ins.arg)
            elif ins.op == "STORE_FAST":
                k.add(ins.arg)
        gen[b.id], kill[b.id] = g, k
    live = {b.id: frozenset() for b in cfg.blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(cfg.blocks):
            out = set().union(*(live[s] for s in b.succs))
            new = frozenset(gen[b.id] | (out - kill[b.id]))
            if new != live[b.id]:
                live[b.id], changed = new, True
    return live
