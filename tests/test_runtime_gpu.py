"""The runtime on a real GPU: cubins from stage 7, launches, memory, streams, errors.

The kernels are hand-written NVVM IR using the ``cujit.abi`` parameter layout,
so these tests exercise the runtime without depending on the compiler's front
stages.  Marked ``gpu``: skipped where no GPU is present.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

from cujit import abi, cuda
from cujit.diagnostics import LaunchError
from cujit.ptx import compile_ptx, link_cubin
from cujit.runtime import (
    CudaDriverError,
    device_array,
    device_array_like,
    finish_writebacks,
    get_device,
    get_packer,
    launch_with_args,
    load_module,
    prepare_args,
    synchronize,
    to_device,
)
from cujit.runtime.driver import call
from cujit.runtime.launch import launch
from cujit.runtime.stream import stream
from cujit.types import Array, boolean, float32, float64, int16, int32, int64, uint8

pytestmark = pytest.mark.gpu

HEADER = """
target triple = "nvptx64-nvidia-cuda"
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
"""  # noqa: E501 -- the NVPTX data layout is one LLVM line

# saxpy(a: float32, x: float32[:], y: float32[:], out: float32[:]): out[i] = a*x[i] + y[i]
# for i < len(out).  Addresses use the byte strides, so strided views work.
SAXPY = (
    HEADER
    + """
define void @saxpy(float %a, float* %x, i64 %nx, i64 %sx, float* %y, i64 %ny, i64 %sy,
                   float* %out, i64 %nout, i64 %sout) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %nt = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %b = mul i32 %c, %nt
  %i32 = add i32 %b, %t
  %i = sext i32 %i32 to i64
  %ok = icmp slt i64 %i, %nout
  br i1 %ok, label %body, label %done
body:
  %xb = bitcast float* %x to i8*
  %xo = mul i64 %i, %sx
  %xp8 = getelementptr i8, i8* %xb, i64 %xo
  %xp = bitcast i8* %xp8 to float*
  %xv = load float, float* %xp
  %yb = bitcast float* %y to i8*
  %yo = mul i64 %i, %sy
  %yp8 = getelementptr i8, i8* %yb, i64 %yo
  %yp = bitcast i8* %yp8 to float*
  %yv = load float, float* %yp
  %ax = fmul float %a, %xv
  %r = fadd float %ax, %yv
  %ob = bitcast float* %out to i8*
  %oo = mul i64 %i, %sout
  %op8 = getelementptr i8, i8* %ob, i64 %oo
  %op = bitcast i8* %op8 to float*
  store float %r, float* %op
  br label %done
done:
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (float, float*, i64, i64, float*, i64, i64, float*, i64, i64)* @saxpy, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0, i32 3, i32 1}
"""
)
SAXPY_TYPES = (float32, Array(float32, 1), Array(float32, 1), Array(float32, 1))

# probe(b: bool, i: int32, d: float64, u: uint8, q: int64, f: float32, h: int16,
#       out: float64[:]) writes each scalar, converted to float64, to out[0..6]:
# one parameter of every width, so misaligned or misordered packing shows.
PROBE = (
    HEADER
    + """
define void @probe(i8 %b, i32 %i, double %d, i8 %u, i64 %q, float %f, i16 %h,
                   double* %out, i64 %n, i64 %s) {
entry:
  %ob = bitcast double* %out to i8*
  %v0 = uitofp i8 %b to double
  %v1 = sitofp i32 %i to double
  %v3 = uitofp i8 %u to double
  %v4 = sitofp i64 %q to double
  %v5 = fpext float %f to double
  %v6 = sitofp i16 %h to double
  call void @put(i8* %ob, i64 %s, i64 0, double %v0)
  call void @put(i8* %ob, i64 %s, i64 1, double %v1)
  call void @put(i8* %ob, i64 %s, i64 2, double %d)
  call void @put(i8* %ob, i64 %s, i64 3, double %v3)
  call void @put(i8* %ob, i64 %s, i64 4, double %v4)
  call void @put(i8* %ob, i64 %s, i64 5, double %v5)
  call void @put(i8* %ob, i64 %s, i64 6, double %v6)
  ret void
}
define internal void @put(i8* %base, i64 %stride, i64 %k, double %v) alwaysinline {
  %o = mul i64 %k, %stride
  %p8 = getelementptr i8, i8* %base, i64 %o
  %p = bitcast i8* %p8 to double*
  store double %v, double* %p
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (i8, i32, double, i8, i64, float, i16, double*, i64, i64)* @probe, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0, i32 3, i32 1}
"""
)
PROBE_TYPES = (boolean, int32, float64, uint8, int64, float32, int16, Array(float64, 1))

_cache: dict = {}


def kernel(ir: str, name: str):
    """Compile, link and load a hand-written kernel for the current device (once)."""
    if name not in _cache:
        cc = get_device().compute_capability
        cubin = link_cubin(compile_ptx(ir, cc), cc)
        _cache[name] = load_module(cubin).get_function(name)
    return _cache[name]


def kinds(types):
    return [k for t in types for k in abi.param_kinds(t)]


def rel_err(got, ref) -> float:
    ref = np.asarray(ref, np.float64)
    return float(np.linalg.norm(np.asarray(got, np.float64) - ref) / np.linalg.norm(ref))


def test_saxpy_on_device_arrays():
    rng = np.random.default_rng()
    n = 1_000_003  # not a multiple of the block: the bound check matters
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = np.float32(rng.uniform(0.5, 2.0))
    dx, dy = to_device(x), to_device(y)
    dout = to_device(np.full(n, np.nan, np.float32))
    values, writebacks = prepare_args(SAXPY_TYPES, (a, dx, dy, dout))
    assert writebacks == []
    fn = kernel(SAXPY, "saxpy")
    launch(fn, ((n + 255) // 256,), (256,), 0, 0, get_packer(kinds(SAXPY_TYPES)), values)
    got = dout.copy_to_host()
    ref = np.float64(a) * x + y
    assert not np.isnan(got).any()
    assert rel_err(got, ref) < 1e-6


def test_saxpy_on_host_arrays_copies_back():
    rng = np.random.default_rng()
    n = 5000
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = np.full(n, np.nan, np.float32)
    fn = kernel(SAXPY, "saxpy")
    launch_with_args(
        fn,
        (n + 127) // 128,
        128,
        0,
        0,
        kinds(SAXPY_TYPES),
        SAXPY_TYPES,
        (np.float32(-1.5), x, y, out),
    )
    assert rel_err(out, -1.5 * x.astype(np.float64) + y) < 1e-6


def test_saxpy_on_strided_views():
    rng = np.random.default_rng()
    base_x = rng.standard_normal(3000).astype(np.float32)
    base_y = rng.standard_normal(3000).astype(np.float32)
    poison = np.full(4000, np.nan, np.float32)
    dx, dy, dout = to_device(base_x), to_device(base_y), to_device(poison)
    x, y, out = dx[::3], dy[2000:1000:-1], dout[1::4]  # strided, reversed, strided
    del dx, dy, dout  # the views keep the allocations alive
    gc.collect()
    n = len(out)
    assert n == 1000 and len(x) == 1000 and len(y) == 1000
    fn = kernel(SAXPY, "saxpy")
    values, _ = prepare_args(SAXPY_TYPES, (np.float32(2.0), x, y, out))
    assert values[3] == 12 and values[6] == -4 and values[9] == 16  # byte strides
    launch(fn, (n + 255) // 256, 256, 0, 0, kinds(SAXPY_TYPES), values)
    ref = 2.0 * base_x[::3].astype(np.float64) + base_y[2000:1000:-1]
    assert rel_err(out.copy_to_host(), ref) < 1e-6
    whole = out.base  # the underlying allocation, through the view
    full = np.empty(4000, np.float32)
    call("cuMemcpyDtoH", full.ctypes.data, whole.ptr, 16000)
    assert np.isnan(np.delete(full, np.arange(1, 4000, 4))).all()  # nothing else written


def test_every_scalar_width_reaches_the_kernel():
    out = to_device(np.full(8, np.nan))
    args = (True, -123456, 2.0**-30 + 1.0, 250, -(2**40) - 3, np.float32(0.15625), -31000, out)
    values, _ = prepare_args(PROBE_TYPES, args)
    launch(kernel(PROBE, "probe"), 1, 1, 0, 0, kinds(PROBE_TYPES), values)
    got = out.copy_to_host()
    assert got[:7].tolist() == [
        1.0,
        -123456.0,
        2.0**-30 + 1.0,
        250.0,
        float(-(2**40) - 3),
        0.15625,
        -31000.0,
    ]
    assert np.isnan(got[7])


def test_stream_launch_and_copies():
    rng = np.random.default_rng()
    n = 1 << 20
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    s = stream()
    dx, dy = to_device(x, stream=s), to_device(y, stream=s)
    dout = device_array_like(x, stream=s)
    values, _ = prepare_args(SAXPY_TYPES, (np.float32(3.0), dx, dy, dout), stream=s)
    launch(kernel(SAXPY, "saxpy"), n // 256, 256, s, 0, kinds(SAXPY_TYPES), values)
    got = dout.copy_to_host(stream=s)
    s.synchronize()
    assert rel_err(got, 3.0 * x.astype(np.float64) + y) < 1e-6


def test_dynamic_shared_memory_above_48k_is_opted_in():
    fn = kernel(SAXPY, "saxpy")
    dev = get_device()
    d = to_device(np.ones(256, np.float32))
    values, _ = prepare_args(SAXPY_TYPES, (np.float32(1.0), d, d, d))
    launch(fn, 1, 256, 0, 64 * 1024, kinds(SAXPY_TYPES), values)
    synchronize()
    assert fn.max_dynamic_shared >= 64 * 1024
    assert (d.copy_to_host() == 2.0).all()
    with pytest.raises(LaunchError, match="dynamic shared memory"):
        launch(fn, 1, 256, 0, dev.max_shared_memory_per_block_optin + 1, kinds(SAXPY_TYPES), values)


def test_bad_launch_shape_fails_before_the_driver():
    fn = kernel(SAXPY, "saxpy")
    with pytest.raises(LaunchError, match="2048 threads"):
        launch(fn, 1, (1024, 2), 0, 0, kinds(SAXPY_TYPES), [0.0] + [0] * 9)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(7,), (5, 6), (2, 3, 4), (0, 3)])
def test_round_trip(shape, order):
    host = np.asarray(np.random.default_rng().standard_normal(shape), order=order)
    d = to_device(host)
    assert d.shape == host.shape
    back = d.copy_to_host()
    if host.size:  # NumPy's strides for empty arrays vary between versions
        assert d.strides == host.strides and back.strides == host.strides
    np.testing.assert_array_equal(back, host)
    into = np.full(shape, np.nan)
    assert d.copy_to_host(into) is into
    np.testing.assert_array_equal(into, host)


def test_strided_view_copies(monkeypatch):
    host = np.arange(48, dtype=np.int32).reshape(6, 8)
    d = to_device(host)
    v = d[1:6:2, ::-3]
    # numba's rule: a view with a negative stride does not copy to the host...
    monkeypatch.delenv("CUJIT_NEGATIVE_STRIDE_COPIES", raising=False)
    with pytest.raises(NotImplementedError, match="negative strides"):
        v.copy_to_host()
    # ... unless cujit's switch lets it
    monkeypatch.setenv("CUJIT_NEGATIVE_STRIDE_COPIES", "1")
    np.testing.assert_array_equal(v.copy_to_host(), host[1:6:2, ::-3])
    assert d[4, 5] == host[4, 5]  # one element comes back as a scalar
    new = -np.arange(v.size, dtype=np.int32).reshape(v.shape) - 1
    v.copy_to_device(new)
    expect = host.copy()
    expect[1:6:2, ::-3] = new
    np.testing.assert_array_equal(d.copy_to_host(), expect)  # only the view changed
    d[0] = 99
    expect[0] = 99
    np.testing.assert_array_equal(d.copy_to_host(), expect)


def test_device_to_device_copy_and_empty_arrays():
    a = to_device(np.arange(10.0))
    b = device_array(10)
    b.copy_to_device(a)
    np.testing.assert_array_equal(b.copy_to_host(), np.arange(10.0))
    e = device_array((0, 4), np.float32)
    assert e.device_ptr == 0 and e.copy_to_host().shape == (0, 4)


def test_freed_memory_is_returned():
    nbytes = 2 << 30
    free_before, _ = call("cuMemGetInfo")
    d = device_array(nbytes, np.uint8)
    free_during, _ = call("cuMemGetInfo")
    assert free_before - free_during >= nbytes
    del d
    gc.collect()
    # as numba's, the free is queued (2 GiB is under a fifth of the device) until the
    # pending list is cleared
    cuda.current_context().deallocations.clear()
    free_after, _ = call("cuMemGetInfo")
    assert free_after >= free_during + nbytes


def test_cuda_array_interface_objects_pass_by_pointer():
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng()
    x, y = (rng.standard_normal(4096).astype(np.float32) for _ in range(2))
    cx, cy = cupy.asarray(x), cupy.asarray(y)
    cout = cupy.full(4096, cupy.nan, dtype=cupy.float32)
    cupy.cuda.runtime.deviceSynchronize()
    values, writebacks = prepare_args(SAXPY_TYPES, (np.float32(0.5), cx, cy, cout))
    assert writebacks == [] and values[1] == cx.data.ptr
    launch(kernel(SAXPY, "saxpy"), 16, 256, 0, 0, kinds(SAXPY_TYPES), values)
    synchronize()
    assert rel_err(cupy.asnumpy(cout), 0.5 * x.astype(np.float64) + y) < 1e-6


def test_driver_errors_name_the_call_and_the_error():
    with pytest.raises(CudaDriverError, match=r"cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE"):
        call("cuDeviceGet", 9999)
    with pytest.raises(CudaDriverError, match=r"cuModuleLoadData failed: CUDA_ERROR_\w+"):
        load_module(b"\x7fELF" + b"\0" * 200)


def test_cubin_for_another_arch_says_which():
    cc = get_device().compute_capability
    other = (8, 0) if cc != (8, 0) else (9, 0)
    cubin = link_cubin(compile_ptx(SAXPY, other), other)
    with pytest.raises(CudaDriverError, match=f"cubin is for sm_{other[0]}{other[1]}"):
        load_module(cubin)


def test_writebacks_wait_for_the_kernel():
    # finish_writebacks on a stream: the host sees the result on return.
    n = 1 << 16
    x = np.random.default_rng().standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    s = stream()
    values, writebacks = prepare_args(SAXPY_TYPES, (np.float32(1.0), x, x, out), stream=s)
    assert len(writebacks) == 3
    launch(kernel(SAXPY, "saxpy"), n // 256, 256, s, 0, kinds(SAXPY_TYPES), values)
    finish_writebacks(writebacks, stream=s)
    np.testing.assert_array_equal(out, 2 * x)
