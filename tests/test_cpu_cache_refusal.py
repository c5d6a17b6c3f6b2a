"""``cache=True`` on the CPU target refuses what the CUDA target refuses: a kernel that
uses a global device array (an UncacheableKernel, which is a PicklingError, as
numba's)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

from cujit import cuda
from cujit.targets.cpu import memory  # the CPU target's device arrays


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))  # entries kept out of the tree


def _jit(fn, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about
        return cuda.jit(fn, target="cpu", **options)


def test_global_device_array_refuses_cache_true():
    table = memory.to_device(np.array([1.0, 2.0, 3.0], dtype=np.float32))

    def doubled(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = table[i] * 2.0

    out = memory.device_array(3, dtype=np.float32)
    with pytest.raises(pickle.PicklingError, match="global device arrays"):
        _jit(doubled, cache=True)[1, 3](out)
    # without cache=True the same kernel runs, reading the array it captured
    _jit(doubled)[1, 3](out)
    np.testing.assert_array_equal(out.copy_to_host(), [2.0, 4.0, 6.0])


def test_cacheable_kernel_still_runs_with_cache_true():
    def tripled(out, x):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] * 3.0

    x = np.linspace(-1.0, 1.0, 5).astype(np.float32)
    out = np.full(5, np.nan, dtype=np.float32)
    _jit(tripled, cache=True)[1, 5](out, x)
    np.testing.assert_allclose(out, x * 3.0, rtol=1e-6)
