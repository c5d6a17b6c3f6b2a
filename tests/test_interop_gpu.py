"""CuPy, PyTorch and JAX arrays through cujit kernels with no copy (marked ``gpu``).

Each library's arrays go into a cujit kernel launched on a stream the library
owns, the results are read back through the libraries themselves, and
pointers are compared to show nothing was copied.  Outputs start as NaN so an
unwritten element fails; references are float64.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import LaunchError
from cujit.runtime.args import prepare_args
from cujit.types import Array, float32

pytestmark = pytest.mark.gpu


@cuda.jit
def scale_add_2d(a, x, y, out):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a * x[i, j] + y[i, j]


@cuda.jit
def double_1d(x, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = 2 * x[i]


def grid_for(shape, block=(16, 16)):
    return ((shape[0] + block[0] - 1) // block[0], (shape[1] + block[1] - 1) // block[1]), block


def rel_err(got, ref) -> float:
    ref = np.asarray(ref, np.float64)
    return float(np.linalg.norm(np.asarray(got, np.float64) - ref) / np.linalg.norm(ref))


def test_cupy_arrays_on_a_cupy_stream():
    cp = pytest.importorskip("cupy")
    s = cp.cuda.Stream(non_blocking=True)
    with s:  # produced on s; their CAI names s as the stream to order after
        x = cp.random.standard_normal((300, 200), dtype=cp.float32)
        y = cp.random.standard_normal((200, 300), dtype=cp.float32).T  # a transposed view
        out = cp.full((300, 200), cp.nan, dtype=cp.float32)
        ptr = out.data.ptr
        grid, block = grid_for(out.shape)
        scale_add_2d[grid, block, s](np.float32(1.5), x, y, out)  # a CuPy stream object
    s.synchronize()
    assert out.data.ptr == ptr  # written in place: no copy in or out
    ref = 1.5 * cp.asnumpy(x).astype(np.float64) + cp.asnumpy(y)
    assert rel_err(cp.asnumpy(out), ref) < 1e-6


def test_cupy_producer_stream_is_waited_for():
    # A slow producer on one CuPy stream, the kernel on another: the launch must
    # wait (CAI v3 stream field -> event wait), or it reads the old zeros.
    cp = pytest.importorskip("cupy")
    producer, consumer = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    n = 1 << 16
    x = cp.zeros(n, dtype=cp.float32)
    out = cp.full(n, cp.nan, dtype=cp.float32)
    cp.cuda.runtime.deviceSynchronize()
    with producer:
        big = cp.ones((4096, 4096), dtype=cp.float32)
        for _ in range(8):  # ~tens of milliseconds of matrix products
            big = (big @ big) * (1.0 / 4096)
        x[:] = 3 * big[0, 0]  # x becomes 3 only after the products
        double_1d[n // 256, 256, consumer](x, out)  # CAI read inside `with producer`
    consumer.synchronize()
    got = cp.asnumpy(out)
    assert (got == 6.0).all(), f"{np.count_nonzero(got != 6.0)} elements read too early"


def test_torch_tensors_and_transposed_views_on_a_torch_stream():
    torch = pytest.importorskip("torch")
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):
        a = torch.randn(200, 300, device="cuda")
        xt = a.t()  # (300, 200), strides (1, 300): not contiguous
        y = torch.randn(300, 200, device="cuda")
        out = torch.full((200, 300), float("nan"), device="cuda").t()  # written through a view
        ptr = out.data_ptr()
        grid, block = grid_for(out.shape)
        scale_add_2d[grid, block, ts](np.float32(-0.5), xt, y, out)
    ts.synchronize()
    assert out.data_ptr() == ptr and not out.is_contiguous()
    ref = -0.5 * xt.cpu().double().numpy() + y.cpu().double().numpy()
    assert rel_err(out.cpu().numpy(), ref) < 1e-6


def test_cujit_arrays_read_by_cupy_and_torch_without_copy():
    cp = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    x = rng.standard_normal((64, 48)).astype(np.float32)
    s = cuda.stream()
    dx = cuda.to_device(x, stream=s)
    dout = cuda.device_array((64, 48), np.float32, stream=s)
    dout.copy_to_device(np.full((64, 48), np.nan, np.float32), stream=s)
    grid, block = grid_for(x.shape)
    scale_add_2d[grid, block, s](np.float32(2.0), dx, dx, dout)
    # The consumers order themselves after our stream (CAI stream field, DLPack stream).
    c = cp.asarray(dout)
    t = torch.from_dlpack(dout)
    assert c.data.ptr == dout.device_ptr and t.data_ptr() == dout.device_ptr
    ref = 3.0 * x.astype(np.float64)  # 2x + x
    assert rel_err(cp.asnumpy(c), ref) < 1e-6
    assert rel_err(t.cpu().numpy(), ref) < 1e-6
    # A strided view travels with its strides.
    v = dout[::2, 1::3]
    tv = torch.from_dlpack(v)
    assert tv.data_ptr() == v.device_ptr and tv.stride() == (96, 3)
    assert rel_err(tv.cpu().numpy(), ref[::2, 1::3]) < 1e-6
    # And back in: the same memory seen through cuda.as_cuda_array / cuda.from_dlpack.
    assert cuda.as_cuda_array(c).device_ptr == dout.device_ptr
    assert cuda.from_dlpack(t).device_ptr == dout.device_ptr


def test_readonly_foreign_arrays_are_refused_where_written():
    cp = pytest.importorskip("cupy")
    x = cp.arange(256, dtype=cp.float32)

    class ReadOnly:  # a producer that lends its memory read-only
        def __init__(self, arr):
            cai = dict(arr.__cuda_array_interface__)
            cai["data"] = (cai["data"][0], True)
            self.__cuda_array_interface__ = cai
            self.arr = arr

    ro = ReadOnly(x)
    view = cuda.as_cuda_array(ro)
    assert view.readonly and view.device_id == 0
    types = (Array(float32, 1), Array(float32, 1))
    prepare_args(types, (ro, cp.empty(256, cp.float32)), written=(False, True), device_id=0)
    with pytest.raises(LaunchError, match=r"argument 1 \('out'\) is a read-only"):
        prepare_args(types, (x, ro), written=(False, True), names=("x", "out"))
    with pytest.raises(BufferError, match="versioned"):
        view.__dlpack__()  # legacy DLPack cannot say read-only
    torch = pytest.importorskip("torch")
    try:
        t = torch.from_dlpack(view)
    except (BufferError, RuntimeError) as exc:  # a consumer may refuse read-only memory
        assert "read" in str(exc).lower() or "only" in str(exc).lower()
    else:
        assert t.data_ptr() == view.device_ptr


def test_jax_arrays_through_dlpack():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    jnp = jax.numpy
    x = jnp.arange(4096, dtype=jnp.float32) * 0.25 - 7.0
    x.block_until_ready()
    dx = cuda.from_dlpack(x)  # JAX arrays are immutable: kernels only read them
    assert dx.device_ptr == x.unsafe_buffer_pointer() and dx.shape == (4096,)
    out = cuda.to_device(np.full(4096, np.nan, np.float32))
    double_1d[16, 256](dx, out)
    ref = 2.0 * np.asarray(x, np.float64)
    assert rel_err(out.copy_to_host(), ref) < 1e-6


def test_device_array_pickles_with_its_values():
    rng = np.random.default_rng()
    host = rng.standard_normal((33, 17))
    d = cuda.to_device(host)
    back = pickle.loads(pickle.dumps(d[3:, ::2]))
    assert back.device_ptr != d.device_ptr
    np.testing.assert_array_equal(back.copy_to_host(), host[3:, ::2])


def test_kernel_launch_checks_read_only_arguments_against_what_it_writes():
    """Through the dispatcher: a read-only array may be read, never written."""
    cp = pytest.importorskip("cupy")
    x = cp.arange(256, dtype=cp.float32)
    cai = dict(x.__cuda_array_interface__)
    cai["data"] = (cai["data"][0], True)
    ro = type("ReadOnly", (), {"__cuda_array_interface__": cai})()
    out = cuda.to_device(np.full(256, np.nan, np.float32))
    double_1d[1, 256](ro, out)  # read: allowed
    assert rel_err(out.copy_to_host(), 2.0 * np.arange(256)) < 1e-6
    with pytest.raises(LaunchError, match=r"argument 1 \('out'\) is a read-only"):
        double_1d[1, 256](out, ro)  # written: refused before the launch
    assert (cp.asnumpy(x) == np.arange(256)).all()


def test_dlpack_only_objects_are_kernel_arguments():
    """An array known only through DLPack (as JAX's are) goes straight into a kernel."""
    torch = pytest.importorskip("torch")
    t = torch.arange(1024, dtype=torch.float32, device="cuda") * 0.5

    class DLPackOnly:  # the protocol and nothing else
        def __init__(self, tensor):
            self.tensor = tensor

        def __dlpack__(self, **kwargs):
            return self.tensor.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.tensor.__dlpack_device__()

    out = cuda.to_device(np.full(1024, np.nan, np.float32))
    double_1d[4, 256](DLPackOnly(t), out)
    assert rel_err(out.copy_to_host(), 2.0 * 0.5 * np.arange(1024)) < 1e-6
