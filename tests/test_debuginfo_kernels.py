"""Every kernel of the end-to-end sets compiles to a cubin with line tables
(``lineinfo=True``) and with DWARF (``debug=True``): libNVVM verifies the debug
metadata (a call without a location, a variable of the wrong scope, a type it cannot
describe would be refused), and the PTX of each carries ``.loc`` lines of the kernel's
own file."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from kernels import CASES
from kernels_device import DEVICE_CASES
from kernels_types import TYPE_CASES

from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import typeof

ALL = CASES + DEVICE_CASES + TYPE_CASES


@pytest.mark.parametrize("level", ["lineinfo", "debug"])
@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
def test_compiles_with_debug_info(case, level):
    args, *_ = case.setup(np.random.default_rng(0))
    fn = case.kernel.py_func
    opts = Options(verify=True, **{level: True})
    r = compile_kernel(fn, tuple(typeof(a) for a in args), opts)
    assert r.cubin[:4] == b"\x7fELF"
    files = dict(re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', r.ptx, re.MULTILINE))
    mine = [
        k
        for k, v in files.items()
        if os.path.abspath(v) == os.path.abspath(fn.__code__.co_filename)
    ]
    assert mine, files
    assert re.search(rf"^\s*\.loc\s+{mine[0]}\s+[1-9]\d*\s", r.ptx, re.MULTILINE)
    has_dwarf = bool(re.search(r"\.section\s+\.debug_info", r.ptx))
    assert has_dwarf == (level == "debug")
