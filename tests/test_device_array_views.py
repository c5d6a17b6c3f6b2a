"""Device-array parity with numba's DeviceNDArray: flags, slicing, reshape, ravel, view,
split, squeeze, copy_to_device, on the CPU target's arrays and (marked gpu) the GPU's;
the views' logic also against a fake device array here."""

from __future__ import annotations

import numpy as np
import pytest

from cujit.runtime.array_views import ArrayFlags, split_bounds
from cujit.targets.cpu import memory as cpu_memory

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def _api(target: str):
    if target == "cpu":
        return cpu_memory
    from cujit.runtime import memory

    return memory


def test_split_bounds():
    assert split_bounds(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert split_bounds(8, 4) == [(0, 4), (4, 8)]
    assert split_bounds(0, 3) == []
    with pytest.raises(ValueError):
        split_bounds(5, 0)


def test_flags_by_key_and_attribute():
    f = ArrayFlags(C_CONTIGUOUS=True, F_CONTIGUOUS=False)
    assert f["C_CONTIGUOUS"] and f.c_contiguous and not f.f_contiguous
    with pytest.raises(AttributeError):
        _ = f.writeable


@pytest.mark.parametrize("target", TARGETS)
def test_flags_slicing_reshape_ravel(target):
    api = _api(target)
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    d = api.to_device(host)
    assert d.flags["C_CONTIGUOUS"] and not d.flags["F_CONTIGUOUS"]
    cols = d[:, 1:5:2]
    assert not cols.flags["C_CONTIGUOUS"] and not cols.flags["F_CONTIGUOUS"]
    assert np.array_equal(cols.copy_to_host(), host[:, 1:5:2])
    t = d.T  # numba's: a C-contiguous copy, not a view
    assert t.flags["C_CONTIGUOUS"] and np.array_equal(t.copy_to_host(), host.T)
    assert np.array_equal(d.reshape(6, 4).copy_to_host(), host.reshape(6, 4))
    assert np.array_equal(d.reshape(-1, 3).copy_to_host(), host.reshape(-1, 3))
    assert np.array_equal(d.ravel().copy_to_host(), host.ravel())
    assert np.array_equal(d[2].copy_to_host(), host[2])


@pytest.mark.parametrize("target", TARGETS)
def test_view_reinterprets_without_copy(target):
    api = _api(target)
    host = np.array([1.0, -2.5, 3.25, 0.0], dtype=np.float32)
    d = api.to_device(host)
    assert np.array_equal(d.view(np.int32).copy_to_host(), host.view(np.int32))
    halves = d.view(np.uint16)
    assert halves.shape == (8,)
    assert np.array_equal(halves.copy_to_host(), host.view(np.uint16))
    wide = d.view(np.float64)
    assert wide.shape == (2,) and np.array_equal(wide.copy_to_host(), host.view(np.float64))
    d.view(np.int32).copy_to_device(np.array([0, 0, 0, 1065353216], np.int32))
    assert d.copy_to_host()[3] == 1.0  # the view wrote the original's memory
    with pytest.raises(ValueError):
        api.to_device(np.zeros(3, np.float32)).view(np.float64)


@pytest.mark.parametrize("target", TARGETS)
def test_split_gives_consecutive_views(target):
    api = _api(target)
    host = np.arange(10, dtype=np.int64)
    d = api.to_device(host)
    parts = d.split(4)
    assert [p.shape for p in parts] == [(4,), (4,), (2,)]
    for p, lo in zip(parts, (0, 4, 8), strict=True):
        assert np.array_equal(p.copy_to_host(), host[lo : lo + 4])
    parts[1].copy_to_device(np.full(4, -1, np.int64))
    assert np.array_equal(d.copy_to_host()[4:8], [-1] * 4)  # views, not copies
    with pytest.raises(ValueError):
        api.to_device(np.zeros((2, 2))).split(1)


@pytest.mark.parametrize("target", TARGETS)
def test_squeeze_and_copy_to_device(target):
    api = _api(target)
    d = api.to_device(np.arange(6.0).reshape(1, 6, 1))
    assert d.squeeze().shape == (6,) and d.squeeze(axis=0).shape == (6, 1)
    other = api.to_device(np.full((1, 6, 1), 7.0))
    d.copy_to_device(other)
    assert np.array_equal(d.copy_to_host(), np.full((1, 6, 1), 7.0))
    d[0, 2:4, 0] = np.array([1.0, 2.0])
    assert list(d.copy_to_host().ravel()) == [7, 7, 1, 2, 7, 7]
    assert d.getitemsize() == 8


def test_gpu_arrays_views_over_a_fake_allocation():
    # The GPU DeviceArray's view logic, on an address no one dereferences.
    from cujit.runtime.memory import DeviceArray

    d = DeviceArray._view((10,), (8,), np.dtype(np.int64), 0x1000, None)
    parts = d.split(4)
    assert [(p.shape, p.device_ptr) for p in parts] == [
        ((4,), 0x1000),
        ((4,), 0x1020),
        ((2,), 0x1040),
    ]
    v = d.view(np.int32)
    assert (v.shape, v.strides, v.dtype, v.device_ptr, v.size) == (
        (20,),
        (4,),
        np.dtype(np.int32),
        0x1000,
        20,
    )
    m = DeviceArray._view((1, 6, 1), (48, 8, 8), np.dtype(np.float64), 0x2000, None)
    assert m.squeeze().shape == (6,) and m.squeeze(axis=-1).shape == (1, 6)
    assert m.flags["C_CONTIGUOUS"] and m.flags["F_CONTIGUOUS"]
    assert d[1:9:2].flags == {"C_CONTIGUOUS": False, "F_CONTIGUOUS": False}
    assert d.bind(5).stream == 5 and d.stream == 0
    with pytest.raises(ValueError, match="cannot squeeze axis 1"):
        m.squeeze(axis=1)
