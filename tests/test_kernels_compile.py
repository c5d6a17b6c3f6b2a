"""Every kernel of the end-to-end set compiles through all seven stages to PTX and
links to a cubin, for sm_90 and an older arch (no GPU needed)."""

from __future__ import annotations

import numpy as np
import pytest
from kernels import CASES

from cujit.options import Options
from cujit.pipeline import STAGES, compile_kernel
from cujit.types import typeof

ELF_MAGIC = b"\x7fELF"


def arg_types_of(case):
    args, *_ = case.setup(np.random.default_rng(0))
    return tuple(typeof(a) for a in args)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("arch", [(9, 0), (8, 0)], ids=["sm_90", "sm_80"])
def test_compiles_to_cubin(case, arch):
    result = compile_kernel(
        case.kernel.py_func, arg_types_of(case), Options(arch=arch, verify=True)
    )
    assert list(result.outputs)[: len(STAGES)] == list(STAGES)
    major, minor = arch
    assert f".target sm_{major}{minor}" in result.ptx
    assert f".entry {result.symbol}" in result.ptx
    assert result.cubin[:4] == ELF_MAGIC


FEATURES = {
    # kernel name -> PTX text that must appear (the feature reached the machine code)
    "matmul_shared_tiles": ["bar.sync", ".shared"],
    "reduce_shared_atomic": ["bar.sync", "atom.global.add.f32"],
    "histogram_atomics": ["atom.global.add.u32", "atom.global.add.u64"],
    "dynamic_shared_reverse": [".extern .shared"],
    "math_functions": ["sqrt.rn.f64"],
    "grid_3d": ["%ctaid.z", "%tid.z"],
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_ptx_features(name):
    case = next(c for c in CASES if c.name == name)
    ptx = compile_kernel(case.kernel.py_func, arg_types_of(case), stop_after="ptx").ptx
    for needle in FEATURES[name]:
        assert needle in ptx, f"{needle!r} missing from the PTX of {name}"
