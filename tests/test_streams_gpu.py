"""Streams, events, pinned memory, CUDA graphs and several GPUs (marked ``gpu``)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import LaunchError
from cujit.runtime.devices import check_devices
from cujit.runtime.host import is_pinned

pytestmark = pytest.mark.gpu


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] = x[i] + 1.0


@cuda.jit
def affine(x, a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + b


@cuda.jit
def spin(x, steps, out):
    # Slow on purpose: `steps` dependent multiply-adds per element, so a launch
    # lasts long enough for the host to observe that it has not finished.
    i = cuda.grid(1)
    if i < out.shape[0]:
        acc = x[i]
        for _ in range(steps):
            acc = acc * 0.999999 + 1e-6
        out[i] = acc


def blocks(n, threads=256):
    return (n + threads - 1) // threads


def test_pinned_async_copies_and_kernel_on_a_stream():
    n = 1 << 20
    rng = np.random.default_rng()
    h = cuda.pinned_array(n, np.float32)
    h[:] = rng.standard_normal(n)
    assert is_pinned(h) and not is_pinned(np.ones(4))
    back = cuda.pinned_array_like(h)
    back[:] = np.nan
    s = cuda.stream()
    with s.auto_synchronize():
        d = cuda.to_device(h, stream=s)
        out = cuda.device_array_like(h, stream=s)
        affine[blocks(n), 256, s](d, np.float32(3.0), np.float32(-1.0), out)
        out.copy_to_host(back, stream=s)
    ref = 3.0 * h.astype(np.float64) - 1.0
    assert np.linalg.norm(back - ref) / np.linalg.norm(ref) < 1e-6


def test_copy_to_pinned_memory_returns_before_the_stream_finishes():
    n = 4096
    s = cuda.stream()
    x = cuda.to_device(np.ones(n, np.float32))
    out = cuda.device_array(n, np.float32)
    h = cuda.pinned_array(n, np.float32)
    h[:] = np.nan
    spin[blocks(n), 256, s](x, 1, out)  # compile and load first
    s.synchronize()
    t0 = time.perf_counter()
    spin[blocks(n), 256, s](x, 1 << 22, out)
    out.copy_to_host(h, stream=s)
    issued = time.perf_counter() - t0
    busy = not s.query()  # the host got control back while the GPU still works
    s.synchronize()
    total = time.perf_counter() - t0
    assert busy, f"issue took {issued * 1e3:.1f} ms of {total * 1e3:.1f} ms"
    assert not np.isnan(h).any() and np.allclose(h, h[0])


def test_default_per_thread_and_external_streams():
    cp = pytest.importorskip("cupy")
    n = 10_000
    x = cuda.to_device(np.arange(n, dtype=np.float32))
    for s in (cuda.default_stream(), cuda.per_thread_default_stream(), 0, None):
        out = cuda.to_device(np.full(n, np.nan, np.float32))
        affine[blocks(n), 256, s](x, np.float32(2.0), np.float32(1.0), out)
        cuda.synchronize()
        np.testing.assert_array_equal(out.copy_to_host(), 2 * np.arange(n, dtype=np.float32) + 1)
    cs = cp.cuda.Stream(non_blocking=True)
    ext = cuda.external_stream(cs.ptr)
    assert ext.handle == cs.ptr
    out = cuda.to_device(np.full(n, np.nan, np.float32))
    affine[blocks(n), 256, ext](x, np.float32(-1.0), np.float32(0.5), out)
    cs.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), 0.5 - np.arange(n, dtype=np.float32))


def test_event_timing_and_cross_stream_wait():
    n = 4096
    s1, s2 = cuda.stream(non_blocking=True), cuda.stream(non_blocking=True)
    x = cuda.to_device(np.ones(n, np.float32))
    mid = cuda.to_device(np.full(n, np.nan, np.float32))
    out = cuda.to_device(np.full(n, np.nan, np.float32))
    spin[blocks(n), 256, s1](x, 1, mid)
    affine[blocks(n), 256, s2](mid, np.float32(1.0), np.float32(0.0), out)
    cuda.synchronize()
    start, end, ready = cuda.event(), cuda.event(), cuda.event(timing=False)
    start.record(s1)
    spin[blocks(n), 256, s1](x, 1 << 20, mid)
    end.record(s1)
    ready.record(s1)
    ready.wait(s2)  # s2 waits for the slow kernel on the device; the host does not block
    affine[blocks(n), 256, s2](mid, np.float32(2.0), np.float32(0.0), out)
    s2.synchronize()
    assert end.query() and ready.query()
    ms = cuda.event_elapsed_time(start, end)
    assert ms > 0.5 and start.elapsed_time(end) == ms
    expect = mid.copy_to_host() * 2
    np.testing.assert_array_equal(out.copy_to_host(), expect)  # read after the slow kernel
    with pytest.raises(ValueError, match="timing=True"):
        cuda.event_elapsed_time(start, ready)


def test_graph_capture_and_replay():
    n = 1000
    s = cuda.stream()
    x = cuda.to_device(np.zeros(n, np.float32))
    add_one[blocks(n), 256, s](x)  # warm up: compiling and loading cannot be captured
    s.synchronize()
    with cuda.graph(s) as g:
        for _ in range(100):
            add_one[blocks(n), 256, s](x)
    s.synchronize()
    assert (x.copy_to_host() == 1).all()  # capturing ran nothing
    assert g.node_count == 100
    g.launch()
    g.launch()
    g.synchronize()
    assert (x.copy_to_host() == 201).all()
    other = cuda.stream()
    g.launch(other)  # replays on any stream
    other.synchronize()
    assert (x.copy_to_host() == 301).all()


def test_graph_capture_refuses_host_arrays_and_recovers():
    s = cuda.stream()
    h = np.zeros(256, np.float32)
    add_one[1, 256, s](cuda.to_device(h))  # compile first
    s.synchronize()
    refused = pytest.raises(Exception, match="(?i)captur|not permitted|not supported|CUDA_ERROR")
    with refused, cuda.graph(s):
        add_one[1, 256, s](h)  # a host array needs an allocation and a copy
    d = cuda.to_device(h)
    add_one[1, 256, s](d)  # the stream works again after the failed capture
    s.synchronize()
    assert (d.copy_to_host() == 1).all()


def test_kernels_on_two_gpus():
    if len(cuda.gpus) < 2:
        pytest.skip(f"needs two GPUs; this machine has {len(cuda.gpus)}")
    n = 50_000
    rng = np.random.default_rng()
    arrays = {}
    for i in (0, 1):
        with cuda.gpus[i] as gpu:
            assert cuda.get_current_device().id == i and gpu.compute_capability >= (7, 0)
            x = rng.standard_normal(n).astype(np.float32)
            d = cuda.to_device(x)
            out = cuda.to_device(np.full(n, np.nan, np.float32))
            assert d.device_id == i and out.device_id == i
            affine[blocks(n), 256](d, np.float32(i + 2), np.float32(i), out)
            got = out.copy_to_host()
            ref = (i + 2) * x.astype(np.float64) + i
            assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-6, f"GPU {i}"
            arrays[i] = out
    assert cuda.get_current_device().id == 0  # the block restored the previous device
    with pytest.raises(LaunchError, match=r"argument 0 \('x'\) is an array on GPU 1"):
        check_devices((arrays[1],), device_id=0, names=("x",))
    with cuda.gpus[1]:
        check_devices((arrays[1],))
