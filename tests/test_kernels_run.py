"""Run the end-to-end kernel set and compare with NumPy: on the CPU target everywhere
(CI included), and on the GPU where there is one (marked ``gpu``), from the same code.

Each case runs twice per target: with host arrays (on the GPU: copied in and back by
the launch) and with device arrays made by that target's ``to_device``.
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.targets.cpu import memory as cpu_memory

from kernels import CASES, check

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
_cpu_kernels: dict = {}


def kernel_for(case, target):
    if target == "cuda":
        return case.kernel, cuda.to_device, cuda.synchronize
    k = _cpu_kernels.get(case.name)
    if k is None:
        k = _cpu_kernels[case.name] = cuda.jit(case.kernel.py_func, target="cpu")
    return k, cpu_memory.to_device, cpu_memory.synchronize


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("where", ["host", "device"])
@pytest.mark.parametrize("target", TARGETS)
def test_kernel_matches_numpy(case, where, target):
    kernel, to_device, synchronize = kernel_for(case, target)
    rng = np.random.default_rng()
    args, grid, block, shmem = case.setup(rng)
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = case.reference(inputs)
    if where == "host":
        kernel[grid, block, 0, shmem](*args)
        got = {i: args[i] for i in expected}
    else:
        dargs = [to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        kernel[grid, block, 0, shmem](*dargs)
        synchronize()
        got = {i: dargs[i].copy_to_host() for i in expected}
    check(case, got, expected)


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
