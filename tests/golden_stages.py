"""Golden outputs of stages 4-6 (typed IR, IR after passes, LLVM IR) for a few
kernels of the end-to-end set; shared by tests/test_golden_stages.py and
tools/update_golden_stages.py.  Stages 1-3 have their own goldens under
tests/golden/frontend/; PTX is checked by feature (it varies with libNVVM).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from kernels import CASES

from cujit.ir import format_function
from cujit.pipeline import compile_kernel
from cujit.types import typeof

ROOT = (
    Path(__file__).resolve().parent
    / "golden"
    / "stages"
    / f"{sys.version_info[0]}.{sys.version_info[1]}"
)
KERNELS = (
    "saxpy",
    "python_int_semantics",
    "loops_break_continue",
    "matmul_shared_tiles",
    "reduce_shared_atomic",
    "tuple_swap",
)
STAGES = ("typed", "passes", "llvm")


def render(name: str) -> dict[str, str]:
    case = next(c for c in CASES if c.name == name)
    args, *_ = case.setup(np.random.default_rng(0))
    result = compile_kernel(case.kernel.py_func, tuple(typeof(a) for a in args), stop_after="llvm")
    return {
        "typed": format_function(result.outputs["typed"]),
        "passes": format_function(result.outputs["passes"]),
        "llvm": result.outputs["llvm"],
    }


def path(name: str, stage: str) -> Path:
    return ROOT / f"{name}.{stage}"
