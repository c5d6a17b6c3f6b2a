"""numba's ``cuda.driver.device_to_host`` / ``host_to_device`` / ``device_pointer`` and
``cuda.devices.get_context`` (``cujit/cuda/cudadrv``): on the CPU target here, on the GPU
(marked gpu) with the same calls."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda.cudadrv import devices, driver


@pytest.fixture
def cpu(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cpu")


def test_namespace_aliases():
    assert cuda.driver is driver and cuda.devices is devices
    assert cuda.cudadrv.devices is devices


def test_cpu_get_context_is_the_cpu_targets(cpu):
    from cujit.targets.cpu import device

    assert devices.get_context() is device.current_context()
    assert devices.get_context(0) is device.current_context()
    with pytest.raises(IndexError):
        devices.get_context(3)


def test_cpu_raw_copies_move_the_asked_bytes(cpu):
    from cujit.targets.cpu import memory

    src = (np.arange(12, dtype=np.int64) * 7 - 30).reshape(3, 4)
    d = memory.to_device(src)
    out = np.full(12, -1, np.int64)
    driver.device_to_host(out, d.gpu_data, size=5 * 8)  # the first 5 elements only
    np.testing.assert_array_equal(out[:5], src.ravel()[:5])
    assert (out[5:] == -1).all()
    back = memory.device_array(12, np.int64)
    back[...] = 0
    driver.host_to_device(back[2:], out, size=3 * 8)
    np.testing.assert_array_equal(back.copy_to_host(), [0, 0, *src.ravel()[:3], *[0] * 7])
    assert driver.device_pointer(d) == d.ctypes.data
    with pytest.raises(ValueError, match="does not fit"):
        driver.device_to_host(np.zeros(2, np.int64), d, size=24)
    with pytest.raises(ValueError, match="neither end"):
        driver.device_to_host(np.zeros(2), np.zeros(2).ctypes.data, size=16)


@pytest.mark.gpu
def test_gpu_raw_copies_move_the_asked_bytes():
    from cujit.runtime import memory

    src = np.arange(10, dtype=np.float64) * 1.25 - 4.0
    d = memory.to_device(src)
    out = np.full(10, np.nan)
    driver.device_to_host(out, d[2:].gpu_data, size=4 * 8)
    np.testing.assert_array_equal(out[:4], src[2:6])
    assert np.isnan(out[4:]).all()
    driver.host_to_device(d, np.full(3, 9.5), size=3 * 8)
    np.testing.assert_array_equal(d.copy_to_host(), [9.5, 9.5, 9.5, *src[3:]])
    assert devices.get_context() is cuda.current_context()
