"""Run the device-API kernel set (kernels_device.py) on the GPU (marked ``gpu``) and, where
the CPU target lowers every function a case calls, on the CPU target; compare with the
NumPy/Python references.

The check is test_kernels_gpu.py's, extended for outputs that hold NaNs on purpose
(the atomic max/min cases): NaN positions must match exactly, and the remaining
values compare within the case's relative norm tolerance (exactly when it is 0).
"""

from __future__ import annotations

import numpy as np
import pytest
from kernels import run_case
from kernels_device import DEVICE_CASES

CASES = [pytest.param(c, "cuda", id=f"{c.name}-cuda", marks=pytest.mark.gpu) for c in DEVICE_CASES]
CASES += [pytest.param(c, "cpu", id=f"{c.name}-cpu") for c in DEVICE_CASES]


def check(case, got: dict, expected: dict):
    for idx, ref in expected.items():
        out = got[idx]
        ref = np.asarray(ref)
        assert out.shape == ref.shape, f"{case.name}: output {idx} shape"
        if ref.dtype.kind == "f" or out.dtype.kind == "f":
            nan = np.isnan(ref)
            assert np.array_equal(np.isnan(out), nan), (
                f"{case.name}: output {idx} NaNs (unwritten, or NaN semantics)"
            )
            o, r = out[~nan].astype(np.float64), ref[~nan].astype(np.float64)
            err = np.linalg.norm(o - r) / max(np.linalg.norm(r), 1e-300)
            assert err <= case.rtol, f"{case.name}: output {idx} relative error {err:.3e}"
        else:
            np.testing.assert_array_equal(out, ref.astype(out.dtype), err_msg=case.name)


@pytest.mark.parametrize("case,target", CASES)
@pytest.mark.parametrize("where", ["host", "device"])
def test_device_api_matches_numpy(case, target, where):
    run_case(case, where, target, np.random.default_rng(), compare=check)
