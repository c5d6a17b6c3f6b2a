"""The GPU runtime's ordering after a foreign array's stream (``runtime/interop.py``): as
numba, importing (``as_cuda_array``) and launching synchronize the stream a CUDA Array
Interface names; with ``CUJIT_CUDA_ARRAY_INTERFACE_SYNC=0`` a launch orders its stream
by an event instead and an import does not wait.  Driver calls are replaced by
recorders here; the last test (marked gpu) runs the real thing."""

from __future__ import annotations

import numpy as np
import pytest

from cujit.runtime import event, interop, stream
from cujit.runtime.memory import DeviceArray

FAKE_PTR = 0x7F00_0000_0000  # an address only used as a number


class Producer:
    def __init__(self, handle):
        self.__cuda_array_interface__ = {
            "shape": (8,),
            "typestr": "<f4",
            "data": (FAKE_PTR, False),
            "version": 3,
            "stream": handle,
        }


@pytest.fixture
def recorded(monkeypatch):
    calls = []

    class FakeStream:
        external = True

        def __init__(self, handle):
            self.handle = handle

        def synchronize(self):
            calls.append(("sync", self.handle))

    monkeypatch.setattr(stream, "external_stream", FakeStream)
    monkeypatch.setattr(event, "order_after", lambda p, c: calls.append(("event", p, c)))
    monkeypatch.setattr(interop, "_pointer_device", lambda ptr: 0)
    return calls


def test_launch_synchronizes_the_producers_stream_by_default(recorded):
    view = interop.import_for_launch(Producer(0x5000), 0x9000)
    assert isinstance(view, DeviceArray) and view.device_ptr == FAKE_PTR
    assert recorded == [("sync", 0x5000)]
    interop.import_for_launch(Producer(None), 0x9000)  # no stream named: nothing to order
    assert recorded == [("sync", 0x5000)]


def test_launch_orders_by_event_when_sync_is_off(recorded, monkeypatch):
    monkeypatch.setenv("CUJIT_CUDA_ARRAY_INTERFACE_SYNC", "0")
    interop.import_for_launch(Producer(0x5000), 0x9000)
    assert recorded == [("event", 0x5000, 0x9000)]


def test_import_synchronizes_unless_off(recorded, monkeypatch):
    got = interop.as_cuda_array(Producer(0x6000))
    assert got.stream.handle == 0x6000 and recorded == [("sync", 0x6000)]
    interop.as_cuda_array(Producer(0x6000), sync=False)
    monkeypatch.setenv("CUJIT_CUDA_ARRAY_INTERFACE_SYNC", "0")
    got = interop.as_cuda_array(Producer(0x6000))
    assert got.stream.handle == 0x6000 and recorded == [("sync", 0x6000)]


@pytest.mark.gpu
def test_gpu_launch_with_a_foreign_array_on_a_stream_gives_ready_data():
    from cujit import cuda

    s = cuda.stream()
    host = np.arange(1 << 16, dtype=np.float32) * 0.5 - 3.0
    src = cuda.to_device(host, stream=s)  # queued on s

    class Foreign:
        def __init__(self, arr):
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    @cuda.jit
    def double(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = 2.0 * x[i]

    out = cuda.device_array_like(host)
    double[(host.size + 255) // 256, 256](Foreign(src), out)
    np.testing.assert_array_equal(out.copy_to_host(), 2.0 * host)
