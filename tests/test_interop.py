"""Interoperability without a GPU: CUDA Array Interface and DLPack in and out, streams,
read-only and device checks, pickling, ``cuda.gpus``.

Foreign arrays are stand-ins exposing the protocols over made-up addresses
(never dereferenced); driver calls that ordering needs go to a recorder.
The DLPack round trips use real capsules, parsed by cuda.core's
StridedMemoryView exactly as a launch parses PyTorch's.
"""

from __future__ import annotations

import ctypes
import gc
import pickle
from types import SimpleNamespace

import numpy as np
import pytest
from test_runtime import (
    HostMemoryDriver,  # noqa: F401 (the host_driver fixture's class)
    host_driver,  # noqa: F401 (fixture)
)

from cujit.diagnostics import LaunchError
from cujit.runtime import context, devices, dlpack, event, interop, stream
from cujit.runtime.args import check_writable, prepare_args
from cujit.runtime.devices import check_devices
from cujit.runtime.memory import DeviceArray
from cujit.runtime.stream import (
    as_cu_stream,
    external_stream,
    per_thread_default_stream,
    same_stream,
    stream_handle,
)
from cujit.types import Array, Tuple, float32, int32

FAKE_PTR = 0x7F00_0000_0000


def fake_array(shape, dtype=np.float32, order="C", **flags) -> DeviceArray:
    host = np.empty(shape, dtype, order=order)
    return DeviceArray._view(host.shape, host.strides, host.dtype, FAKE_PTR, None, **flags)


class CAIObject:
    """A producer speaking only the CUDA Array Interface (as numba's arrays do)."""

    def __init__(self, shape, typestr="<f4", strides=None, readonly=False, stream=None, version=3):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "data": (FAKE_PTR, readonly),
            "version": version,
        }
        if version >= 3:
            self.__cuda_array_interface__["stream"] = stream


class DLPackObject:
    """A producer speaking only DLPack, exporting a cujit array's capsule."""

    def __init__(self, array):
        self.array = array
        self.calls: list[dict] = []

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class Recorder:
    """Stands in for driver calls: records them, returns made-up handles."""

    def __init__(self):
        self.calls: list[tuple] = []

    def __call__(self, name, *args):
        if name == "cuPointerGetAttribute":  # which device a CAI pointer is on: GPU 1
            return 1
        self.calls.append((name, *[int(a) if hasattr(a, "__int__") else a for a in args]))
        return 0xE0 if name == "cuEventCreate" else None


@pytest.fixture
def driver_calls(monkeypatch):
    rec = Recorder()
    monkeypatch.setattr(event, "call", rec)
    monkeypatch.setattr(interop, "call", rec)
    monkeypatch.setattr(stream, "call", rec)  # Stream.synchronize
    monkeypatch.setattr(
        context, "get_context", lambda: SimpleNamespace(device=SimpleNamespace(id=0))
    )
    monkeypatch.setattr(event._tls, "events", {}, raising=False)
    # Events made here hold fake handles: their finalizers must not reach a real
    # driver (on a GPU machine, cuEventDestroy of a fake handle crashes the process).
    monkeypatch.setattr(event, "_destroy", lambda *handles: None)
    return rec.calls


# -- CUDA Array Interface in ------------------------------------------------------------


def test_cai_view_reads_layout_flags_and_keeps_the_producer():
    obj = CAIObject((4, 6), "<f8", strides=(8, 32), readonly=True)
    v = interop.as_cuda_array(obj)
    assert (v.shape, v.strides, v.dtype, v.device_ptr) == ((4, 6), (8, 32), np.float64, FAKE_PTR)
    assert v.readonly and v.base is obj
    c = interop.as_cuda_array(CAIObject((4, 6), "<i4"))  # strides None: C order
    assert c.strides == (24, 4) and not c.readonly


def test_masked_and_stream_zero_cai_are_refused():
    obj = CAIObject((3,))
    obj.__cuda_array_interface__["mask"] = object()
    with pytest.raises(NotImplementedError, match="masked"):
        interop.as_cuda_array(obj)
    with pytest.raises(ValueError, match="stream 0"):
        interop.as_cuda_array(CAIObject((3,), stream=0))


def test_as_cuda_array_synchronizes_the_producer_stream(driver_calls):
    v = interop.as_cuda_array(CAIObject((3,), stream=0x5000))
    assert driver_calls == [("cuStreamSynchronize", 0x5000)]
    assert v.device_id == 1  # the pointer's device
    # The producer's stream, borrowed: numba's external stream.
    assert stream_handle(v.stream) == 0x5000 and v.stream.external
    driver_calls.clear()
    interop.as_cuda_array(CAIObject((3,), stream=0x5000), sync=False)
    interop.as_cuda_array(CAIObject((3,), stream=None))
    assert driver_calls == []


def test_launch_waits_on_the_cai_stream_through_an_event(driver_calls, monkeypatch):
    # With numba's synchronization off (tests/test_cai_stream_sync.py has it on): producer
    # stream 0x5000, launch on 0x9000: record on the producer, wait on the consumer.
    monkeypatch.setenv("CUJIT_CUDA_ARRAY_INTERFACE_SYNC", "0")
    values, writebacks = prepare_args(
        (Array(float32, 1),), (CAIObject((8,), stream=0x5000),), stream=0x9000
    )
    assert values == [FAKE_PTR, 8, 4] and writebacks == []
    assert driver_calls == [
        ("cuEventCreate", 2),
        ("cuEventRecord", 0xE0, 0x5000),
        ("cuStreamWaitEvent", 0x9000, 0xE0, 0),
    ]
    driver_calls.clear()
    # Same stream, or the legacy stream under its two names (1 and 0): nothing to order.
    prepare_args((Array(float32, 1),), (CAIObject((8,), stream=0x9000),), stream=0x9000)
    prepare_args((Array(float32, 1),), (CAIObject((8,), stream=1),), stream=0)
    prepare_args((Array(float32, 1),), (CAIObject((8,), version=2),), stream=0x9000)
    assert driver_calls == []
    # The event is reused (one per thread and device), never re-created.
    prepare_args((Array(float32, 1),), (CAIObject((8,), stream=2),), stream=0x9000)
    assert [c[0] for c in driver_calls] == ["cuEventRecord", "cuStreamWaitEvent"]


# -- streams -------------------------------------------------------------------------------


def test_stream_arguments_of_every_kind():
    class CoreLike:  # cuda.core / CuPy: the protocol method
        def __cuda_stream__(self):
            return (0, 0x1234)

    class TorchLike:  # a torch.cuda.Stream without the protocol
        cuda_stream = 0x4321

    assert stream_handle(CoreLike()) == 0x1234 and stream_handle(TorchLike()) == 0x4321
    assert int(as_cu_stream(CoreLike())) == 0x1234 and int(as_cu_stream(TorchLike())) == 0x4321
    assert stream_handle(None) == 0 and stream_handle(7) == 7
    s = external_stream(CoreLike())
    assert (
        s.handle == 0x1234 and s.__cuda_stream__() == (0, 0x1234) and isinstance(s.owner, CoreLike)
    )
    assert external_stream(0x99).handle == 0x99
    assert per_thread_default_stream().handle == 2
    assert same_stream(0, 1) and same_stream(5, 5) and not same_stream(0, 2)
    with pytest.raises(TypeError, match="expected a stream"):
        stream_handle("stream")


# -- read-only and device checks at launch ---------------------------------------------------


def test_readonly_arrays_refused_where_the_kernel_writes():
    types = (Array(float32, 1), Array(float32, 1))
    ro = CAIObject((8,), readonly=True)
    rw = fake_array(8)
    names = ("src", "out")
    # Reading a read-only array is fine; writing it is refused, naming the argument.
    prepare_args(types, (ro, rw), written=(False, True), names=names)
    with pytest.raises(
        LaunchError,
        match=r"argument 1 \('out'\) is a read-only CAIObject "
        r"buffer, but the kernel writes to it",
    ):
        prepare_args(types, (rw, ro), written=(False, True), names=names)
    frozen = np.zeros(8, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(LaunchError, match=r"argument 0 is a read-only NumPy array"):
        prepare_args(types, (frozen, rw), written=(True, False))
    ro_dev = fake_array(8, readonly=True)
    with pytest.raises(LaunchError, match="argument 1 .* read-only DeviceArray"):
        prepare_args((int32, Tuple((Array(float32, 1),))), (3, (ro_dev,)), written=(False, True))
    prepare_args(types, (ro_dev, ro_dev))  # no 'written' given: nothing checked
    with pytest.raises(LaunchError, match=r"argument 1 \('b'\) is a read-only device array"):
        check_writable((rw, ro_dev), (True, True), names=("a", "b"))
    check_writable((ro_dev, frozen), (False, False))


def test_arrays_on_another_device_are_refused():
    types = (Array(float32, 1), Array(float32, 1))
    on0, on1, unknown = fake_array(8, device_id=0), fake_array(8, device_id=1), fake_array(8)
    prepare_args(types, (on0, unknown), device_id=0)
    with pytest.raises(
        LaunchError,
        match=r"argument 1 \('y'\) is an array on GPU 1, but the "
        r"kernel is launched on GPU 0",
    ):
        prepare_args(types, (on0, on1), device_id=0, names=("x", "y"))
    with pytest.raises(LaunchError, match="argument 0 is an array on GPU 0.* on GPU 1"):
        check_devices(((on0,), 2.0), device_id=1)
    check_devices((on1, unknown, 3), device_id=1)
    assert on1[1:].device_id == 1 and on1[::-1].device_id == 1  # views keep the device


# -- arrays out: CUDA Array Interface and DLPack ----------------------------------------------


def test_cai_export_carries_readonly_and_stream():
    d = fake_array((3, 4))
    assert d.__cuda_array_interface__["data"] == (FAKE_PTR, False)
    assert d.__cuda_array_interface__["stream"] is None  # legacy default stream
    ro = fake_array(4, readonly=True, stream=SimpleNamespace(__cuda_stream__=lambda: (0, 0x77)))
    cai = ro.__cuda_array_interface__
    assert cai["data"] == (FAKE_PTR, True) and cai["stream"] == 0x77
    assert ro[1:].readonly  # views of a read-only array are read-only
    with pytest.raises(ValueError, match="read-only"):
        ro.copy_to_device(np.zeros(4, np.float32))


def _capsule_tensor(capsule, versioned: bool):
    name = b"dltensor_versioned" if versioned else b"dltensor"
    get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi)
    )
    cls = dlpack.DLManagedTensorVersioned if versioned else dlpack.DLManagedTensor
    return cls.from_address(get(capsule, name))


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_capsule_follows_dlpack_h(versioned):
    base = fake_array((5, 6), np.int16, device_id=3)
    d = base[1:5:2, ::-2]  # strides (24, -4) bytes -> (12, -2) elements
    live = len(dlpack._live)
    cap = d.__dlpack__(max_version=(1, 0) if versioned else None)
    m = _capsule_tensor(cap, versioned)
    t = m.dl_tensor
    assert t.data == d.device_ptr and t.byte_offset == 0
    assert (t.device.device_type, t.device.device_id) == (2, 3) == d.__dlpack_device__()
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (0, 16, 1)
    assert t.ndim == 2 and [t.shape[i] for i in range(2)] == [2, 3]
    assert [t.strides[i] for i in range(2)] == [12, -2]
    if versioned:
        assert (m.version.major, m.version.minor, m.flags) == (1, 0, 0)
    assert len(dlpack._live) == live + 1
    del cap, m, t  # never consumed: the capsule destructor calls the deleter
    gc.collect()
    assert len(dlpack._live) == live


def test_dlpack_export_refusals():
    ro = fake_array(4, readonly=True)
    with pytest.raises(BufferError, match="versioned"):
        ro.__dlpack__()
    assert _capsule_tensor(ro.__dlpack__(max_version=(1, 0)), True).flags == 1  # READ_ONLY
    with pytest.raises(BufferError, match="without copying"):
        fake_array(4).__dlpack__(copy=True)
    with pytest.raises(BufferError, match="DLPack device"):
        fake_array(4, device_id=0).__dlpack__(dl_device=(2, 1))
    with pytest.raises(BufferError, match="cannot describe"):
        fake_array(4, np.dtype("V4")).__dlpack__()


@pytest.mark.parametrize("readonly", [False, True])
def test_dlpack_round_trip_through_cuda_core(readonly):
    src = fake_array((4, 6), np.float32, order="F", readonly=readonly, device_id=0)[:, 1::2]
    producer = DLPackObject(src)
    live = len(dlpack._live)
    v = interop.from_dlpack(producer, stream=None)  # no ordering asked: no driver needed
    assert producer.calls[0]["stream"] == -1
    assert (v.shape, v.strides, v.dtype, v.device_ptr) == (
        src.shape,
        src.strides,
        src.dtype,
        src.device_ptr,
    )
    assert v.readonly == readonly and v.device_id == 0
    assert len(dlpack._live) == live + 1  # the consumer owns the capsule now
    del v
    gc.collect()
    assert len(dlpack._live) == live  # ... and called the deleter when done


def test_dlpack_launch_argument_passes_the_launch_stream(monkeypatch):
    src = fake_array(16, device_id=0)
    producer = DLPackObject(src)
    monkeypatch.setattr(event, "order_after", lambda p, c: None)  # the producer's ordering
    values, _ = prepare_args((Array(float32, 1),), (producer,), stream=0x9000, device_id=0)
    assert values == [FAKE_PTR, 16, 4]
    assert producer.calls[0]["stream"] == 0x9000
    prepare_args((Array(float32, 1),), (producer,), stream=0)
    assert producer.calls[1]["stream"] == 1  # DLPack's name for the legacy default stream
    assert interop.is_foreign_array(producer) and not interop.is_foreign_array(src)


def test_dlpack_of_host_memory_is_refused():
    with pytest.raises(TypeError, match="holds host memory"):
        interop.from_dlpack(np.arange(4.0), stream=None)
    with pytest.raises(TypeError, match="does not implement the DLPack protocol"):
        interop.from_dlpack([1, 2], stream=None)


# -- pickling ----------------------------------------------------------------------------------


def test_device_arrays_pickle_through_the_host(host_driver):  # noqa: F811
    from cujit.runtime import to_device

    host = np.random.default_rng().standard_normal((5, 7))
    d = to_device(host)
    back = pickle.loads(pickle.dumps(d))
    assert back.device_ptr != d.device_ptr  # a new allocation...
    np.testing.assert_array_equal(back.copy_to_host(), host)  # ... with the same values
    view = pickle.loads(pickle.dumps(d[::2, 1::3]))
    np.testing.assert_array_equal(view.copy_to_host(), host[::2, 1::3])
    d.readonly = True
    assert pickle.loads(pickle.dumps(d)).readonly


# -- several GPUs --------------------------------------------------------------------------------


def test_gpus_context_manager_restores_the_previous_device(monkeypatch):
    class FakeContext:
        def __init__(self, i):
            self.device = SimpleNamespace(id=i)

        def make_current(self):
            context._tls.ctx = self

    contexts = {i: FakeContext(i) for i in range(3)}

    def bind(i):
        contexts[i].make_current()
        return contexts[i]

    monkeypatch.setattr(context, "device_count", lambda: 3)
    monkeypatch.setattr(context, "_bind", bind)
    monkeypatch.setattr(context._tls, "ctx", contexts[0], raising=False)
    gpus = devices.gpus
    assert len(gpus) == 3 and gpus[-1].id == 2 and [g.id for g in gpus] == [0, 1, 2]
    with pytest.raises(IndexError, match="there is no GPU 3"):
        gpus[3]
    with gpus[2] as g:
        assert g.id == 2 and context._tls.ctx is contexts[2] and gpus.current.id == 2
        with gpus[1]:
            assert context.current_device_id() == 1
        assert context.current_device_id() == 2
    assert context._tls.ctx is contexts[0]


def test_no_gpu_means_no_gpus():
    if context.is_available():
        pytest.skip("checks the machine without a GPU")
    assert len(devices.gpus) == 0 and list(devices.gpus) == []


def test_graph_needs_a_capturable_stream_and_a_capture():
    from cujit.runtime.graph import Graph

    with pytest.raises(ValueError, match="legacy default stream cannot be captured"):
        Graph(0)
    with pytest.raises(ValueError, match="capture mode"):
        Graph(5, mode="eager")
    with pytest.raises(RuntimeError, match="not been captured"):
        Graph(5).launch()


def test_cuda_namespace_serves_the_new_names():
    from cujit import cuda

    for name in (
        "as_cuda_array",
        "from_dlpack",
        "pinned_array",
        "pinned",
        "event",
        "event_elapsed_time",
        "graph",
        "gpus",
        "select_device",
        "external_stream",
        "per_thread_default_stream",
        "get_current_device",
        "list_devices",
    ):
        assert callable(getattr(cuda, name)) or name == "gpus", name
    assert cuda.gpus is devices.gpus
