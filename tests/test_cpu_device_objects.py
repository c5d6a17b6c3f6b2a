"""The device objects on the CPU target (CUJIT_TARGET=cpu): get_current_device, gpus,
list_devices, current_context, select_device, detect and close describe the CPU target
and raise no GPU error; on the GPU (test at the end) they are the driver's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from cujit.cuda import _CPU_NAMES, _RUNTIME_NAMES
from cujit.targets.cpu import device, launch

NAMES = (
    "gpus",
    "list_devices",
    "get_current_device",
    "current_context",
    "select_device",
    "detect",
    "close",
)


def test_every_device_name_has_both_forms():
    for name in NAMES:
        assert _CPU_NAMES[name] == "cujit.targets.cpu.device"
        assert name in _RUNTIME_NAMES
        assert callable(getattr(device, name)) or name == "gpus"


def test_the_device_reports_the_cpu_targets_launch_limits():
    dev = device.get_current_device()
    assert dev.MAX_THREADS_PER_BLOCK == launch.MAX_THREADS_PER_BLOCK == 1024
    assert (dev.MAX_BLOCK_DIM_X, dev.MAX_BLOCK_DIM_Y, dev.MAX_BLOCK_DIM_Z) == launch.MAX_BLOCK
    assert (dev.MAX_GRID_DIM_X, dev.MAX_GRID_DIM_Y, dev.MAX_GRID_DIM_Z) == launch.MAX_GRID
    assert dev.MAX_SHARED_MEMORY_PER_BLOCK == launch.MAX_SHARED_PER_BLOCK
    assert dev.WARP_SIZE == dev.warp_size == 32
    assert dev.MULTIPROCESSOR_COUNT == os.cpu_count()
    assert dev.compute_capability == (dev.COMPUTE_CAPABILITY_MAJOR, dev.COMPUTE_CAPABILITY_MINOR)
    assert dev.id == 0 and "CPU" in dev.name and dev.uuid.startswith("CPU-")
    with pytest.raises(AttributeError, match="no attribute 'NOT_AN_ATTRIBUTE'"):
        _ = dev.NOT_AN_ATTRIBUTE


def test_the_limits_are_the_ones_a_launch_enforces():
    from cujit import cuda
    from cujit.diagnostics import LaunchError

    @cuda.jit(target="cpu")
    def noop(x):
        x[0] = 1

    import numpy as np

    x = np.zeros(1)
    limit = device.get_current_device().MAX_THREADS_PER_BLOCK
    noop[1, limit](x)
    assert x[0] == 1
    with pytest.raises(LaunchError):
        noop[1, limit + 1](x)


def test_lists_contexts_and_selection():
    assert len(device.gpus) == 1 and list(device.gpus) == device.list_devices()
    dev = device.gpus[0]
    assert device.gpus.current is dev is device.select_device(0)
    with dev as entered:
        assert entered is dev
    with pytest.raises(IndexError):
        device.gpus[1]
    ctx = device.current_context()
    assert ctx.device is dev and dev.get_primary_context() is ctx
    free, total = ctx.get_memory_info()
    assert 0 < free <= total
    ctx.synchronize()
    ctx.reset()
    ctx.deallocations.clear()
    assert len(ctx.deallocations) == 0
    device.close()


def test_detect_prints_the_device_and_says_it_runs(capsys):
    assert device.detect() is True
    out = capsys.readouterr().out
    assert "Found 1 CUDA devices" in out and "[SUPPORTED]" in out and "9.0" in out


def test_under_cujit_target_cpu_the_namespace_serves_them_without_a_gpu():
    code = (
        "from cujit import cuda\n"
        "d = cuda.get_current_device()\n"
        "print(type(d).__module__, d.compute_capability, len(cuda.gpus),\n"
        "      cuda.list_devices()[0] is d, cuda.current_context().device is d,\n"
        "      cuda.detect())\n"
        "cuda.close()\n"
    )
    env = dict(os.environ, CUJIT_TARGET="cpu", PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "cujit.targets.cpu.device (9, 0) 1 True True True"


@pytest.mark.gpu
def test_on_the_gpu_they_are_the_drivers():
    from cujit.runtime import context, devices

    dev = devices.get_current_device()
    assert dev.MAX_THREADS_PER_BLOCK == dev.max_threads_per_block
    assert dev.WARP_SIZE == 32 and dev.uuid.startswith("GPU-")
    assert dev.compute_capability == (dev.COMPUTE_CAPABILITY_MAJOR, dev.COMPUTE_CAPABILITY_MINOR)
    ctx = context.current_context()
    assert ctx.device is dev
    free, total = ctx.get_memory_info()
    assert 0 < free <= total
    assert devices.detect() is True
    context.close()
    assert context.current_context().device is dev  # rebinds on next use
