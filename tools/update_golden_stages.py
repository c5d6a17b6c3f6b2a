"""Regenerate tests/golden/stages/ (typed IR, IR after passes, LLVM IR); review the diff."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "src"), os.path.join(HERE, "..", "tests")]

import golden_stages as gs  # noqa: E402

gs.ROOT.mkdir(parents=True, exist_ok=True)
for name in gs.KERNELS:
    out = gs.render(name)
    for stage in gs.STAGES:
        p = gs.path(name, stage)
        old = p.read_text() if p.exists() else None
        if old != out[stage]:
            p.write_text(out[stage])
            print("wrote", p)
