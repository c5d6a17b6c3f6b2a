"""The launch shortcut: ``kernel[grid, block](...)`` after the first launch of a kind
of arguments goes through a launcher generated for that configuration
(``runtime.launch.make_launcher``).  Checked here against a stand-in for the
driver: the parameter bytes it hands over, and that any change of kind (dtype,
ndim, layout, scalar class, device, thread) takes the general path again.
"""

from __future__ import annotations

import ctypes
import struct
import threading
import traceback
from types import SimpleNamespace

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import LaunchError
from cujit.dispatcher import Kernel
from cujit.runtime import context
from cujit.runtime import module as rt_module
from cujit.runtime.driver import CudaDriverError
from cujit.runtime.launch import _packers
from cujit.runtime.memory import DeviceArray
from cujit.types import typeof

BASE = 0x7F00_0000_0000  # fake device addresses: the stand-in driver never reads them


def fake_device_array(shape, dtype=np.float32, order="C", readonly=False, offset=0):
    host = np.empty(shape, dtype, order=order)
    return DeviceArray._view(
        host.shape, host.strides, host.dtype, BASE + offset, None, readonly=readonly
    )


class FakeGPU:
    """Stands in for one device's loaded kernels: records each cuLaunchKernel with the
    parameter block's bytes as the driver would read them, during the call."""

    def __init__(self):
        self.launches: list[tuple] = []
        self.handles: list = []  # the function handle of each launch
        self.result = 0
        device = SimpleNamespace(
            id=0,
            compute_capability=(9, 0),
            max_block_dim=(1024, 1024, 64),
            max_grid_dim=(2**31 - 1, 65535, 65535),
            max_threads_per_block=1024,
            max_shared_memory_per_block_optin=227 * 1024,
        )
        self.context = SimpleNamespace(device=device)

    def function(self, symbol):
        gpu = self

        def cu_launch(handle, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
            block = b""  # no parameters: a null kernelParams
            if params:  # the block's size: from the packer whose pointer array this is
                size = next(p.size for p in _packers.values() if p.address == params)
                first = ctypes.c_void_p.from_address(params).value  # parameter 0's address
                block = ctypes.string_at(first, size)
            gpu.launches.append(((gx, gy, gz), (bx, by, bz), shmem, block))
            gpu.handles.append(handle)
            return (gpu.result,)

        return SimpleNamespace(
            name=symbol,
            handle=object(),
            device=self.context.device,
            checked={},
            max_threads_per_block=1024,
            num_regs=32,
            static_shared_bytes=0,
            cu_launch=cu_launch,
            cooperative=False,
            ensure_dynamic_shared=lambda n: None,
        )


@pytest.fixture
def gpu(monkeypatch):
    # The plain launcher's packing is checked here; test_coarsen_launch.py checks the
    # coarsened variant's selector, which these kernels would otherwise take.
    monkeypatch.setenv("CUJIT_COARSEN", "0")
    fake = FakeGPU()
    monkeypatch.setattr(context._tls, "ctx", fake.context, raising=False)
    monkeypatch.setattr(
        rt_module, "load_module", lambda cubin: SimpleNamespace(get_function=fake.function)
    )
    import cujit.runtime.launch as rt_launch

    monkeypatch.setattr(rt_launch, "_DEFAULT_STREAM", [0])
    general = []  # one entry per launch that took the general path
    real = Kernel._launch

    def counted(self, *args):
        general.append(args[0])
        return real(self, *args)

    monkeypatch.setattr(Kernel, "_launch", counted)
    fake.general = general
    return fake


def scale(a, x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


def first(a, x, out):  # takes an x of any dtype, ndim and layout
    out[0] = a * x.size


def block(kept, a_code, a, *arrays) -> bytes:
    """The parameter block as C lays it out: the scalar, then per array its pointer and
    extents, and its byte strides if it is neither C- nor F-contiguous, each value at an
    offset aligned to its size; of these, only those ``kept`` marks (None: all)."""
    values = [(a_code, a)]
    for arr in arrays:
        contiguous = arr.is_c_contiguous() or arr.is_f_contiguous()
        ints = (*arr.shape, *(() if contiguous else arr.strides))
        values += [("Q", arr.device_ptr)] + [("q", n) for n in ints]
    out = bytearray()
    for (code, v), keep in zip(values, kept or [True] * len(values), strict=True):
        if keep:
            out += b"\0" * (-len(out) % struct.calcsize(code)) + struct.pack("<" + code, v)
    return bytes(out)


def kept(kernel, *types):
    """The parameter mask of ``kernel``'s one specialisation (or the one for ``types``)."""
    if types:
        return kernel.overloads[types].result.kept
    (spec,) = kernel.overloads.values()
    return spec.result.kept


def test_second_launch_of_a_kind_goes_through_the_launcher(gpu):
    k = cuda.jit(scale)
    x, out = fake_device_array(100), fake_device_array(100, offset=4096)
    cfg = k[4, 32]
    cfg(np.float32(2.5), x, out)
    assert len(gpu.general) == 1 and len(cfg.launchers) == 1
    y = fake_device_array(100, offset=8192)  # a new array of the same kind: not yet typed
    cfg(np.float32(-1.0), y, out)
    k[4, 32](np.float32(0.5), x, y)  # the same configuration, looked up again
    assert len(gpu.general) == 1  # both went through the launcher
    # The kernel reads a, x's pointer and extent (x.size), out's pointer: not out's extent.
    assert kept(k) == (True, True, True, True, False)
    want = [
        block(kept(k), "f", a, p, q) for a, p, q in ((2.5, x, out), (-1.0, y, out), (0.5, x, y))
    ]
    assert [launch[3] for launch in gpu.launches] == want
    assert want[0][4:16] == b"\0" * 4 + struct.pack("<Q", BASE)  # padding, then x's pointer
    assert len(want[0]) == 32  # a, padding, x's pointer and extent, out's pointer
    assert all(launch[:3] == ((4, 1, 1), (32, 1, 1), 0) for launch in gpu.launches)


@pytest.mark.parametrize(
    "other,code",
    [
        (lambda: (np.float32(3), fake_device_array(64, np.float64), fake_device_array(64)), "f"),
        (lambda: (np.float32(3), fake_device_array((8, 8)), fake_device_array(64)), "f"),  # ndim
        (
            lambda: (np.float32(3), fake_device_array(128)[::2], fake_device_array(64)),
            "f",
        ),  # layout
        (lambda: (3.0, fake_device_array(64), fake_device_array(64)), "d"),  # a float64 scalar
    ],
)
def test_a_changed_kind_takes_the_general_path_and_compiles(gpu, other, code):
    k = cuda.jit(first)
    cfg = k[1, 64]
    cfg(np.float32(1), fake_device_array(64), fake_device_array(64))
    assert len(k.overloads) == 1
    args = other()
    cfg(*args)
    assert len(gpu.general) == 2 and len(k.overloads) == 2
    mask = k.overloads[tuple(map(typeof, args))].result.kept
    # ``first`` reads a, x's extents (x.size) and out's pointer only.
    x, out = args[1:]
    assert mask == (True, False) + (True,) * x.ndim + (False,) * (
        0 if x.is_c_contiguous() else x.ndim
    ) + (True, False)
    assert gpu.launches[-1][3] == block(mask, code, 3.0, *args[1:])
    args = other()
    cfg(*args)  # that kind has its own launcher now
    assert len(gpu.general) == 2 and len(cfg.launchers) == 2
    assert gpu.launches[-1][3] == block(mask, code, 3.0, *args[1:])


def test_read_only_array_is_still_refused_where_the_kernel_writes(gpu):
    k = cuda.jit(scale)
    cfg = k[1, 64]
    cfg(np.float32(1), fake_device_array(64), fake_device_array(64))
    with pytest.raises(LaunchError, match="read-only"):
        cfg(np.float32(1), fake_device_array(64), fake_device_array(64, readonly=True))
    cfg(np.float32(1), fake_device_array(64, readonly=True), fake_device_array(64))  # read: fine
    assert len(gpu.launches) == 2


def test_wrong_argument_count_and_unpackable_scalar_are_explained(gpu):
    def fill(n, out):
        out[0] = n

    k = cuda.jit(fill)
    cfg = k[1, 1]
    cfg(5, fake_device_array(4, np.int64))
    with pytest.raises(LaunchError, match="takes 2 arguments, 1 given"):
        cfg(fake_device_array(4, np.int64))
    with pytest.raises(LaunchError, match="cannot hold 1180591620717411303424"):
        cfg(2**70, fake_device_array(4, np.int64))  # the launcher cannot pack it: general path
    assert len(gpu.launches) == 1 and len(gpu.general) == 3


def test_another_thread_with_another_context_takes_the_general_path(gpu):
    k = cuda.jit(scale)
    cfg = k[1, 64]
    args = (np.float32(1), fake_device_array(64), fake_device_array(64))
    cfg(*args)
    other = SimpleNamespace(device=gpu.context.device)  # e.g. after select_device elsewhere

    def run():
        context._tls.ctx = other
        cfg(*args)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert len(gpu.general) == 2 and len(gpu.launches) == 2
    cfg(*args)  # this thread's launcher still applies here
    assert len(gpu.general) == 2 and len(gpu.launches) == 3


def test_driver_error_from_the_launcher_names_the_call(gpu):
    from cuda.bindings import driver as cu

    k = cuda.jit(scale)
    args = (np.float32(1), fake_device_array(64), fake_device_array(64))
    k[1, 64](*args)
    gpu.result = cu.CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    with pytest.raises(
        CudaDriverError, match="cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
    ) as info:
        k[1, 64](*args)
    assert len(gpu.general) == 1  # raised by the launcher itself
    # Shown: the user's frame only (the launch's API boundary re-raises with a bare raise).
    frames = traceback.extract_tb(info.value.__traceback__)
    assert len(frames) == 1 and frames[0].filename == __file__


def test_kernel_without_arguments(gpu):
    def tick():
        pass

    k = cuda.jit(tick)
    k[2, 8]()
    k[2, 8]()
    assert len(gpu.general) == 1 and [launch[3] for launch in gpu.launches] == [b"", b""]


def test_eager_strided_signature_takes_contiguous_arrays_with_their_strides(gpu):
    k = cuda.jit("void(float32, float32[:], float32[:])")(scale)  # layout 'A' declared
    x, out = fake_device_array(64), fake_device_array(64, offset=512)
    for _ in range(2):  # the general path, then the launcher
        k[1, 64](np.float32(2), x, out)
    pad = b"\0" * 4
    # 'A' passes extents and strides; out's are dead (its index is known non-negative and
    # below x.size), x's extent is read (x.size), its stride for the address.
    assert kept(k) == (True, True, True, True, True, False, True)
    want = (
        struct.pack("<f", 2)
        + pad
        + struct.pack("<Qqq", x.device_ptr, 64, 4)
        + struct.pack("<Qq", out.device_ptr, 4)
    )
    assert [launch[3] for launch in gpu.launches] == [want, want]
    assert len(gpu.general) == 1


def scale_too(a, x, out):  # another kernel with scale's parameters
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a + x[i]


def _function(kernel):
    """The kernel's function loaded on device 0 (the stand-in's)."""
    (spec,) = kernel.overloads.values()
    return spec.functions[0]


def test_kernels_of_one_layout_share_the_launcher_code_and_keep_their_handles(gpu, monkeypatch):
    from cujit.runtime import pycode

    compiled = []
    monkeypatch.setattr(pycode, "_CODE", {})
    monkeypatch.setattr(
        pycode, "compile", lambda *a: compiled.append(a[1]) or compile(*a), raising=False
    )
    x, out = fake_device_array(64), fake_device_array(64)
    kernels = [cuda.jit(scale), cuda.jit(scale_too)]
    for k in kernels:
        k[1, 64](np.float32(1), x, out)  # the general path, which makes the launcher
    # the flattener's text and the launcher's, one each for both kernels: compiled once
    assert compiled == ["<cujit flatten 3 args>", "<cujit launcher>"]
    del gpu.handles[:]
    for k in kernels:
        k[1, 64](np.float32(1), x, out)
    assert len(gpu.general) == 2  # the second launches went through the launchers
    handles = [_function(k).handle for k in kernels]
    assert gpu.handles == handles and handles[0] is not handles[1]


def test_configurations_share_one_generated_launcher_per_kind(gpu):
    k = cuda.jit(scale)
    x, out = fake_device_array(64), fake_device_array(64)
    for blocks in range(1, 11):  # a new grid each time, as a growing problem makes
        k[blocks, 64](np.float32(1), x, out)
        k[blocks, 64](np.float32(1), x, out)
    (spec,) = k.overloads.values()
    assert len(spec.launcher_code) == 1  # code made once, bound to ten shapes
    assert len(gpu.general) == 10  # each configuration's first launch only
    assert [launch[0] for launch in gpu.launches] == [
        (blocks, 1, 1) for blocks in range(1, 11) for _ in range(2)
    ]
