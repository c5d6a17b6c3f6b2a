"""cuda.mapped_array and cuda.managed_array: host arrays that kernels address directly.

On the CPU target they are host device arrays; on the GPU runtime they are NumPy
array subclasses over cuMemHostAlloc(DEVICEMAP) / cuMemAllocManaged memory with a
CUDA Array Interface, passed to kernels by device address with no copy.  The
runtime's side is tested here without a GPU too: buffers over NumPy memory
(``ReachableBuffer._over``) and a stand-in driver stand for the allocations.
GPU tests are marked ``gpu``.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

from cujit import cuda
from cujit.argtypes import fast_typeof
from cujit.diagnostics import LaunchError
from cujit.runtime import mapped
from cujit.runtime.args import check_writable, prepare_args
from cujit.runtime.driver import CudaDriverError
from cujit.runtime.host import is_pinned
from cujit.targets.cpu import memory as cpu_memory
from cujit.types import typeof


def add_index_1d(x, k):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] = x[i] * k + i


def add_index_2d(x, k):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        x[i, j] = x[i, j] * k + i * 10 + j


cpu_1d = cuda.jit(add_index_1d, target="cpu")
cpu_2d = cuda.jit(add_index_2d, target="cpu")


def expected(before: np.ndarray, k: int) -> np.ndarray:
    idx = np.indices(before.shape)
    extra = idx[0] if before.ndim == 1 else idx[0] * 10 + idx[1]
    return (before.astype(np.float64) * k + extra).astype(before.dtype)


def run_cpu(a, k=3):
    if a.ndim == 1:
        cpu_1d[(a.shape[0] + 31) // 32, 32](a, k)
    else:
        cpu_2d[((a.shape[0] + 7) // 8, (a.shape[1] + 7) // 8), (8, 8)](a, k)


def fill(a):
    a[...] = np.arange(a.size).reshape(a.shape) % 17


# -- the CPU target ----------------------------------------------------------------------

CPU_MAKERS = {
    "mapped": lambda *a, **k: cpu_memory.mapped_array(*a, **k),
    "mapped-flags": lambda *a, **k: cpu_memory.mapped_array(*a, portable=True, wc=True, **k),
    "managed": lambda *a, **k: cpu_memory.managed_array(*a, **k),
    "managed-host": lambda *a, **k: cpu_memory.managed_array(*a, attach_global=False, **k),
}


@pytest.mark.parametrize("kind", sorted(CPU_MAKERS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int64])
@pytest.mark.parametrize("shape,order", [(37, "C"), ((5, 9), "C"), ((5, 9), "F"), ((1, 33), "F")])
def test_cpu_kernel_writes_are_read_on_the_host(kind, dtype, shape, order):
    a = CPU_MAKERS[kind](shape, dtype, order=order)
    assert isinstance(a, np.ndarray) and a.dtype == dtype
    assert a.shape == ((shape,) if isinstance(shape, int) else shape)
    assert a.flags.f_contiguous if order == "F" else a.flags.c_contiguous
    fill(a)
    before = np.array(a)
    run_cpu(a)
    np.testing.assert_array_equal(a, expected(before, 3))


@pytest.mark.parametrize("kind", ["mapped", "managed"])
def test_cpu_explicit_strides_and_default_dtype(kind):
    # Rows padded to 8 float64s: a kernel on the (5, 6) array leaves the padding alone.
    a = CPU_MAKERS[kind]((5, 6), strides=(64, 8))
    assert a.dtype == np.float64 and a.strides == (64, 8)
    padded = np.lib.stride_tricks.as_strided(a, (4, 8), (64, 8))  # rows 0-3 with padding
    padded[...] = -1.0
    fill(a)
    before = np.array(a)
    run_cpu(a, 2)
    np.testing.assert_array_equal(a, expected(before, 2))
    assert (padded[:, 6:] == -1.0).all()


def test_cpu_views_are_written_through():
    a = cpu_memory.managed_array((6, 8), np.float32)
    a[...] = 0
    run_cpu(a[1::2, ::3], 1)  # a strided view: the kernel writes the parent's memory
    ref = np.zeros((6, 8), np.float32)
    ref[1::2, ::3] = expected(np.zeros((3, 3), np.float32), 1)
    np.testing.assert_array_equal(a, ref)


def test_cpu_mapped_array_like_keeps_shape_dtype_and_stride_order():
    src = np.empty((3, 4, 5), np.int32)[:, ::2].transpose(2, 0, 1)  # neither C nor F
    b = cpu_memory.mapped_array_like(src)
    assert b.shape == src.shape and b.dtype == src.dtype
    assert b.strides == (4, 40, 20)  # packed, dimensions ordered as src's strides
    f = cpu_memory.mapped_array_like(np.empty((3, 4), order="F"))
    assert f.flags.f_contiguous and not f.flags.c_contiguous


def test_cpu_target_names_resolve_to_host_memory():
    # A fresh process: the cuda namespace resolves names once, from CUJIT_TARGET.
    code = (
        "import numpy as np\n"
        "from cujit import cuda\n"
        "from cujit.targets.cpu import memory\n"
        "assert cuda.mapped_array is memory.mapped_array\n"
        "assert cuda.managed_array is memory.managed_array\n"
        "assert cuda.mapped_array_like is memory.mapped_array_like\n"
        "@cuda.jit\n"
        "def k(x, y):\n"
        "    i = cuda.grid(1)\n"
        "    if i < x.shape[0]:\n"
        "        y[i] = 2 * x[i] + 1\n"
        "x = cuda.managed_array(100, np.float32)\n"
        "x[:] = np.arange(100)\n"
        "y = cuda.mapped_array(100, np.float32, portable=True)\n"
        "k[4, 32](x, y)\n"
        "cuda.synchronize()\n"
        "assert (y == 2 * np.arange(100) + 1).all(), y\n"
        "print('ok')\n"
    )
    env = dict(os.environ, CUJIT_TARGET="cpu")
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_the_names_are_supported():
    from cujit.cuda import _CPU_NAMES, _RUNTIME_NAMES, NOT_SUPPORTED

    for name in ("mapped_array", "managed_array", "mapped_array_like"):
        assert name not in NOT_SUPPORTED
        assert _RUNTIME_NAMES[name] == "cujit.runtime.mapped"
        assert _CPU_NAMES[name] == "cujit.targets.cpu.memory"
        assert callable(getattr(cuda, name))


# -- the runtime's arrays, without a GPU: buffers over NumPy memory ------------------------

DEVICE_OFFSET = 0x10_0000_0000  # a device address space apart from the host's


def fake(cls, shape, dtype=np.float32, strides=None, order="C", offset=DEVICE_OFFSET):
    """A runtime array over NumPy memory, its 'device address' ``offset`` bytes away."""
    shape, dtype, strides, nbytes = mapped._layout(shape, dtype, strides, order)
    host = np.zeros(max(nbytes, 1), np.uint8)
    buf = mapped.ReachableBuffer._over(host.ctypes.data, host.ctypes.data + offset, nbytes)
    buf_keep[id(buf)] = host  # the NumPy memory lives as long as the test module
    return mapped.wrap(buf, cls, shape, dtype, strides)


buf_keep: dict = {}


def host_ptr(a) -> int:
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("cls", [mapped.MappedArray, mapped.ManagedArray])
def test_cuda_array_interface_gives_the_device_address_of_each_view(cls):
    a = fake(cls, (6, 8), np.float64)
    cai = a.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (6, 8) and cai["strides"] is None
    assert cai["data"] == (host_ptr(a) + DEVICE_OFFSET, False) and cai["typestr"] == "<f8"
    assert cai["stream"] is None
    for view in (a[2:, 1::3], a.T, a[5], a[::-1], a.reshape(48)[7:]):
        assert isinstance(view, cls)
        cai = view.__cuda_array_interface__
        assert cai["data"][0] == host_ptr(view) + DEVICE_OFFSET
        assert cai["shape"] == view.shape
        assert cai["strides"] == (None if view.flags.c_contiguous else view.strides)
    assert cuda.is_cuda_array(a) and mapped.buffer_of(a[1:]) is mapped.buffer_of(a)
    assert a.alloc_size == 6 * 8 * 8 and a[1:].alloc_size == 6 * 8 * 8


def test_arrays_over_other_memory_are_host_arrays():
    a = fake(mapped.MappedArray, 16)
    for other in (a + 1, a.copy(), np.sin(a)):
        assert not hasattr(other, "__cuda_array_interface__")
        assert other._cujit_device_view() is None
    assert not hasattr(np.asarray(a), "__cuda_array_interface__")  # a plain ndarray view


def test_readonly_views_say_so():
    a = fake(mapped.ManagedArray, 8)
    r = a[2:]
    r.flags.writeable = False
    assert r.__cuda_array_interface__["data"][1] is True
    assert r._cujit_device_view().readonly


@pytest.mark.parametrize("cls", [mapped.MappedArray, mapped.ManagedArray])
def test_launch_arguments_are_device_views_with_no_copy(cls):
    a = fake(cls, (4, 6), np.float32)
    v = a[1:, ::2]
    t = typeof(v)
    values, writebacks = prepare_args([t], [v], written=(True,), device_id=0, names=["x"])
    # A host array would have a device copy and a copy back; this one only the mark of
    # a pending write (runtime/pending.py), the kernel writing it.
    assert [type(w).__name__ for w in writebacks] == ["PendingWrite"]
    assert values == [host_ptr(v) + DEVICE_OFFSET, 3, 3, 24, 8]
    # Typed as NumPy arrays of the same layout: the same specialisations serve both.
    plain = np.zeros((4, 6), np.float32)
    assert typeof(a) == typeof(plain) and fast_typeof(a) is fast_typeof(plain)
    assert typeof(v) == typeof(plain[1:, ::2]) and typeof(a.T) == typeof(plain.T)


def test_a_readonly_mapped_array_is_refused_where_the_kernel_writes():
    a = fake(mapped.MappedArray, 8)
    a.flags.writeable = False
    with pytest.raises(LaunchError, match=r"argument 0 \('x'\) is a read-only MappedArray"):
        prepare_args([typeof(a)], [a], written=(True,), device_id=0, names=["x"])
    with pytest.raises(LaunchError, match="read-only"):
        check_writable([a], (True,), ["x"])
    values, writebacks = prepare_args([typeof(a)], [a], written=(False,), device_id=0)
    assert values[0] == host_ptr(a) + DEVICE_OFFSET and writebacks == []


def test_runtime_arrays_run_on_the_cpu_target():
    # On the CPU target the host address is the one used; values land in the array.
    a = fake(mapped.ManagedArray, (5, 7), np.float64)
    fill(a)
    before = np.array(a)
    run_cpu(a, 4)
    np.testing.assert_array_equal(a, expected(before, 4))


def test_host_side_numba_methods():
    a = fake(mapped.MappedArray, (3, 4), np.int32, order="F")
    a.copy_to_device(np.arange(12).reshape(3, 4))
    h = a.copy_to_host()
    assert type(h) is np.ndarray and h.flags.f_contiguous
    np.testing.assert_array_equal(h, np.arange(12).reshape(3, 4))
    out = np.empty((3, 4), np.int32)
    assert a.copy_to_host(out) is out and (out == h).all()
    with pytest.raises(ValueError, match="shape"):
        a.copy_to_host(np.empty(3, np.int32))
    assert a.is_f_contiguous() and not a.is_c_contiguous()
    assert a.device_ctypes_pointer.value == host_ptr(a) + DEVICE_OFFSET


@pytest.mark.parametrize(
    "shape,strides,err",
    [((4,), (-8,), "negative strides"), ((4, 2), (8,), "do not match"), ((-1,), None, "negative")],
)
def test_bad_layouts_are_refused(shape, strides, err):
    with pytest.raises(ValueError, match=err):
        mapped._layout(shape, np.float64, strides, "C")


def test_layouts():
    assert mapped._layout(5, np.int8, None, "C") == ((5,), np.dtype(np.int8), (1,), 5)
    assert mapped._layout((2, 3), np.float32, None, "F")[2:] == ((4, 8), 24)
    assert mapped._layout((2, 3), np.float32, (32, 4), "C")[2:] == ((32, 4), 44)
    assert mapped._layout((0, 3), np.float32, None, "C")[3] == 0


# -- allocation and freeing through a stand-in driver -------------------------------------


class FakeDriver:
    """The driver calls runtime.mapped makes, over NumPy memory; records the frees."""

    def __init__(self, refuse=None):
        self.blocks: dict[int, np.ndarray] = {}
        self.freed: list[tuple[str, int]] = []
        self.calls: list[tuple] = []
        self.refuse = refuse or {}

    def call(self, name, *args):
        self.calls.append((name, *args))
        if name in self.refuse:
            raise CudaDriverError(name, *self.refuse[name])
        if name in ("cuMemHostAlloc", "cuMemAllocManaged"):
            block = np.zeros(args[0], np.uint8)
            self.blocks[block.ctypes.data] = block
            return block.ctypes.data
        if name == "cuMemHostGetDevicePointer":
            return args[0] + DEVICE_OFFSET
        raise AssertionError(name)

    def cuMemFreeHost(self, ptr):
        self.freed.append(("cuMemFreeHost", ptr))
        return (0,)

    def cuMemFree(self, ptr):
        self.freed.append(("cuMemFree", ptr))
        return (0,)


@pytest.fixture
def driver(monkeypatch):
    from cujit.runtime import context

    drv = FakeDriver()
    monkeypatch.setattr(context, "get_context", lambda: None)
    monkeypatch.setattr(mapped, "call", drv.call)
    monkeypatch.setattr(mapped, "get_driver", lambda: drv)
    monkeypatch.setattr(mapped, "error_name", lambda code: ("", "driver's words"))
    return drv


@pytest.mark.parametrize(
    "portable,wc,flags", [(False, False, 2), (True, False, 3), (False, True, 6), (True, True, 7)]
)
def test_mapped_allocation_flags(driver, portable, wc, flags):
    a = mapped.mapped_array((3, 5), np.float32, order="F", portable=portable, wc=wc)
    assert driver.calls[0] == ("cuMemHostAlloc", 60, flags)
    assert driver.calls[1] == ("cuMemHostGetDevicePointer", host_ptr(a), 0)
    assert type(a) is mapped.MappedArray and a.flags.f_contiguous
    assert a.__cuda_array_interface__["data"][0] == host_ptr(a) + DEVICE_OFFSET


@pytest.mark.parametrize("attach_global,flags", [(True, 1), (False, 2)])
def test_managed_allocation_flags(driver, attach_global, flags):
    a = mapped.managed_array(10, np.int64, attach_global=attach_global)
    assert driver.calls == [("cuMemAllocManaged", 80, flags)]
    assert type(a) is mapped.ManagedArray
    # Managed memory has one address for host and device.
    assert a.__cuda_array_interface__["data"][0] == host_ptr(a)


def test_like_and_empty_arrays(driver):
    src = np.empty((4, 6), np.float32)[:, ::2]
    b = mapped.mapped_array_like(src, wc=True)
    assert b.shape == (4, 3) and b.dtype == np.float32 and b.flags.c_contiguous
    assert driver.calls[0] == ("cuMemHostAlloc", 48, 6)
    e = mapped.managed_array(0)
    assert e.shape == (0,) and driver.calls[-1] == ("cuMemAllocManaged", 1, 1)


@pytest.mark.parametrize(
    "make,free", [(mapped.mapped_array, "cuMemFreeHost"), (mapped.managed_array, "cuMemFree")]
)
def test_memory_is_freed_when_the_array_and_its_views_are_collected(driver, make, free):
    a = make((8, 8), np.float64)
    ptr = host_ptr(a)
    ref = weakref.ref(mapped.buffer_of(a))
    view = a[2:, ::2].T
    del a
    gc.collect()
    assert ref() is not None and driver.freed == []  # the view keeps the memory alive
    view[...] = 1.0
    del view
    gc.collect()
    assert ref() is None and driver.freed == [(free, ptr)]


def test_managed_memory_refused_names_what_failed(monkeypatch, driver):
    driver.refuse["cuMemAllocManaged"] = (801, "CUDA_ERROR_NOT_SUPPORTED")
    with pytest.raises(CudaDriverError) as info:
        mapped.managed_array(4, np.float32)
    msg = str(info.value)
    assert "cuda.managed_array: cuMemAllocManaged of 16 bytes (CU_MEM_ATTACH_GLOBAL)" in msg
    assert "CUDA_ERROR_NOT_SUPPORTED" in msg and "does not support managed memory" in msg
    assert "driver's words" in msg


def test_mapping_refused_names_what_failed_and_frees_the_host_memory(driver):
    driver.refuse["cuMemHostGetDevicePointer"] = (1, "CUDA_ERROR_INVALID_VALUE")
    with pytest.raises(CudaDriverError, match="cuMemHostGetDevicePointer.*cannot map host"):
        mapped.mapped_array(4, np.float32)
    gc.collect()
    (ptr,) = driver.blocks
    assert driver.freed == [("cuMemFreeHost", ptr)]


def test_out_of_memory_collects_and_retries_once(monkeypatch, driver):
    attempts = []

    def oom_once(name, *args):
        attempts.append(name)
        if len(attempts) == 1:
            raise CudaDriverError(name, 2, "CUDA_ERROR_OUT_OF_MEMORY")
        return FakeDriver.call(driver, name, *args)

    monkeypatch.setattr(mapped, "call", oom_once)
    a = mapped.managed_array(4)
    assert attempts == ["cuMemAllocManaged", "cuMemAllocManaged"] and a.size == 4
    attempts.clear()
    driver.refuse["cuMemHostAlloc"] = (2, "CUDA_ERROR_OUT_OF_MEMORY")
    with pytest.raises(
        CudaDriverError,
        match="cuda.mapped_array: cuMemHostAlloc of 32 bytes "
        r"\(CU_MEMHOSTALLOC_DEVICEMAP\) failed",
    ):
        mapped.mapped_array(4)


# -- on a GPU -----------------------------------------------------------------------------


@cuda.jit
def gpu_add_index_1d(x, k):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] = x[i] * k + i


@cuda.jit
def gpu_add_index_2d(x, k):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        x[i, j] = x[i, j] * k + i * 10 + j


@cuda.jit
def gpu_copy_scaled(x, out, k):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = x[i] * k


def run_gpu(a, k=3, stream=0):
    if a.ndim == 1:
        gpu_add_index_1d[(a.shape[0] + 127) // 128, 128, stream](a, k)
    else:
        gpu_add_index_2d[((a.shape[0] + 15) // 16, (a.shape[1] + 15) // 16), (16, 16), stream](a, k)


def pointer_attribute(name: str, ptr: int) -> int:
    from cuda.bindings import driver as drv

    from cujit.runtime.driver import call

    return int(call("cuPointerGetAttribute", getattr(drv.CUpointer_attribute, name), ptr))


def device_attribute(name: str) -> int:
    from cuda.bindings import driver as drv

    from cujit.runtime.context import get_device
    from cujit.runtime.driver import call

    return int(
        call(
            "cuDeviceGetAttribute",
            getattr(drv.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + name),
            get_device().handle,
        )
    )


@pytest.mark.gpu
def test_gpu_kernel_writes_mapped_memory_seen_by_the_host_after_synchronize():
    from cujit.runtime.driver import call

    n = 100_000
    a = cuda.mapped_array(n, np.float32)
    assert type(a) is mapped.MappedArray
    a[:] = np.arange(n) % 7
    before = np.array(a)
    dev_ptr = a.__cuda_array_interface__["data"][0]
    assert dev_ptr == int(call("cuMemHostGetDevicePointer", host_ptr(a), 0))
    from cuda.bindings import driver as drv

    assert pointer_attribute("CU_POINTER_ATTRIBUTE_MEMORY_TYPE", dev_ptr) == int(
        drv.CUmemorytype.CU_MEMORYTYPE_HOST
    )
    values, writebacks = prepare_args([typeof(a)], [a])
    assert values[0] == dev_ptr and writebacks == []  # no device copy, no copy back
    s = cuda.stream()
    run_gpu(a, 3, s)
    s.synchronize()
    np.testing.assert_array_equal(a, expected(before, 3))


@pytest.mark.gpu
@pytest.mark.parametrize("attach_global", [True, False])
def test_gpu_managed_array_host_then_kernel_then_host(attach_global):
    if not attach_global and not device_attribute("CONCURRENT_MANAGED_ACCESS"):
        pytest.skip("host-attached managed memory needs concurrent managed access")
    a = cuda.managed_array((300, 70), np.float64, attach_global=attach_global)
    assert type(a) is mapped.ManagedArray
    ptr = a.__cuda_array_interface__["data"][0]
    assert ptr == host_ptr(a)
    assert pointer_attribute("CU_POINTER_ATTRIBUTE_IS_MANAGED", ptr) == 1
    rng = np.random.default_rng()
    a[...] = rng.standard_normal(a.shape)  # written by the host
    before = np.array(a)
    run_gpu(a, 2)  # read and modified by a kernel
    cuda.synchronize()
    np.testing.assert_allclose(
        a, before * 2 + np.add.outer(np.arange(300) * 10, np.arange(70)), rtol=1e-12, atol=1e-9
    )
    a += 1.0  # the host writes again, and a second kernel sees it
    run_gpu(a, 1)
    cuda.synchronize()
    np.testing.assert_allclose(
        a,
        before * 2 + 1 + 2 * np.add.outer(np.arange(300) * 10, np.arange(70)),
        rtol=1e-12,
        atol=1e-9,
    )


@pytest.mark.gpu
@pytest.mark.parametrize("make", [cuda.mapped_array, cuda.managed_array], ids=["mapped", "managed"])
def test_gpu_views(make):
    a = make((64, 48), np.float32, order="F")
    a[...] = -1.0
    v = a[3::2, 1::3]  # strided view of an F-ordered array: the kernel writes a's memory
    t = a[10:20, :5].T
    assert v.__cuda_array_interface__["data"][0] == mapped.device_pointer(v)
    run_gpu(v, 1)
    run_gpu(t, 0)
    cuda.synchronize()
    ref = np.full((64, 48), -1.0, np.float32)
    ref[3::2, 1::3] = expected(np.full(ref[3::2, 1::3].shape, -1.0, np.float32), 1)
    ref[10:20, :5].T[...] = expected(np.zeros((5, 10), np.float32), 0)
    np.testing.assert_array_equal(a, ref)
    flat = make(1000, np.int64)
    flat[:] = 5
    run_gpu(flat[::-3], 2)  # a reversed view
    cuda.synchronize()
    ref = np.full(1000, 5, np.int64)
    ref[::-3] = 10 + np.arange(len(ref[::-3]))
    np.testing.assert_array_equal(flat, ref)


@pytest.mark.gpu
def test_gpu_portable_write_combined_mapped_input():
    from cujit.runtime.driver import call

    n = 4096
    x = cuda.mapped_array(n, np.float32, portable=True, wc=True)
    flags = int(call("cuMemHostGetFlags", host_ptr(x)))
    assert flags & 0x7 == 0x7  # PORTABLE | DEVICEMAP | WRITECOMBINED
    assert is_pinned(x)
    x[:] = np.arange(n)  # write-combined: written by the host, read by the device
    out = cuda.mapped_array_like(x)
    flags = int(call("cuMemHostGetFlags", host_ptr(out)))
    assert flags & 0x2 and not flags & 0x4  # mapped, not write-combined
    gpu_copy_scaled[(n + 255) // 256, 256](x, out, np.float32(0.5))
    cuda.synchronize()
    np.testing.assert_array_equal(out, np.arange(n, dtype=np.float32) * 0.5)


@pytest.mark.gpu
def test_gpu_stream_is_exported_and_as_cuda_array_views_with_no_copy():
    s = cuda.stream()
    a = cuda.mapped_array(256, np.float64, stream=s)
    assert a.__cuda_array_interface__["stream"] == s.handle
    d = cuda.as_cuda_array(a)
    assert d.device_ptr == a.__cuda_array_interface__["data"][0]
    a[:] = 1.0
    gpu_add_index_1d[2, 128, s](d, 4)
    s.synchronize()
    np.testing.assert_array_equal(a, 4.0 + np.arange(256))


@pytest.mark.gpu
@pytest.mark.parametrize(
    "make,query",
    [(cuda.mapped_array, "cuMemHostGetFlags"), (cuda.managed_array, None)],
    ids=["mapped", "managed"],
)
def test_gpu_memory_freed_after_collection(make, query):
    from cujit.runtime.driver import call

    a = make((128, 128), np.float32)
    a[...] = 1.0
    run_gpu(a, 2)
    cuda.synchronize()
    buf = mapped.buffer_of(a)
    ptr = buf.ptr
    ref = weakref.ref(buf)
    view = a[5]
    del a, buf
    gc.collect()
    assert ref() is not None  # a view keeps it
    assert (view == 2.0 + 50 + np.arange(128)).all()
    del view
    gc.collect()
    assert ref() is None  # finalizer ran: the driver's free was called
    if query is not None:
        with pytest.raises(CudaDriverError):
            call(query, ptr)  # no longer a cuMemHostAlloc block
    # Many allocations in a row do not accumulate (each is freed on collection).
    for _ in range(50):
        b = make(1 << 20, np.uint8)
        b[0] = 1
    del b
