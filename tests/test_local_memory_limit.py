"""A cuda.local.array past the 512 KiB a thread's local memory may hold is refused at its
line when the kernel compiles; before, it compiled and linked and its launch failed with
the driver's CUDA_ERROR_INVALID_VALUE (seen on the H200), naming neither kernel nor line."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, float32, float64
from cujit.diagnostics import TypingError


def _source(n: int, dtype):
    def k(out):
        a = cuda.local.array(n, dtype)
        i = cuda.grid(1)
        a[i % n] = i
        a[n - 1] = 3.0
        out[i] = a[i % n] + a[n - 1]

    return k


@pytest.mark.parametrize("n,dtype", [(1 << 20, float32), (65537, float64)])
def test_a_local_array_past_512_kib_is_refused_at_its_line(n, dtype):
    k = cuda.jit(_source(n, dtype))
    with pytest.raises(TypingError, match=r"at most 524288 bytes") as info:
        k.compile((dtype[::1],))
    assert "test_local_memory_limit.py:16" in str(info.value)  # the cuda.local.array line


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_a_local_array_of_exactly_512_kib_compiles_and_runs(target):
    k = cuda.jit(target=target)(_source(65536, float64))  # 512 KiB of float64
    out = np.full(32, -1.0)
    k[1, 32](out)
    assert np.array_equal(out, np.arange(32) + 3.0)
