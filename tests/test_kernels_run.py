"""Run the end-to-end kernel set and compare with NumPy: on the CPU target everywhere
(CI included), and on the GPU where there is one (marked ``gpu``), from the same code.

Each case runs twice per target: with host arrays (on the GPU: copied in and back by
the launch) and with device arrays made by that target's ``to_device``.
"""

from __future__ import annotations

import numpy as np
import pytest
from kernels import CASES, run_case

from cujit import cuda
from cujit.targets.cpu import memory as cpu_memory

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("where", ["host", "device"])
@pytest.mark.parametrize("target", TARGETS)
def test_kernel_matches_numpy(case, where, target):
    run_case(case, where, target, np.random.default_rng())


@pytest.mark.parametrize("target", TARGETS)
def test_strided_device_view(target):
    @cuda.jit(target=target)
    def double_it(v):
        i = cuda.grid(1)
        if i < v.size:
            v[i] = v[i] * 2

    to_device = cuda.to_device if target == "cuda" else cpu_memory.to_device
    host = np.random.default_rng().standard_normal(1000)
    d = to_device(host)
    view = d[100:900:3]
    double_it[4, 256](view)
    got = d.copy_to_host()
    expected = host.copy()
    expected[100:900:3] *= 2
    np.testing.assert_array_equal(got, expected)
