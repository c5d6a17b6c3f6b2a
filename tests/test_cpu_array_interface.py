"""The CUDA Array Interface on the CPU target (``targets/cpu/interop.py``): what its device
arrays export, what ``as_cuda_array`` / ``from_cuda_array_interface`` accept (only memory
the CPU target allocated), stream handles and their synchronization, foreign arrays as
kernel arguments and globals, ``.T`` as numba's copy, and IPC's refusal.  The GPU
runtime's ``.T`` and launch-time synchronization are tested at the end (marked gpu)."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.targets.cpu import interop, streams
from cujit.targets.cpu import memory as cpu_memory


@pytest.fixture(autouse=True)
def cpu_target(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cpu")


class Foreign:
    """Another library's array: only its CUDA Array Interface is visible."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


def _values(shape, dtype=np.float64):
    return (np.arange(int(np.prod(shape))) * 1.5 - 7.0).astype(dtype).reshape(shape)


def test_export_matches_numpys_interface_with_host_pointers():
    host = _values((4, 6))
    d = cpu_memory.to_device(host)
    cai = d.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (4, 6) and cai["typestr"] == "<f8"
    assert cai["strides"] is None and cai["stream"] is None
    assert cai["data"] == (d.__array_interface__["data"][0], False)
    for view in (d[:, 1::2], d[::-1], d[2], d[1:3, ::-3]):
        ref = np.asarray(view).__array_interface__
        cai = view.__cuda_array_interface__
        assert cai["data"][0] == ref["data"][0]
        assert cai["strides"] == (None if view.flags.c_contiguous else view.strides)
    assert cpu_memory.device_array(0).__cuda_array_interface__["data"][0] == 0
    ro = cpu_memory.to_device(host)
    ro.flags.writeable = False
    assert ro.__cuda_array_interface__["data"][1] is True


def test_export_names_the_arrays_stream_and_views_inherit_it():
    s = streams.stream()
    d = cpu_memory.device_array((3, 4), np.int32, stream=s)
    assert d.__cuda_array_interface__["stream"] == int(s.handle) not in (0, 1, 2)
    assert d[1:].__cuda_array_interface__["stream"] == int(s.handle)
    assert cpu_memory.mapped_array(5, stream=s).__cuda_array_interface__["stream"] == s.handle
    assert streams.stream().handle != s.handle  # each stream its own handle
    assert cpu_memory.to_device(np.ones(3)).stream == 0
    assert d.bind(streams.default_stream()).__cuda_array_interface__["stream"] is None


def test_import_shares_memory_with_the_producer(monkeypatch):
    monkeypatch.setenv("CUJIT_NEGATIVE_STRIDE_COPIES", "1")  # d[::-1, ::-1] is copied back
    host = _values((5, 4))
    d = cpu_memory.to_device(host)
    for src, ref in ((d, host), (d[::2, 1:], host[::2, 1:]), (d[::-1, ::-1], host[::-1, ::-1])):
        got = interop.as_cuda_array(Foreign(src))
        assert isinstance(got, cpu_memory.HostDeviceArray)
        assert got.shape == ref.shape and got.strides == src.strides
        np.testing.assert_array_equal(got.copy_to_host(), ref)
        assert got.device_ctypes_pointer.value == src.device_ctypes_pointer.value
    view = interop.as_cuda_array(Foreign(d[1:3]))
    view[...] = -99.0  # writes reach the producer's memory
    expect = host.copy()
    expect[1:3] = -99.0
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    assert interop.as_cuda_array(d) is d


def test_import_keeps_the_read_only_flag_and_refuses_masks():
    d = cpu_memory.to_device(_values(6))
    cai = dict(d.__cuda_array_interface__, data=(d.ctypes.data, True))
    got = interop.from_cuda_array_interface(cai, owner=d)
    assert not got.flags.writeable
    np.testing.assert_array_equal(got, _values(6))
    masked = dict(d.__cuda_array_interface__, mask=cpu_memory.to_device(np.ones(6, bool)))
    with pytest.raises(NotImplementedError, match="Masked arrays"):
        interop.from_cuda_array_interface(masked)


def test_import_refuses_memory_the_cpu_target_did_not_allocate():
    plain = _values(8)  # host memory, but not the CPU target's device memory
    cai = {"shape": (8,), "typestr": "<f8", "data": (plain.ctypes.data, False), "version": 3}
    with pytest.raises(TypeError, match="did not allocate"):
        interop.from_cuda_array_interface(cai)
    d = cpu_memory.to_device(plain)
    past_end = dict(d.__cuda_array_interface__, shape=(9,))  # one element beyond
    with pytest.raises(TypeError, match="did not allocate"):
        interop.from_cuda_array_interface(past_end)
    empty = {"shape": (0, 3), "typestr": "<i4", "data": (0, False), "version": 3}
    assert interop.from_cuda_array_interface(empty).shape == (0, 3)


def test_import_synchronizes_the_named_stream_unless_told_not_to(monkeypatch):
    calls = []
    monkeypatch.setattr(streams.Stream, "synchronize", lambda self: calls.append(self.handle))
    s = streams.stream()
    got = interop.as_cuda_array(Foreign(cpu_memory.device_array(4, stream=s)))
    assert calls == [s.handle] and got.stream.external and got.stream.handle == s.handle
    interop.as_cuda_array(Foreign(cpu_memory.device_array(4)))  # no stream: no sync
    interop.as_cuda_array(Foreign(cpu_memory.device_array(4, stream=s)), sync=False)
    assert calls == [s.handle]
    kept = cpu_memory.device_array(4)
    bad = dict(kept.__cuda_array_interface__, stream=0)
    with pytest.raises(ValueError, match="stream 0"):
        interop.from_cuda_array_interface(bad)


def test_the_cuda_namespace_and_cudadrv_serve_the_cpu_forms():
    from cujit.cuda import _CPU_NAMES
    from cujit.cuda.cudadrv import driver

    for name in ("as_cuda_array", "from_cuda_array_interface", "is_cuda_array"):
        assert _CPU_NAMES[name] == "cujit.targets.cpu.interop"
    assert driver.Stream is streams.Stream
    assert interop.is_cuda_array(cpu_memory.device_array(2))
    assert interop.is_cuda_array(Foreign(cpu_memory.device_array(2)))
    assert not interop.is_cuda_array(np.zeros(2))


def test_the_gpu_runtime_never_takes_them_for_device_memory():
    from cujit.runtime import interop as gpu_interop
    from cujit.runtime import memory as gpu_memory
    from cujit.runtime.args import _reachable_view

    d = cpu_memory.device_array(3)
    assert gpu_memory.is_host_memory(d) and not gpu_memory.is_cuda_array(d)
    assert _reachable_view(d, 0) is None  # a GPU launch copies it as a host array
    with pytest.raises(TypeError, match="host memory"):
        gpu_interop.as_cuda_array(d)


def test_foreign_arrays_as_kernel_arguments_sync_their_streams(monkeypatch):
    calls = []
    monkeypatch.setattr(streams.Stream, "synchronize", lambda self: calls.append(self.handle))
    s1, s2 = streams.stream(), streams.stream()
    a = cpu_memory.to_device(_values(16))
    b = cpu_memory.to_device(np.zeros(16))
    a.stream, b.stream = s1, s2

    @cuda.jit(target="cpu")
    def scale(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = 3.0 * x[i] + 1.0

    scale[2, 8](Foreign(a), Foreign(b))
    np.testing.assert_array_equal(b.copy_to_host(), 3.0 * _values(16) + 1.0)
    assert sorted(calls) == sorted([s1.handle, s2.handle])  # each producer's stream, once


def test_a_foreign_global_is_read_in_place():
    src = cpu_memory.to_device(_values(8))
    glob = Foreign(src)

    @cuda.jit(target="cpu")
    def copy_out(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = glob[i] * 2.0

    out = np.full(8, np.nan)
    copy_out[1, 8](out)
    np.testing.assert_array_equal(out, _values(8) * 2.0)


def test_a_gpu_pointer_as_an_argument_is_refused_with_a_launch_error():
    plain = np.zeros(4)
    fake = type("Gpu", (), {})()
    fake.__cuda_array_interface__ = {
        "shape": (4,),
        "typestr": "<f8",
        "data": (plain.ctypes.data, False),
        "version": 3,
    }

    @cuda.jit(target="cpu")
    def touch(x):
        x[0] = 1.0

    with pytest.raises(Exception, match="GPU device array"):
        touch[1, 1](fake)
    assert plain[0] == 0.0


def test_transpose_is_numbas_copy_and_truth_is_the_first_extent():
    host = _values((5, 8))
    d = cpu_memory.to_device(host)
    t = d[::2, ::2].T
    ref = host[::2, ::2].T
    assert t.shape == ref.shape == (4, 3) and t.strides == (24, 8)  # C-contiguous
    np.testing.assert_array_equal(t.copy_to_host(), ref)
    t[...] = 0.0  # a copy: the source is untouched
    np.testing.assert_array_equal(d.copy_to_host(), host)
    assert d.transpose((0, 1)) is d
    np.testing.assert_array_equal(d.transpose(1, 0), host.T)
    assert bool(d) and not cpu_memory.device_array((0, 3))
    assert bool(cpu_memory.device_array((1, 1)))  # whatever the element holds


def test_ipc_says_why_it_cannot_work_on_the_cpu_target():
    d = cpu_memory.to_device(_values(4))
    gd = d[1:].gpu_data
    assert gd.device_pointer == d[1:].ctypes.data and gd.size == 24
    with pytest.raises(TypeError, match="CUDA IPC shares GPU memory"):
        d.get_ipc_handle()
    from cujit.targets.cpu import device

    with pytest.raises(TypeError, match="CUDA IPC shares GPU memory"):
        device.current_context().get_ipc_handle(gd)
    with pytest.raises(TypeError, match="CUDA IPC shares GPU memory"):
        interop.open_ipc_array(b"\0" * 64, shape=4, dtype=np.float64)


# -- the GPU runtime ------------------------------------------------------------------------


@pytest.mark.gpu
def test_gpu_transpose_is_a_contiguous_copy(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cuda")
    from cujit.runtime import memory

    host = _values((10, 12)).astype(np.int64)
    d = memory.to_device(host)
    t = d[::2, ::2].T
    assert t.shape == (6, 5) and t.strides == (40, 8) and t.is_c_contiguous()
    np.testing.assert_array_equal(t.copy_to_host(), host[::2, ::2].T)
    t.copy_to_device(np.zeros((6, 5), np.int64))
    np.testing.assert_array_equal(d.copy_to_host(), host)  # not a view
    assert d.transpose((0, 1)) is d
