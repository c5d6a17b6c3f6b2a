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
def test_a_local_array_well_under_512_kib_compiles_and_runs(target):
    # (on the H200 an array of exactly 512 KiB compiles but its launch fails: the thread's
    # frame holds more than the array)
    k = cuda.jit(target=target)(_source(32768, float64))  # 256 KiB of float64
    out = np.full(32, -1.0)
    k[1, 32](out)
    assert np.array_equal(out, np.arange(32) + 3.0)


@pytest.mark.gpu
def test_a_launch_the_driver_refuses_for_the_local_frame_says_so():
    from cujit.runtime.driver import CudaDriverError

    # 512 KiB exactly passes the compile-time check, but the thread's frame is larger
    k = cuda.jit(_source(65536, float64))
    out = cuda.device_array(32, np.float64)
    with pytest.raises(CudaDriverError, match=r"bytes of local memory per thread") as info:
        k[1, 32](out)
    assert "'k'" in str(info.value) and "CUDA_ERROR_INVALID_VALUE" in str(info.value)
    # the context is still good: a small kernel runs after it
    small = cuda.jit(_source(64, float64))
    small[1, 32](out)
    assert np.array_equal(out.copy_to_host(), np.arange(32) + 3.0)
