"""Kernels built with line tables or DWARF run on the GPU and compute what their
release builds compute (the debug build at -O0): checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda

pytestmark = pytest.mark.gpu


def scale(x, out, a):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * a


def nested(depth1, depth2, out):
    acc = 0
    for i in range(depth1):
        for j in range(depth2):
            acc += i + j
    out[0] = acc


@pytest.mark.parametrize("flags", [{"lineinfo": True}, {"debug": True}])
def test_scale_runs(flags):
    rng = np.random.default_rng()
    x = rng.standard_normal(1000).astype(np.float32)
    out = np.full_like(x, np.nan)
    cuda.jit(**flags)(scale)[4, 256](x, out, np.float32(1.75))
    ref = x.astype(np.float64) * 1.75
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-6


@pytest.mark.parametrize("flags", [{"lineinfo": True}, {"debug": True}])
def test_nested_loops_run(flags):
    out = np.full(1, -1, np.int64)
    cuda.jit(**flags)(nested)[1, 1](np.int32(7), np.int32(5), out)
    # sum over i<7, j<5 of i + j = 5 * (0+...+6) + 7 * (0+...+4) = 105 + 70
    assert out[0] == 5 * 21 + 7 * 10
