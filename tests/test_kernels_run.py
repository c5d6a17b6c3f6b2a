"""Run the end-to-end kernel set on the GPU and compare with NumPy (marked ``gpu``).

Each case runs twice: once with host arrays (copied in and back by the launch) and
once with device arrays made by ``cuda.to_device``.
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda

from kernels import CASES

pytestmark = pytest.mark.gpu


def check(case, got: dict, expected: dict):
    for idx, ref in expected.items():
        out = got[idx]
        ref = np.asarray(ref)
        assert out.shape == ref.shape, f"{case.name}: output {idx} shape"
        if ref.dtype.kind == "f" or out.dtype.kind == "f":
            assert not np.isnan(out).any() or np.isnan(ref).any(), f"{case.name}: unwritten"
            err = np.linalg.norm(out.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-300)
            assert err < case.rtol, f"{case.name}: output {idx} relative error {err:.3e}"
        else:
            np.testing.assert_array_equal(out, ref.astype(out.dtype), err_msg=case.name)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("where", ["host", "device"])
def test_kernel_matches_numpy(case, where):
    rng = np.random.default_rng()
    args, grid, block, shmem = case.setup(rng)
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = case.reference(inputs)
    if where == "host":
        case.kernel[grid, block, 0, shmem](*args)
        got = {i: args[i] for i in expected}
    else:
        dargs = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        case.kernel[grid, block, 0, shmem](*dargs)
        cuda.synchronize()
        got = {i: dargs[i].copy_to_host() for i in expected}
    check(case, got, expected)


def test_strided_device_view():
    @cuda.jit
    def double_it(v):
        i = cuda.grid(1)
        if i < v.size:
            v[i] = v[i] * 2

    host = np.random.default_rng().standard_normal(1000)
    d = cuda.to_device(host)
    view = d[100:900:3]
    double_it[4, 256](view)
    got = d.copy_to_host()
    expected = host.copy()
    expected[100:900:3] *= 2
    np.testing.assert_array_equal(got, expected)
