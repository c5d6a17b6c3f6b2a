"""Launch checks hold the user's grid and block to CUDA's limits on every launch path:
the first launch, later ones of a reused configuration, the coarsened variant (whose
grid is ``ceil(gx / k)``), on the CPU target and on the GPU path (the stand-in driver of
test_launcher.py); the message names the user's numbers."""

from __future__ import annotations

import numpy as np
import pytest
from test_coarsen_launch import stand_in_gpu
from test_launcher import fake_device_array

from cujit import cuda
from cujit.diagnostics import LaunchError

LIMIT = 2**31 - 1


def scale(a, x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


def store_one(out):
    out[0] = 1


@pytest.fixture(autouse=True)
def _variants_at_once(monkeypatch):
    monkeypatch.setenv("CUJIT_COARSEN", "1")
    monkeypatch.setenv("CUJIT_VARIANTS_LAZY", "0")  # the variant from the first launch on


def _cpu_scale():
    k = cuda.jit(scale, target="cpu")
    x = np.ones(1024, np.float32)
    return k, (np.float32(2), x, np.zeros_like(x))


def _cpu_grid_error(cfg, args) -> str:
    with pytest.raises(LaunchError) as info:
        cfg(*args)
    return str(info.value)


@pytest.mark.parametrize("grid", [LIMIT + 1, LIMIT + 5, 4 * LIMIT + 4, 2**35])
def test_cpu_coarsened_kernel_refuses_the_users_grid_after_launching(grid):
    k, args = _cpu_scale()
    for _ in range(2):  # the variant is compiled and taken
        k[8, 128](*args)
    (spec,) = k.overloads.values()
    assert spec.coarse is not None and spec.coarse.wide is not None
    message = _cpu_grid_error(k[grid, 1], args)
    assert message == f"grid.x = {grid} exceeds CUDA's limit of {LIMIT}"


def test_cpu_first_launch_and_a_reused_configuration_refuse_alike():
    k, args = _cpu_scale()
    cfg = k[LIMIT + 1, 1]
    first = _cpu_grid_error(cfg, args)
    k[8, 128](*args)
    again = _cpu_grid_error(cfg, args)  # the same configuration object, after a launch
    assert first == again == f"grid.x = {LIMIT + 1} exceeds CUDA's limit of {LIMIT}"


def test_cpu_coarsened_kernel_refuses_the_users_block():
    k, args = _cpu_scale()
    k[8, 128](*args)
    message = _cpu_grid_error(k[1, 2048], args)
    assert message == "block.x = 2048 exceeds CUDA's limit of 1024"


@pytest.mark.parametrize(
    ("grid", "block", "message"),
    [
        ((1, 65536), 1, "grid.y = 65536 exceeds CUDA's limit of 65535"),
        ((1, 1, 70000), 1, "grid.z = 70000 exceeds CUDA's limit of 65535"),
        (1, (1, 1, 65), "block.z = 65 exceeds CUDA's limit of 64"),
    ],
)
def test_cpu_plain_kernel_limits_on_each_axis(grid, block, message):
    k = cuda.jit(store_one, target="cpu")
    out = np.zeros(1, np.int64)
    k[1, 1](out)
    assert _cpu_grid_error(k[grid, block], (out,)) == message


def test_cpu_accepts_a_grid_at_the_limit_through_the_plan():
    k, args = _cpu_scale()
    k[8, 128](*args)
    (spec,) = k.overloads.values()
    # the facts of a grid at the limit: bit 0 set; one past it: clear, the kernel as written
    assert spec.coarse.facts(args, (LIMIT, 1, 1), (1, 1, 1)) & 1
    assert not spec.coarse.facts(args, (LIMIT + 1, 1, 1), (1, 1, 1)) & 1
    assert spec.coarse.select(spec, args, (LIMIT + 1, 1, 1), (1, 1, 1)) == (
        spec,
        (LIMIT + 1, 1, 1),
    )


def _gpu_refusal(gpu, cfg, args) -> str:
    before = len(gpu.launches)
    with pytest.raises(LaunchError) as info:
        cfg(*args)
    assert len(gpu.launches) == before  # nothing reached the driver
    return str(info.value)


@pytest.mark.parametrize("grid", [LIMIT + 1, 2**33])
def test_gpu_coarsened_kernel_refuses_the_users_grid_after_launching(monkeypatch, grid):
    gpu = stand_in_gpu(monkeypatch, "CUJIT_COARSEN")
    k = cuda.jit(scale)
    x, out = fake_device_array(1000), fake_device_array(1000, offset=4096)
    args = (np.float32(2), x, out)
    for _ in range(2):  # the general path, then the configuration's selector
        k[40, 32](*args)
    assert [launch[0] for launch in gpu.launches] == [(10, 1, 1)] * 2  # the variant ran
    cfg = k[grid, 1]
    for _ in range(2):  # a reused configuration refuses again
        message = _gpu_refusal(gpu, cfg, args)
        assert message == f"grid dimension x is {grid}, above the device limit of {LIMIT}"


def test_gpu_plain_kernel_refuses_on_the_first_and_later_launches(monkeypatch):
    monkeypatch.setenv("CUJIT_COARSEN", "0")
    gpu = stand_in_gpu(monkeypatch, "CUJIT_INDEX32")
    k = cuda.jit(scale)
    x, out = fake_device_array(1000), fake_device_array(1000, offset=4096)
    args = (np.float32(2), x, out)
    message = _gpu_refusal(gpu, k[(1, 65536), 1], args)
    assert message == "grid dimension y is 65536, above the device limit of 65535"
    k[40, 32](*args)
    k[40, 32](*args)
    message = _gpu_refusal(gpu, k[LIMIT + 1, 32], args)
    assert message == f"grid dimension x is {LIMIT + 1}, above the device limit of {LIMIT}"
