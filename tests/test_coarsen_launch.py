"""The launch side of coarsening (cujit/coarsen.py, coarsen_select.py), against the
stand-in driver of test_launcher.py: which kernel each launch runs on which grid,
through the general path and the per-configuration selector alike."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from test_launcher import BASE, FakeGPU, fake_device_array

from cujit import cuda
from cujit.dispatcher import Kernel
from cujit.runtime import context
from cujit.runtime import module as rt_module


def stand_in_gpu(monkeypatch, knob: str, background: bool = False):
    """test_launcher's stand-in driver, with ``knob`` (CUJIT_COARSEN, CUJIT_INDEX32) on;
    ``.general`` lists the launches that took the dispatcher's general path.  The
    variant compiles before the first launch that can take it unless ``background``
    (cujit/variants.py; test_variants_background.py)."""
    monkeypatch.setenv(knob, "1")
    monkeypatch.setenv("CUJIT_VARIANTS_LAZY", "1" if background else "0")
    fake = FakeGPU()
    monkeypatch.setattr(context._tls, "ctx", fake.context, raising=False)
    monkeypatch.setattr(rt_module, "load_module", lambda cubin: _Module(fake, cubin))
    import cujit.runtime.launch as rt_launch

    monkeypatch.setattr(rt_launch, "_DEFAULT_STREAM", [0])
    general = []
    real = Kernel._launch

    def counted(self, *args):
        general.append(args[0])
        return real(self, *args)

    monkeypatch.setattr(Kernel, "_launch", counted)
    fake.general = general
    return fake


@pytest.fixture
def gpu(monkeypatch):
    return stand_in_gpu(monkeypatch, "CUJIT_COARSEN")


class _Module:
    """A loaded module whose launches say which cubin (plain or wide) they came from."""

    def __init__(self, fake, cubin):
        self.fake, self.cubin = fake, cubin

    def get_function(self, symbol):
        fn = self.fake.function(symbol)
        inner, fake, cubin = fn.cu_launch, self.fake, self.cubin

        def cu_launch(*args):
            got = inner(*args)
            fake.launches[-1] = (*fake.launches[-1], cubin)
            return got

        fn.cu_launch = cu_launch
        return fn


def scale(a, x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


def cubins(k):
    (spec,) = k.overloads.values()
    return spec.result.cubin, spec.coarse.wide.result.cubin if spec.coarse.wide else None


def test_facts_pick_the_variant_and_its_grid(gpu):
    k = cuda.jit(scale)
    cfg = k[40, 32]  # 1280 threads
    x, out = fake_device_array(1000), fake_device_array(1000, offset=4096)
    cfg(np.float32(2), x, out)  # aligned, covered: wide, on ceil(40 / 4) blocks
    cfg(np.float32(2), x, out)  # again, through the selector
    assert len(gpu.general) == 1
    plain, wide = cubins(k)
    assert wide is not None and wide != plain
    assert [(launch[0], launch[-1]) for launch in gpu.launches] == [((10, 1, 1), wide)] * 2
    # x's pointer comes right after the scalar and its padding, in both variants
    assert gpu.launches[0][3][8:16] == struct.pack("<Q", BASE)

    shifted = fake_device_array(1001)[1:]  # 4 bytes off 16: the kernel as written
    cfg(np.float32(2), shifted, out)
    cfg(np.float32(2), shifted, out)
    assert len(gpu.general) == 2  # the plain slot filled by the first, used by the second
    assert [(launch[0], launch[-1]) for launch in gpu.launches[2:]] == [((40, 1, 1), plain)] * 2
    cfg(np.float32(2), x, out)  # and back
    assert gpu.launches[-1][0] == (10, 1, 1) and len(gpu.general) == 2


def test_in_the_background_the_second_launch_starts_the_variant_and_the_third_waits(
    monkeypatch,
):
    gpu = stand_in_gpu(monkeypatch, "CUJIT_COARSEN", background=True)
    k = cuda.jit(scale)
    cfg = k[40, 32]
    x, out = fake_device_array(1000), fake_device_array(1000, offset=4096)
    cfg(np.float32(2), x, out)
    (spec,) = k.overloads.values()
    assert spec.coarse.pending is None  # launched once: no variant compiles
    cfg(np.float32(2), x, out)
    assert spec.coarse.pending.started  # the launch started it, after enqueueing
    for _ in range(2):
        cfg(np.float32(2), x, out)
    plain, wide = cubins(k)
    assert wide is not None and wide != plain
    want = [((40, 1, 1), plain)] * 2 + [((10, 1, 1), wide)] * 2
    assert [(launch[0], launch[-1]) for launch in gpu.launches] == want
    # the second and third launches took the general path (the wide slot was empty), the
    # fourth the selector
    assert len(gpu.general) == 3


def test_a_grid_short_of_the_bound_runs_the_kernel_as_written(gpu):
    k = cuda.jit(scale)
    x, out = fake_device_array(1000), fake_device_array(1000, offset=4096)
    k[2, 32](np.float32(2), x, out)  # 64 threads for 1000 elements
    k[2, 32](np.float32(2), x, out)
    plain, wide = cubins(k)
    assert wide is None and [launch[0] for launch in gpu.launches] == [(2, 1, 1)] * 2


def test_a_2d_launch_runs_the_kernel_as_written(gpu):
    k = cuda.jit(scale)
    x, out = fake_device_array(64), fake_device_array(64, offset=4096)
    k[(1, 2), (32, 2)](np.float32(2), x, out)
    k[(1, 2), (32, 2)](np.float32(2), x, out)
    assert cubins(k)[1] is None and gpu.launches[-1][0] == (1, 2, 1)


def test_coarsen_false_has_no_plan(gpu):
    k = cuda.jit(scale, coarsen=False)
    x, out = fake_device_array(64), fake_device_array(64, offset=4096)
    k[2, 32](np.float32(2), x, out)
    (spec,) = k.overloads.values()
    assert spec.coarse is None and gpu.launches[-1][0] == (2, 1, 1)


class _SizeMethodArray:
    """An array of another library whose ``size`` is a method (as torch's tensors)."""

    def __init__(self, n):
        self.shape = (n,)
        self.__cuda_array_interface__ = {
            "shape": (n,),
            "typestr": "<f4",
            "data": (BASE, False),
            "version": 3,
        }

    def size(self):
        return self.shape[0]


def test_facts_of_an_array_whose_size_is_a_method_run_the_kernel_as_written(gpu):
    k = cuda.jit(scale)
    x, out = fake_device_array(1000), fake_device_array(1000, offset=4096)
    k[40, 32](np.float32(2), x, out)
    (spec,) = k.overloads.values()
    assert spec.coarse.facts((np.float32(2), x, out), 40, 32) == spec.coarse.full
    foreign = _SizeMethodArray(1000)
    assert spec.coarse.facts((np.float32(2), foreign, out), 40, 32) == 0
