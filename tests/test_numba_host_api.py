"""numba.cuda's host API that cujit serves under numba's names: ``cuda.cudadrv`` and
``cuda.devicearray``, ``from_cuda_array_interface``, ``gpu_data``, IPC handles, the
external stream of an imported CUDA array, and ``device_array_like``'s layout
(NumPy's ``zeros_like`` order).  GPU tests are marked ``gpu``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cujit import cuda
from cujit.runtime import interop, ipc, stream
from cujit.runtime.layout import strides_like
from cujit.runtime.memory import DeviceArray
from cujit.targets.cpu import memory as cpu_memory

FAKE_PTR = 0x7F00_0000_0000  # an address only used as a number

# Layouts as views of a C or F base, so that the same view can be taken of a device array.
VIEWS = [
    ("C", lambda a: a),
    ("F", lambda a: a),
    ("C", lambda a: a[::2, ::2]),
    ("F", lambda a: a[::2, ::2]),
    ("C", lambda a: a[::2, ::2].T),
    ("F", lambda a: a[::2, ::2].T),
    ("C", lambda a: a[:, 1::3]),
    ("F", lambda a: a[1:, ::-2]),
    ("C", lambda a: a[::2].reshape(5, 12)[:, :1]),
]
EXTRA_LAYOUTS = [
    np.zeros((4, 5, 6))[:, ::2, 1:],
    np.zeros((4, 5, 6)).transpose(2, 0, 1)[::2],
    np.zeros((4, 5, 6)).transpose(1, 2, 0),
    np.zeros((3, 1, 4))[:, :, ::2],
    np.zeros(10)[::3],
    np.zeros((6, 4))[::-1, ::2],
    np.zeros((6, 4), order="F")[::-2],
]
LAYOUTS = [view(np.zeros((10, 12), order=o)) for o, view in VIEWS] + EXTRA_LAYOUTS


@pytest.mark.parametrize("host", LAYOUTS, ids=lambda a: f"{a.shape}{a.strides}")
def test_strides_like_is_numpys_zeros_like(host):
    assert strides_like(host.shape, host.strides, host.itemsize) == np.zeros_like(host).strides


@pytest.mark.parametrize("order,view", VIEWS)
def test_cpu_device_array_like_of_a_device_view_has_numpys_layout(order, view):
    host_view = view(np.zeros((10, 12), order=order))
    dev_view = view(cpu_memory.device_array((10, 12), order=order))
    # A device array's .T is numba's C-contiguous copy where NumPy's is a view: there
    # the reference layout is the C-contiguous copy's.
    if dev_view.flags["C_CONTIGUOUS"] and not host_view.flags["C_CONTIGUOUS"]:
        host_view = np.ascontiguousarray(host_view)
    ref = np.zeros_like(host_view)
    like = cpu_memory.device_array_like(dev_view)
    assert like.shape == ref.shape and like.strides == ref.strides
    assert like.flags["C_CONTIGUOUS"] == ref.flags["C_CONTIGUOUS"]
    assert like.flags["F_CONTIGUOUS"] == ref.flags["F_CONTIGUOUS"]


def test_gpu_device_array_like_uses_the_same_layout(monkeypatch):
    made = []

    def fake_init(self, shape, strides, dtype, stream=0, gpu_data=None):
        made.append((shape, strides, np.dtype(dtype)))

    monkeypatch.setattr(DeviceArray, "__init__", fake_init)
    view = np.zeros((10, 12), order="F")[::2, ::2]
    src = DeviceArray._view(view.shape, view.strides, view.dtype, FAKE_PTR, None)
    from cujit.runtime import memory

    memory.device_array_like(src)
    assert made == [((5, 6), (8, 40), np.dtype(np.float64))]


def test_cudadrv_names_are_cujits_own_objects():
    from cujit.diagnostics import NoGPUError
    from cujit.runtime.context import Context
    from cujit.runtime.driver import CudaDriverError

    assert cuda.cudadrv.driver.Stream is stream.Stream
    assert cuda.cudadrv.driver.Context is Context
    assert cuda.cudadrv.error.CudaAPIError is CudaDriverError
    assert cuda.cudadrv.error.CudaSupportError is NoGPUError
    assert cuda.devicearray is cuda.cudadrv.devicearray
    assert cuda.devicearray.DeviceNDArray is DeviceArray


def test_the_drop_in_resolves_cudadrv_submodules_to_cujit():
    from cujit import numba_drop_in

    assert numba_drop_in.cuda_module("numba.cuda.cudadrv.driver") is cuda.cudadrv.driver
    assert numba_drop_in.cuda_module("numba.cuda.cudadrv.nvvm") is None  # cujit has none
    assert numba_drop_in.cuda_module("numba.cuda.nothing.here") is None


@pytest.fixture
def cpu_target_names(monkeypatch):
    """cujit.cuda's host names looked up afresh for the CPU target, and put back after."""
    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    names = ("to_device", "device_array_like", "is_cuda_array", "as_cuda_array")
    space = vars(cuda)
    saved = {n: space.pop(n) for n in names if n in space}
    yield
    for n in names:
        space.pop(n, None)
    space.update(saved)


def test_auto_device_copies_host_values_and_passes_device_arrays(cpu_target_names):
    d, copied = cuda.devicearray.auto_device(2)
    assert copied and d.shape == () and d.copy_to_host()[()] == 2
    host = np.arange(6, dtype=np.int16).reshape(2, 3) + 5
    d, copied = cuda.devicearray.auto_device(host)
    assert copied and np.array_equal(d.copy_to_host(), host)
    same, copied = cuda.devicearray.auto_device(d)
    assert same is d and not copied
    with pytest.raises(ValueError, match="non-contiguous"):
        cuda.devicearray.auto_device(np.arange(10.0)[:-1:2])


def test_find_closest_arch_picks_the_highest_not_above(monkeypatch):
    from cujit.cuda.cudadrv import nvrtc

    monkeypatch.setattr(nvrtc, "get_supported_archs", lambda: [(7, 5), (8, 0), (8, 6), (9, 0)])
    assert nvrtc.find_closest_arch((9, 0)) == (9, 0)
    assert nvrtc.find_closest_arch((8, 9)) == (8, 6)
    assert nvrtc.find_closest_arch((12, 0)) == (9, 0)
    with pytest.raises(ValueError, match="below the lowest"):
        nvrtc.find_closest_arch((7, 0))


def test_gpu_data_is_the_span_of_the_elements_and_equal_for_views_of_the_same_bytes():
    host = np.arange("2005-02", "2005-03", dtype="datetime64[D]")
    owner = object()
    d = DeviceArray._view(host.shape, host.strides, host.dtype, FAKE_PTR, owner)
    as_int = d.view(np.int64)
    assert as_int.gpu_data == d.gpu_data
    assert d.gpu_data.device_pointer == FAKE_PTR and d.gpu_data.size == host.nbytes
    assert d.gpu_data.owner is owner
    tail = d[3:]
    assert tail.gpu_data.device_pointer == FAKE_PTR + 3 * 8
    assert tail.gpu_data.size == host.nbytes - 3 * 8
    assert tail.gpu_data != d.gpu_data
    back = d[::-2]  # elements 27, 25... 1: the span starts at the lowest, element 1
    assert back.gpu_data.device_pointer == FAKE_PTR + 8 and back.gpu_data.size == 13 * 16 + 8


class _CAI:
    def __init__(self, **cai):
        self.__cuda_array_interface__ = {
            "shape": (4,),
            "typestr": "<f4",
            "data": (FAKE_PTR, False),
            "strides": None,
            "version": 3,
            **cai,
        }


@pytest.fixture
def no_device_lookup(monkeypatch):
    monkeypatch.setattr(interop, "_pointer_device", lambda ptr: None)
    synced = []
    monkeypatch.setattr(stream.Stream, "synchronize", lambda self: synced.append(self.handle))
    return synced


def test_an_imported_array_keeps_the_producers_stream_as_an_external_stream(no_device_lookup):
    v = interop.as_cuda_array(_CAI(stream=0x5000))
    assert isinstance(v.stream, stream.Stream) and v.stream.external
    assert int(v.stream.handle) == 0x5000
    assert no_device_lookup == [0x5000]  # synchronized once, through the Stream
    v = interop.as_cuda_array(_CAI(stream=None))
    assert v.stream == 0 and no_device_lookup == [0x5000]
    assert not stream.Stream(stream._default(), owned=False).external


def test_from_cuda_array_interface_views_the_described_memory(no_device_lookup):
    desc = _CAI(shape=(2, 3), typestr="<i8", strides=(8, 16), stream=0x7000)
    desc = desc.__cuda_array_interface__
    owner = object()
    v = cuda.from_cuda_array_interface(desc, owner=owner, sync=False)
    assert (v.shape, v.strides, v.dtype, v.device_ptr) == ((2, 3), (8, 16), np.int64, FAKE_PTR)
    assert no_device_lookup == []  # sync=False
    assert v.base.keep is owner
    cuda.from_cuda_array_interface(desc)
    assert no_device_lookup == [0x7000]
    masked = dict(desc, mask=object())
    with pytest.raises(NotImplementedError, match="Masked arrays are not supported"):
        cuda.from_cuda_array_interface(masked)


def test_an_ipc_handle_pickles_to_its_bytes_size_and_offset():
    raw = bytes(range(64))
    h = ipc.IpcHandle(object(), ipc.IpcMemHandle(raw), size=80, offset=24)
    back = pickle.loads(pickle.dumps(h))
    assert back.base is None and back.size == 80 and back.offset == 24
    assert back.handle.reserved == raw
    arr = ipc.IpcArrayHandle(h, (10,), (8,), np.intp)
    back = pickle.loads(pickle.dumps(arr))
    assert back.shape == (10,) and back.ipc_handle.handle.reserved == raw


def test_open_ipc_array_refuses_a_handle_of_the_wrong_size():
    with pytest.raises(ValueError, match="64 bytes"):
        cuda.open_ipc_array(b"\0" * 10, shape=4, dtype=np.float32)


def test_an_ipc_handle_writes_its_bytes_into_the_drivers_struct():
    import ctypes

    raw = bytes(range(64, 128))
    cu = ipc.IpcMemHandle(raw).to_driver()
    assert ctypes.string_at(cu.getPtr(), 64) == raw


# -- on a GPU -------------------------------------------------------------------------


def _open_in_child(handle, nbytes):
    with cuda.open_ipc_array(handle, shape=nbytes // 8, dtype=np.int64) as d:
        return d.copy_to_host()


def _open_array_in_child(ipc_array):
    with ipc_array as d:
        got = d.copy_to_host()
        try:
            with ipc_array:
                pass
        except ValueError as e:
            return got, str(e)
    return got, None


def _open_handle_in_child(handle):
    d = handle.open_array(cuda.current_context(), shape=handle.size // 8, dtype=np.int64)
    got = d.copy_to_host()
    handle.close()
    return got


@pytest.fixture(scope="module")
def spawn_pool():
    import concurrent.futures
    import multiprocessing as mp

    with concurrent.futures.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as exe:
        yield exe


@pytest.mark.gpu
def test_ipc_memory_is_read_by_another_process(spawn_pool):
    host = (np.arange(12, dtype=np.int64) * 7) - 30
    d = cuda.to_device(host)
    h = cuda.current_context().get_ipc_handle(d.gpu_data)
    got = spawn_pool.submit(_open_in_child, h.handle.reserved, h.size).result(timeout=120)
    assert np.array_equal(got, host)


@pytest.mark.gpu
@pytest.mark.parametrize("index", [slice(None), slice(3, None), slice(2, 9)])
def test_ipc_handles_of_views_open_at_the_view(spawn_pool, index):
    host = np.arange(12, dtype=np.int64) * 3 + 1
    d = cuda.to_device(host)[index]
    h = cuda.current_context().get_ipc_handle(d.gpu_data)
    got = spawn_pool.submit(_open_handle_in_child, pickle.loads(pickle.dumps(h)))
    assert np.array_equal(got.result(timeout=120), host[index])
    got, message = spawn_pool.submit(_open_array_in_child, d.get_ipc_handle()).result(120)
    assert np.array_equal(got, host[index])
    assert message == "IpcHandle is already opened"


@pytest.mark.gpu
def test_gpu_data_of_a_reinterpreting_view_on_the_gpu():
    host = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
    d = cuda.to_device(host)
    v = d.view(np.int64)
    assert v.gpu_data == d.gpu_data
    assert np.array_equal(v.copy_to_host(), host.view(np.int64))


@pytest.mark.gpu
def test_gpu_device_array_like_of_a_view_follows_numpy():
    view = np.zeros((10, 12), order="F")[::2, ::2]
    d = cuda.device_array((10, 12), order="F")[::2, ::2]
    like = cuda.device_array_like(d)
    assert like.strides == np.zeros_like(view).strides == (8, 40)
    assert like.flags["F_CONTIGUOUS"] and not like.flags["C_CONTIGUOUS"]


@pytest.mark.gpu
def test_an_imported_array_on_a_real_stream():
    s = cuda.stream()
    producer = cuda.device_array(10, stream=s)

    class Foreign:
        __cuda_array_interface__ = producer.__cuda_array_interface__

    got = cuda.as_cuda_array(Foreign())
    assert got.stream.external and int(got.stream.handle) == int(s.handle)
    back = cuda.from_cuda_array_interface(producer.__cuda_array_interface__)
    assert back.device_ptr == producer.device_ptr and back.shape == (10,)


@pytest.mark.gpu
def test_cudadrv_versions_and_arch_on_the_gpu():
    cc = cuda.get_current_device().compute_capability
    arch = cuda.cudadrv.nvrtc.find_closest_arch(cc)
    assert arch <= tuple(cc) and arch in cuda.cudadrv.nvrtc.get_supported_archs()
    major, minor = cuda.cudadrv.runtime.get_version()
    assert major >= 12 and minor >= 0


@pytest.mark.gpu
def test_a_device_to_device_copy_on_a_new_thread():
    import threading

    src = cuda.to_device(np.arange(100) * 3 - 7)
    dst = cuda.to_device(np.zeros(100, dtype=np.int64))
    errors = []

    def copy():
        try:
            dst.copy_to_device(src)
        except Exception as exc:  # reported below: a thread's error is otherwise lost
            errors.append(exc)

    th = threading.Thread(target=copy)
    th.start()
    th.join()
    assert not errors
    assert np.array_equal(dst.copy_to_host(), np.arange(100) * 3 - 7)
