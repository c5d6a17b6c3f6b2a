"""The launch side of the 32-bit index variant (cujit/index_width.py), against the
stand-in driver of test_launcher.py: which cubin each launch runs, through the general
path and the per-configuration selector alike."""

from __future__ import annotations

import numpy as np
import pytest
from test_coarsen_launch import stand_in_gpu
from test_launcher import BASE, fake_device_array

from cujit import cuda
from cujit.abi import INDEX32_LIMIT
from cujit.runtime.memory import DeviceArray


@pytest.fixture
def gpu(monkeypatch):
    return stand_in_gpu(monkeypatch, "CUJIT_INDEX32")


def guarded(x, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        acc = x[i]
        if i > 0 and i - 1 < n:
            acc += x[i - 1]
        if i + 1 < n:
            acc += x[i + 1]
        out[i] = acc


def cubins(k):
    (spec,) = k.overloads.values()
    wide = spec.coarse.wide
    return spec.result.cubin, wide.result.cubin if wide is not None else None


def huge():
    """A device array of more elements than the variant takes (never read: no memory)."""
    return DeviceArray._view((INDEX32_LIMIT + 1,), (4,), np.dtype(np.float32), BASE, None)


def test_small_arrays_take_the_variant_through_the_selector(gpu):
    k = cuda.jit(guarded)
    cfg = k[4, 256]
    x, out = fake_device_array(1000), fake_device_array(1000, offset=4096)
    cfg(x, out)
    cfg(x, out)
    assert len(gpu.general) == 1  # the second launch went through the selector
    plain, wide = cubins(k)
    assert wide is not None and wide != plain
    assert [(launch[0], launch[-1]) for launch in gpu.launches] == [((4, 1, 1), wide)] * 2

    cfg(huge(), out)  # past the limit: the kernel as written, the plain slot filled
    cfg(huge(), out)
    assert len(gpu.general) == 2
    assert [launch[-1] for launch in gpu.launches[2:]] == [plain, plain]
    cfg(x, out)  # and back, through the selector
    assert gpu.launches[-1][-1] == wide and len(gpu.general) == 2


def test_a_grid_past_the_limit_runs_the_kernel_as_written(gpu):
    k = cuda.jit(guarded)
    x, out = fake_device_array(1000), fake_device_array(1000, offset=4096)
    cfg = k[INDEX32_LIMIT // 256 + 1, 256]
    cfg(x, out)
    cfg(x, out)
    plain, wide = cubins(k)
    assert wide is None and [launch[-1] for launch in gpu.launches] == [plain, plain]
    assert len(gpu.general) == 1  # the configuration's launcher is the plain one alone


def test_index32_false_launches_the_kernel_as_written(gpu):
    k = cuda.jit(guarded, index32=False)
    x, out = fake_device_array(1000), fake_device_array(1000, offset=4096)
    k[4, 256](x, out)
    (spec,) = k.overloads.values()
    assert spec.coarse is None and gpu.launches[-1][-1] == spec.result.cubin


def rows(u, out):
    x, y = cuda.grid(2)
    ny, nx = u.shape
    if x < nx and y < ny and x > 0 and y > 0:
        out[y, x] = u[y, x - 1] + u[y - 1, x]


def test_a_shape_group_of_unequal_shapes_takes_the_plain_launcher(gpu):
    k = cuda.jit(rows)
    cfg = k[(2, 8), (32, 4)]
    u, out = fake_device_array((30, 60)), fake_device_array((30, 60), offset=1 << 20)
    cfg(u, out)
    cfg(u, out)
    plain, wide = cubins(k)
    assert wide is not None and [launch[-1] for launch in gpu.launches] == [wide, wide]
    assert len(gpu.general) == 1
    bigger = fake_device_array((31, 60), offset=1 << 20)
    cfg(u, bigger)
    cfg(u, bigger)
    assert [launch[-1] for launch in gpu.launches[2:]] == [plain, plain]
    assert len(gpu.general) == 2  # the second through the selector's plain slot
