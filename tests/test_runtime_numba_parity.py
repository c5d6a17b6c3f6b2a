"""Runtime behaviour numba.cuda programs rely on: ``cuda.gpus[a:b]`` is a list, a view with
a negative stride is refused by ``copy_to_host`` (unless ``CUJIT_NEGATIVE_STRIDE_COPIES``),
and numba's config ``CUDA_ARRAY_INTERFACE_SYNC`` decides whether a foreign array's stream
is synchronized when it is imported or launched with."""

from __future__ import annotations

import types
from unittest import mock

import numpy as np
import pytest

from cujit import numba_config


def test_cpu_device_list_slices_like_a_list():
    from cujit.targets.cpu import device

    assert device.gpus[1:] == [] and device.gpus[:] == [device.gpus[0]]
    assert device.gpus[-1:] == [device.gpus[0]]
    with pytest.raises(TypeError, match="ints, not str"):
        device.gpus["0"]


def test_gpu_list_slices_like_a_list(monkeypatch):
    from cujit.runtime import context, devices

    monkeypatch.setattr(context, "device_count", lambda: 3)
    ids = [g.id for g in devices.gpus[1:]]
    assert ids == [1, 2] and [g.id for g in devices.gpus[::-2]] == [2, 0]
    assert devices.gpus[5:] == []


@pytest.fixture
def cpu_memory():
    from cujit.targets.cpu import memory

    return memory


def test_negative_stride_copy_to_host_is_refused_as_numba_does(cpu_memory, monkeypatch):
    monkeypatch.delenv("CUJIT_NEGATIVE_STRIDE_COPIES", raising=False)
    host = np.arange(12.0).reshape(3, 4) * 1.5 - 2.0
    d = cpu_memory.to_device(host)
    with pytest.raises(NotImplementedError, match="D->H copy not implemented for negative"):
        d[::-1].copy_to_host()
    with pytest.raises(NotImplementedError, match="negative strides"):
        d[:, ::-2].copy_to_host()
    np.testing.assert_array_equal(d[::2, 1::2].copy_to_host(), host[::2, 1::2])
    monkeypatch.setenv("CUJIT_NEGATIVE_STRIDE_COPIES", "1")
    np.testing.assert_array_equal(d[::-1, ::-2].copy_to_host(), host[::-1, ::-2])


class Foreign:
    """Another library's array: only its CUDA Array Interface, naming a stream."""

    def __init__(self, arr, stream: int):
        cai = dict(arr.__cuda_array_interface__)
        cai["stream"] = stream
        self.__cuda_array_interface__ = cai


@pytest.fixture
def numba_sync(monkeypatch):
    """numba's config module as a program sets it: followed by cujit's numba config."""
    cfg = types.SimpleNamespace(CUDA_ARRAY_INTERFACE_SYNC=True)
    monkeypatch.setattr(numba_config, "_FOLLOWED", [cfg])
    return cfg


def test_numba_config_turns_the_import_sync_off_on_the_cpu_target(cpu_memory, numba_sync):
    from cujit.targets.cpu import interop, streams

    s = streams.stream()
    arr = cpu_memory.to_device(np.arange(6.0))
    with mock.patch.object(streams.Stream, "synchronize", return_value=None) as sync:
        interop.as_cuda_array(Foreign(arr, int(s)))
    sync.assert_called_once_with()
    numba_sync.CUDA_ARRAY_INTERFACE_SYNC = False
    with mock.patch.object(streams.Stream, "synchronize", return_value=None) as sync:
        got = interop.as_cuda_array(Foreign(arr, int(s)))
    sync.assert_not_called()
    np.testing.assert_array_equal(got.copy_to_host(), np.arange(6.0))


def test_either_switch_turns_the_sync_off(numba_sync, monkeypatch):
    monkeypatch.delenv("CUJIT_CUDA_ARRAY_INTERFACE_SYNC", raising=False)
    assert numba_config.array_interface_sync()
    monkeypatch.setenv("CUJIT_CUDA_ARRAY_INTERFACE_SYNC", "0")
    assert not numba_config.array_interface_sync()
    monkeypatch.delenv("CUJIT_CUDA_ARRAY_INTERFACE_SYNC")
    numba_sync.CUDA_ARRAY_INTERFACE_SYNC = 0
    assert not numba_config.array_interface_sync()


@pytest.mark.gpu
def test_numba_config_turns_the_launch_sync_off_on_a_gpu(numba_sync):
    from cujit import cuda
    from cujit.runtime.stream import Stream

    @cuda.jit
    def double(x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = 2.0 * x[i]

    s1, s2 = cuda.stream(), cuda.stream()
    x = cuda.to_device(np.arange(64.0) - 7.5, stream=s1)
    y = cuda.to_device(np.full(64, np.nan), stream=s2)
    s1.synchronize()
    s2.synchronize()
    double[1, 64](Foreign(x, int(s1)), Foreign(y, int(s2)))  # compiled, synchronized
    numba_sync.CUDA_ARRAY_INTERFACE_SYNC = False
    with mock.patch.object(Stream, "synchronize", return_value=None) as sync:
        double[1, 64](Foreign(x, int(s1)), Foreign(y, int(s2)))
        cuda.as_cuda_array(Foreign(x, int(s1)))
    sync.assert_not_called()
    cuda.synchronize()
    np.testing.assert_array_equal(y.copy_to_host(), 2.0 * (np.arange(64.0) - 7.5))
