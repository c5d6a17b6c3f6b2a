"""The runtime's GPU-independent parts: layouts, views, parameter packing, launch checks.

Everything here runs without a GPU: device arrays are built over made-up
addresses (never dereferenced), and launches go to a recording stand-in for
``cuLaunchKernel`` that reads the parameter block the driver would read.
"""

from __future__ import annotations

import ctypes
import struct
from types import SimpleNamespace

import numpy as np
import pytest

from cujit import abi
from cujit.diagnostics import LaunchError, NoGPUError
from cujit.runtime import driver
from cujit.runtime.args import prepare_args
from cujit.runtime.driver import CudaDriverError, check
from cujit.runtime.launch import ParamPacker, check_config, get_packer, launch
from cujit.runtime.layout import byte_span, contiguous_strides, index_view, is_contiguous
from cujit.runtime.memory import DeviceArray, as_device_array
from cujit.types import Array, Tuple, boolean, float32, float64, int8, int16, int32, typeof

FAKE_PTR = 0x7F00_0000_0000  # an address only used as a number


def fake_device_array(host: np.ndarray) -> DeviceArray:
    """A DeviceArray with ``host``'s layout at FAKE_PTR (no memory behind it)."""
    return DeviceArray._view(host.shape, host.strides, host.dtype, FAKE_PTR, None)


# -- layout -------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (1, 7, 1), (0, 3)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_contiguous_strides_match_numpy(shape, order):
    ref = np.empty(shape, np.float32, order=order)
    if 0 not in shape:
        assert contiguous_strides(shape, 4, order) == ref.strides
    assert is_contiguous(shape, contiguous_strides(shape, 4, order), 4, order)


VIEW_KEYS = [
    1,
    -1,
    slice(None),
    slice(1, None, 2),
    slice(None, None, -1),
    (1, 2),
    (slice(None), 2),
    (Ellipsis, 1),
    (slice(4, 0, -2), Ellipsis, slice(None, None, 3)),
    (-2, slice(1, 3), -1),
    (slice(5, 1),),
    (0, 0, 0),
]


@pytest.mark.parametrize("key", VIEW_KEYS, ids=repr)
def test_views_match_numpy(key):
    host = np.arange(5 * 4 * 6, dtype=np.float64).reshape(5, 4, 6)
    off, shape, strides, scalar = index_view(host.shape, host.strides, key)
    ref = host[key]
    if np.ndim(ref) == 0:
        assert scalar and shape == ()
        assert off // 8 == int(ref)  # element value == its flat index here
        return
    assert not scalar and shape == ref.shape and strides == ref.strides
    if ref.size:
        base = host.__array_interface__["data"][0]
        assert off == ref.__array_interface__["data"][0] - base
    for order, flag in (("C", "C_CONTIGUOUS"), ("F", "F_CONTIGUOUS")):
        assert is_contiguous(shape, strides, 8, order) == ref.flags[flag]


def test_view_errors():
    shape, strides = (3, 4), (32, 8)
    with pytest.raises(IndexError, match="out of bounds"):
        index_view(shape, strides, (3,))
    with pytest.raises(IndexError, match="too many"):
        index_view(shape, strides, (0, 0, 0))
    with pytest.raises(TypeError, match="basic indexing"):
        index_view(shape, strides, [0, 1])
    with pytest.raises(TypeError, match="basic indexing"):
        index_view(shape, strides, True)


def test_byte_span_with_negative_strides():
    host = np.zeros((4, 6), np.float32)
    v = host[::-1, 1::2]
    lo, hi = byte_span(v.shape, v.strides, 4)
    # element 0 of v is host[3, 1]; v reaches back to host[0, 1] and forward to host[3, 5].
    assert lo == -3 * 24 and hi == 4 * 4 + 4


# -- device array views (no device memory touched) --------------------------------


def test_device_array_views_share_the_base_and_offset_the_pointer():
    host = np.zeros((6, 8), np.float32)
    base_owner = object()
    d = DeviceArray._view(host.shape, host.strides, host.dtype, FAKE_PTR, base_owner)
    v = d[1:5:2, ::-3]
    ref = host[1:5:2, ::-3]
    assert v.shape == ref.shape and v.strides == ref.strides
    assert v.device_ptr == FAKE_PTR + (1 * 8 + 7) * 4
    assert v.base is base_owner  # the allocation stays alive through the view
    assert not v.is_c_contiguous() and not v.is_f_contiguous()
    assert d.is_c_contiguous() and not d.is_f_contiguous()
    assert len(d) == 6 and d.size == 48 and d.ndim == 2 and d.nbytes == 192
    t = d._derive(d.shape[::-1], d.strides[::-1], d.device_ptr)  # (.T copies, as numba's)
    assert t.shape == (8, 6) and t.strides == (4, 32) and t.is_f_contiguous()
    r = d.reshape(4, -1)
    assert r.shape == (4, 12) and r.strides == (48, 4) and r.device_ptr == FAKE_PTR
    with pytest.raises(NotImplementedError):
        v.reshape(-1)


def test_cuda_array_interface_v3():
    d = fake_device_array(np.zeros((3, 5), np.int16))
    cai = d.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (3, 5) and cai["typestr"] == "<i2"
    assert cai["data"] == (FAKE_PTR, False) and cai["strides"] is None  # C-contiguous
    v = d[:, 1:4:2]
    assert v.__cuda_array_interface__["strides"] == (10, 4)
    # And back: a CAI producer seen as a DeviceArray keeps the producer alive.
    back = as_device_array(SimpleNamespace(__cuda_array_interface__=cai))
    assert (back.shape, back.strides, back.dtype, back.device_ptr) == (
        (3, 5),
        (10, 2),
        np.dtype(np.int16),
        FAKE_PTR,
    )


# -- parameter packing -------------------------------------------------------------


def test_packed_bytes_follow_the_abi():
    # Arguments: (bool, int32, float64, float32[:, :], int16, float32, (int8, float64)).
    host = np.zeros((3, 5), np.float32)[:, ::2]  # a strided 3x3 view: strides (20, 8)
    dev = fake_device_array(host)
    types = (boolean, int32, float64, typeof(dev), int16, float32, Tuple((int8, float64)))
    args = (True, -7, 2.5, dev, -300, 1.25, (-3, 6.75))
    kinds = [k for t in types for k in abi.param_kinds(t)]
    assert kinds == [
        "uint8",
        "int32",
        "float64",
        "ptr",
        "int64",
        "int64",
        "int64",
        "int64",
        "int16",
        "float32",
        "int8",
        "float64",
    ]
    values, writebacks = prepare_args(types, args)
    assert values == [1, -7, 2.5, FAKE_PTR, 3, 3, 20, 8, -300, 1.25, -3, 6.75]
    assert writebacks == []

    packer = ParamPacker(kinds)
    packer.pack(values)
    # Each parameter at an offset aligned to its own size, little-endian; zeros between.
    expected = bytearray(80)
    for off, fmt, v in [
        (0, "B", 1),
        (4, "i", -7),
        (8, "d", 2.5),
        (16, "Q", FAKE_PTR),
        (24, "q", 3),
        (32, "q", 3),
        (40, "q", 20),
        (48, "q", 8),
        (56, "h", -300),
        (60, "f", 1.25),
        (64, "b", -3),
        (72, "d", 6.75),
    ]:
        struct.pack_into("<" + fmt, expected, off, v)
    assert packer.offsets == (0, 4, 8, 16, 24, 32, 40, 48, 56, 60, 64, 72)
    assert packer.packed_bytes() == bytes(expected)
    # The void** array points at each parameter in that block.
    base = ctypes.addressof(packer.buffer)
    pointers = (ctypes.c_void_p * len(kinds)).from_address(packer.address)
    assert [p - base for p in pointers] == list(packer.offsets)
    assert ctypes.c_double.from_address(pointers[2]).value == 2.5
    assert ctypes.c_uint64.from_address(pointers[3]).value == FAKE_PTR


def test_only_the_parameters_the_kernel_kept_are_passed():
    host = np.zeros((3, 5), np.float32)[:, ::2]
    dev = fake_device_array(host)
    types = (boolean, typeof(dev), Tuple((int8, float64)))
    kept = (False, True, False, True, True, False, False, True)  # what the cubin declares
    values, _ = prepare_args(types, (True, dev, (-3, 6.75)), kept=kept)
    assert values == [FAKE_PTR, 3, 20, 6.75]  # the pointer, extent 1, byte stride 0, the float
    assert abi.keep(abi.flat_param_kinds(types), kept) == ["ptr", "int64", "int64", "float64"]


def test_cai_strides_none_means_c_contiguous():
    cai_obj = SimpleNamespace(
        __cuda_array_interface__={
            "shape": (4, 6),
            "strides": None,
            "typestr": "<f8",
            "data": (FAKE_PTR, False),
            "version": 3,
        }
    )
    # Seen as layout 'A' the array passes its strides: C order's, 6 * 8 and 8 bytes.
    values, _ = prepare_args((Array(float64, 2, "A"),), (cai_obj,))
    assert values == [FAKE_PTR, 4, 6, 48, 8]
    values, _ = prepare_args((Array(float64, 2, "C"),), (cai_obj,))
    assert values == [FAKE_PTR, 4, 6]  # a C array's strides follow from its extents


def test_packing_errors_name_the_parameter():
    packer = get_packer(("int32", "int8"))
    assert get_packer(["int32", "int8"]) is packer  # one packer per kind list
    with pytest.raises(LaunchError, match="parameter 1 of kind int8 cannot hold 300"):
        packer.pack([1, 300])
    with pytest.raises(LaunchError, match="expects 2 parameter values, got 1"):
        packer.pack([1])
    with pytest.raises(LaunchError, match="unknown kernel parameter kind"):
        ParamPacker(["complex64"])


def test_prepare_args_errors():
    with pytest.raises(LaunchError, match="argument 0: expected an array"):
        prepare_args((Array(float32, 1),), ([1.0, 2.0],))
    with pytest.raises(LaunchError, match="expected a 1-d array, got 2-d"):
        prepare_args((Array(float32, 1),), (fake_device_array(np.zeros((2, 2), np.float32)),))
    with pytest.raises(LaunchError, match="takes 1 arguments, got 2"):
        prepare_args((int32,), (1, 2))


# -- launch, against a stand-in for cuLaunchKernel -----------------------------------


def fake_function(max_threads=1024):
    calls = []

    def cu_launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        # Read the parameters as the driver does: through the void** array, now.
        ptrs = (ctypes.c_void_p * 2).from_address(params)
        calls.append(
            (
                (gx, gy, gz),
                (bx, by, bz),
                shmem,
                ctypes.c_float.from_address(ptrs[0]).value,
                ctypes.c_uint64.from_address(ptrs[1]).value,
            )
        )
        return (calls_result[0],)

    calls_result = [0]
    device = SimpleNamespace(
        max_block_dim=(1024, 1024, 64),
        max_grid_dim=(2**31 - 1, 65535, 65535),
        max_threads_per_block=1024,
        max_shared_memory_per_block_optin=227 * 1024,
    )
    fn = SimpleNamespace(
        name="k",
        handle=object(),
        device=device,
        checked={},
        max_threads_per_block=max_threads,
        num_regs=64,
        static_shared_bytes=1024,
        cu_launch=cu_launch,
        cooperative=False,
        ensure_dynamic_shared=lambda n: None,
    )
    return fn, calls, calls_result


def test_launch_passes_packed_values_and_caches_the_check():
    fn, calls, _ = fake_function()
    packer = get_packer(("float32", "ptr"))
    launch(fn, 4, (32, 2), 0, 0, packer, [1.5, FAKE_PTR])
    launch(fn, 4, (32, 2), 0, 0, ["float32", "ptr"], [-2.0, 16])
    assert calls == [
        ((4, 1, 1), (32, 2, 1), 0, 1.5, FAKE_PTR),
        ((4, 1, 1), (32, 2, 1), 0, -2.0, 16),
    ]
    assert fn.checked == {(4, (32, 2), 0): ((4, 1, 1), (32, 2, 1))}
    launch(fn, [2], [64], 0, 0, packer, [0.5, 1])  # unhashable shapes still work
    assert calls[-1][:2] == ((2, 1, 1), (64, 1, 1))


@pytest.mark.parametrize(
    "grid,block,shmem,message",
    [
        (0, 32, 0, "grid dimension x must be positive"),
        (1, (32, -1), 0, "block dimension y must be positive"),
        (1, 2048, 0, "block dimension x is 2048, above the device limit of 1024"),
        (1, (32, 32, 2), 0, "block 32x32x2 has 2048 threads, above the device limit of 1024"),
        ((1, 70000), 32, 0, "grid dimension y is 70000, above the device limit of 65535"),
        (1, (1, 2, 3, 4), 0, "block must have 1 to 3 dimensions"),
        (1.5, 32, 0, "grid dimensions must be an int"),
        (1, 32, -1, "dynamic shared memory size must be >= 0"),
        (1, 32, 227 * 1024, "asks for 232448 bytes of dynamic shared memory"),
    ],
)
def test_launch_checks_the_shape_before_the_driver(grid, block, shmem, message):
    fn, calls, _ = fake_function()
    with pytest.raises(LaunchError, match=message.replace("(", r"\(")):
        launch(fn, grid, block, 0, shmem, ("float32", "ptr"), [1.0, 0])
    assert calls == [] and fn.checked == {}


def test_launch_respects_the_kernel_thread_limit():
    fn, _, _ = fake_function(max_threads=512)
    with pytest.raises(LaunchError, match="at most 512 threads per block .* has 1024"):
        check_config(fn, 1, 1024, 0)


def test_driver_errors_name_the_call_and_the_error():
    fn, _, result = fake_function()
    from cuda.bindings import driver as cu

    result[0] = cu.CUresult.CUDA_ERROR_INVALID_VALUE
    with pytest.raises(CudaDriverError, match="cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE"):
        launch(fn, 1, 1, 0, 0, ("float32", "ptr"), [1.0, 0])
    fn.cooperative = True  # launched by cuLaunchCooperativeKernel: named so
    with pytest.raises(CudaDriverError, match="cuLaunchCooperativeKernel failed: CUDA_ERROR_INV"):
        launch(fn, 1, 1, 0, 0, ("float32", "ptr"), [1.0, 0])
    assert check((cu.CUresult.CUDA_SUCCESS, 42), "cuX") == 42
    with pytest.raises(CudaDriverError) as info:
        check((cu.CUresult.CUDA_ERROR_OUT_OF_MEMORY, None), "cuMemAlloc")
    assert info.value.call == "cuMemAlloc" and info.value.name == "CUDA_ERROR_OUT_OF_MEMORY"


# -- no GPU --------------------------------------------------------------------


@pytest.mark.skipif(driver.is_available(), reason="checks the no-GPU message")
def test_no_gpu_says_so():
    from cujit.runtime import device_array, to_device

    for attempt in (
        lambda: to_device(np.ones(4)),
        lambda: device_array(4),
        lambda: prepare_args((Array(float64, 1),), (np.ones(4),)),
    ):
        with pytest.raises(NoGPUError, match="no CUDA GPU found"):
            attempt()


# -- copies, against a host-memory stand-in for the driver's memory calls ---------------


class HostMemoryDriver:
    """cuMemAlloc/cuMemcpy* on host memory: exercises the copy logic without a GPU."""

    def __init__(self):
        self.blocks: dict[int, ctypes.Array] = {}
        self.calls: list[str] = []

    def __call__(self, name, *args):
        self.calls.append(name)
        if name == "cuMemAlloc":
            block = (ctypes.c_uint8 * args[0])()
            self.blocks[ctypes.addressof(block)] = block
            return ctypes.addressof(block)
        if name in (
            "cuMemcpyHtoD",
            "cuMemcpyDtoH",
            "cuMemcpyDtoD",
            "cuMemcpyHtoDAsync",
            "cuMemcpyDtoHAsync",
            "cuMemcpyDtoDAsync",
        ):
            dst, src, n = (int(a) for a in args[:3])
            ctypes.memmove(dst, src, n)
            return None
        if name == "cuStreamSynchronize":
            return None
        raise AssertionError(f"unexpected driver call {name}")


@pytest.fixture
def host_driver(monkeypatch):
    from cujit.runtime import args as rt_args
    from cujit.runtime import memory

    fake = HostMemoryDriver()
    monkeypatch.setattr(memory, "call", fake)
    monkeypatch.setattr(rt_args, "call", fake)
    monkeypatch.setattr(memory, "get_context", lambda: SimpleNamespace())
    return fake


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(7,), (5, 6), (2, 3, 4), (0, 3)])
def test_round_trip_copies(host_driver, shape, order):
    from cujit.runtime import to_device

    host = np.asarray(np.random.default_rng().standard_normal(shape), order=order)
    d = to_device(host)
    back = d.copy_to_host()
    np.testing.assert_array_equal(back, host)
    if host.size:
        assert d.strides == host.strides == back.strides
    into = np.full(shape, np.nan, order="C")
    assert d.copy_to_host(into) is into  # into a host array of another layout
    np.testing.assert_array_equal(into, host)


def test_strided_view_copies_touch_only_the_view(host_driver, monkeypatch):
    from cujit.runtime import to_device

    host = np.arange(6 * 8, dtype=np.int32).reshape(6, 8)
    d = to_device(host)
    v = d[1:6:2, ::-3]
    with pytest.raises(NotImplementedError, match="negative strides"):  # numba's refusal
        v.copy_to_host()
    monkeypatch.setenv("CUJIT_NEGATIVE_STRIDE_COPIES", "1")
    np.testing.assert_array_equal(v.copy_to_host(), host[1:6:2, ::-3])
    assert d[4, 5] == host[4, 5] and isinstance(d[4, 5], np.int32)
    new = -np.arange(v.size, dtype=np.int32).reshape(v.shape) - 1
    v.copy_to_device(new)
    expect = host.copy()
    expect[1:6:2, ::-3] = new
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    d[:, 2] = 99  # __setitem__ broadcasts a scalar into a strided column
    expect[:, 2] = 99
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    with pytest.raises(ValueError, match="cannot copy a device array of shape"):
        v.copy_to_host(np.empty((2, 2), np.int32))


def test_device_to_device_copy(host_driver):
    from cujit.runtime import device_array, to_device

    a = to_device(np.arange(10.0))
    b = device_array(10)
    b.copy_to_device(a)
    assert "cuMemcpyDtoD" in host_driver.calls
    np.testing.assert_array_equal(b.copy_to_host(), np.arange(10.0))
    c = device_array(5)
    c.copy_to_device(a[::2])  # different layouts: through the host
    np.testing.assert_array_equal(c.copy_to_host(), np.arange(0.0, 10.0, 2))


def test_host_arrays_are_copied_in_and_back(host_driver):
    from cujit.runtime import finish_writebacks

    rng = np.random.default_rng()
    base = rng.standard_normal((6, 10))
    strided = base[::2, 1::3]  # not contiguous: travels as a C-contiguous copy
    frozen = rng.standard_normal(4)
    frozen.flags.writeable = False
    types = (typeof(strided), typeof(frozen))
    values, writebacks = prepare_args(types, (strided, frozen))
    # The 'A' argument passes its copy's strides; the C one only its extent.
    assert values[1:5] == [3, 3, 24, 8] and values[6:] == [4]
    assert len(writebacks) == 2 and writebacks[1].host is None  # kept alive, not copied back
    # "The kernel" doubles the strided argument in device memory.
    dev = np.ctypeslib.as_array((ctypes.c_double * 9).from_address(values[0]))
    dev *= 2
    expect = base.copy()
    expect[::2, 1::3] *= 2
    finish_writebacks(writebacks)
    np.testing.assert_array_equal(base, expect)
    assert writebacks == []


def test_fast_flattener_matches_prepare_args_and_declines_the_rest():
    from cujit.runtime.args import make_flattener

    x = fake_device_array(np.zeros((3, 4), np.float32))
    y = fake_device_array(np.zeros(5, np.int64))
    types = (float32, Array(float32, 2, "C"), int32, boolean, Array(typeof(y).dtype, 1, "C"))
    args = (np.float32(2.5), x, 7, True, y)
    flatten = make_flattener(types)
    values, writebacks = prepare_args(types, args)
    assert flatten(args, None) == tuple(values) and not writebacks
    assert flatten(args, x.device_id) == tuple(values)
    # Anything the fast path does not check goes to prepare_args: a read-only view,
    # an array on another device, a host array.
    ro = DeviceArray._view(x.shape, x.strides, x.dtype, FAKE_PTR, None, readonly=True)
    assert flatten((args[0], ro, *args[2:]), None) is None
    other = DeviceArray._view(x.shape, x.strides, x.dtype, FAKE_PTR, None, device_id=1)
    assert flatten((args[0], other, *args[2:]), 0) is None
    assert flatten((args[0], np.zeros((3, 4), np.float32), *args[2:]), None) is None
    assert make_flattener((Tuple((int32, float64)),)) is None
    assert make_flattener((float64,))((3,), None) == (3.0,)
