"""Stage 2: build_cfg() splits instructions into blocks with edges, entry
stack depths and loop headers."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "golden", "frontend"))

import cases  # noqa: E402
import render  # noqa: E402

from cujit.bytecode import decode  # noqa: E402
from cujit.cfg import build_cfg  # noqa: E402


@pytest.mark.parametrize("fn", render.all_cases(), ids=lambda f: f.__name__)
def test_golden_cfg(fn):
    path = render.golden_path(fn.__name__, "cfg")
    assert render.same_listing(render.render(fn)["cfg"], path.read_text()), (
        f"{path} is stale: run tools/update_golden_frontend.py and review the diff"
    )


@pytest.mark.parametrize("fn", render.all_cases(), ids=lambda f: f.__name__)
def test_structure(fn):
    cfg = build_cfg(decode(fn))
    blocks = cfg.blocks
    assert blocks[0].start == 0 and blocks[0].depth == 0
    assert [b.id for b in blocks] == list(range(len(blocks)))
    starts = [b.start for b in blocks]
    assert starts == sorted(starts)
    for b in blocks:
        assert b.start < b.end
        # only the last instruction may end a block
        assert not any(i.ends_block for i in cfg.instrs(b)[:-1])
        for s in b.succs:
            assert b.id in blocks[s].preds
        for p in b.preds:
            assert b.id in blocks[p].succs
        if b.target is not None:
            assert blocks[b.target].start == cfg.instrs(b)[-1].arg


def test_for_loop_header_holds_the_iterator():
    cfg = build_cfg(decode(cases.nested_loops))
    headers = [b for b in cfg.blocks if b.loop_header]
    assert len(headers) == 2
    # outer loop: iterator on the stack; inner loop: both iterators
    assert [h.depth for h in headers] == [1, 2]
    for h in headers:
        assert cfg.instrs(h)[-1].op == "FOR_ITER"
        body, exit_ = cfg.blocks[h.next], cfg.blocks[h.target]
        assert body.depth == h.depth + 1  # the value is pushed
        assert exit_.depth == h.depth - 1  # the iterator is popped


def test_while_loop_back_edges():
    cfg = build_cfg(decode(cases.while_break_continue))
    headers = [b for b in cfg.blocks if b.loop_header]
    assert headers
    for h in headers:
        # a header has a predecessor that comes later in instruction order
        assert any(cfg.blocks[p].start >= h.start for p in h.preds)
    assert all(b.depth == 0 for b in cfg.blocks)


def test_loop_at_entry():
    def spin(n):
        while True:
            n += 1

    cfg = build_cfg(decode(spin))
    assert cfg.blocks[0].loop_header
    assert cfg.blocks[0].id in cfg.blocks[-1].succs


def test_short_circuit_value_crosses_blocks():
    cfg = build_cfg(decode(cases.and_or_not))
    # the value of `a and b` (or of `... or not c`) is on the stack at a merge
    assert any(b.depth == 1 and len(b.preds) > 1 for b in cfg.blocks)
