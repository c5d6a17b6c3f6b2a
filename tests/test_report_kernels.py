"""The report works for every kernel of the end-to-end set (tests/kernels.py).

Each kernel is compiled through every stage once and its report checked for what
must hold of any kernel: every stage present, every mapped line a line of the
kernel's own source, the PTX linked to at least one Python line, the linker's
register count read, and the page self-contained.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from kernels import CASES

from cujit.report.html import render_html
from cujit.report.model import build_report
from cujit.types import typeof

STAGES = ["bytecode", "cfg", "ir", "typed", "passes", "llvm", "ptx", "sass"]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_report_of_every_kernel(case):
    args, *_ = case.setup(np.random.default_rng(0))
    # The SASS is left out: disassembling is slow, and test_report.py checks it.
    rep = build_report(case.kernel, tuple(typeof(a) for a in args), disassemble=False)
    assert [s.name for s in rep.stages] == STAGES
    views = {s.name: s for s in rep.stages}
    source = {n for n, _ in rep.source}
    for name in STAGES[:-1]:
        assert views[name].lines, name
        assert views[name].python_lines() <= source, name
    # The PTX's .loc lines come from the LLVM IR's locations, which come from the
    # optimised IR's ops (and the prologue, at the def line): each stage names no
    # line the one before it lacks.
    def_line = next(n for n, text in rep.source if text.lstrip().startswith("def "))
    assert views["ptx"].python_lines(), "no PTX line names a Python line"
    assert views["ptx"].python_lines() <= views["llvm"].python_lines()
    assert views["llvm"].python_lines() <= views["passes"].python_lines() | {def_line}
    assert rep.resources is not None and rep.resources.registers > 0
    assert len(rep.occupancy) == 5 and all(0 <= o.occupancy <= 1 for o in rep.occupancy)
    page = render_html(rep)
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    for name in STAGES:
        assert f'id="stage-{name}"' in page
