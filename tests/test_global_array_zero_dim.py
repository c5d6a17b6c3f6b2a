"""A 0-dimensional device array captured from the kernel's globals (a DeviceArray or
any object exporting the CUDA Array Interface) reads and writes as ``a[()]``, as
numba's kernels take one."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.targets.cpu import memory as cpu_memory

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


class Foreign:
    """Another library's array: only its CUDA Array Interface is visible."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


def _api(target: str):
    if target == "cpu":
        return cpu_memory
    from cujit.runtime import memory

    return memory


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("wrap", [lambda d: d, Foreign], ids=["device_array", "foreign"])
def test_a_captured_0d_array_reads_and_writes_its_element(target, wrap):
    api = _api(target)
    source = api.to_device(np.array(42.5, dtype=np.float32))
    captured = wrap(source)

    @cuda.jit(target=target)
    def k(out, x):
        out[()] = captured[()] * 2.0 + x[0]
        captured[()] = x[1]

    out = api.to_device(np.array(-1.0, np.float32))
    x = np.array([0.25, -3.5], np.float32)
    k[1, 1](out, x)
    assert out.copy_to_host() == np.float32(42.5 * 2.0 + 0.25)
    assert source.copy_to_host() == np.float32(-3.5)


@pytest.mark.parametrize("target", TARGETS)
def test_a_captured_0d_int_array_in_a_device_function(target):
    api = _api(target)
    scale = api.to_device(np.array(7, dtype=np.int64))

    @cuda.jit(device=True)
    def scaled(v):
        return v * scale[()]

    @cuda.jit(target=target)
    def k(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = scaled(x[i])

    x = np.arange(-5, 11, dtype=np.int64)
    out = np.full(16, -99, np.int64)
    k[1, 32](out, x)
    assert np.array_equal(out, x * 7)
