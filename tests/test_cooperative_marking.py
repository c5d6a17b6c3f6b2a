"""Which kernels are cooperative, as numba marks them: one that takes the grid group
(``cuda.cg.this_grid()``, with or without ``sync()``), in its body or a device function's,
or calls a foreign function declared with ``use_cooperative=True``; and
``overload._codelibrary._linking_files``, the files linked (never cudadevrt)."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, float64
from cujit.ir.analysis import needs_cooperative_launch, uses_grid_sync
from cujit.options import Options
from cujit.pipeline import compile_kernel

F64 = (float64[::1],)


def takes_the_grid(a):
    cuda.cg.this_grid()
    a[0] = 2.5


def syncs_the_grid(a):
    g = cuda.cg.this_grid()
    g.sync()
    a[0] = 2.5


def plain(a):
    a[0] = cuda.grid(1) + 0.5


@cuda.jit(device=True)
def grid_in_callee():
    cuda.cg.this_grid()
    return 1.5


def calls_it(a):
    a[0] = grid_in_callee()


def _typed(fn):
    return compile_kernel(fn, F64, Options(target="cpu"), stop_after="passes").outputs["passes"]


@pytest.mark.parametrize(
    "fn, cooperative, syncs",
    [
        (takes_the_grid, True, False),
        (syncs_the_grid, True, True),
        (plain, False, False),
        (calls_it, True, False),
    ],
)
def test_the_grid_group_marks_the_kernel_cooperative(fn, cooperative, syncs):
    typed = _typed(fn)  # after dead-code elimination: the mark must survive it
    assert needs_cooperative_launch(typed) is cooperative
    assert uses_grid_sync(typed) is syncs


@pytest.mark.parametrize("fn", [takes_the_grid, syncs_the_grid, plain, calls_it])
def test_cpu_launch_runs_and_reports_numba_s_flag(fn):
    k = cuda.jit(target="cpu")(fn)
    a = np.full(1, np.nan)
    k[1, 1](a)
    expect = 0.5 if fn is plain else 1.5 if fn is calls_it else 2.5
    assert a[0] == expect
    (spec,) = k.overloads.values()
    assert spec.cooperative is (fn is not plain)
    assert spec._codelibrary._linking_files == []


SOURCE = 'extern "C" __device__ int coop_fn(int* ret) { *ret = 7; return 0; }'


@pytest.mark.parametrize("coop", [True, False])
def test_declare_device_use_cooperative_marks_the_caller(coop):
    f = cuda.declare_device(
        "coop_fn", "int32()", link=[cuda.CUSource(SOURCE)], use_cooperative=coop
    )

    @cuda.jit("void(int32[::1])", target="cuda")
    def k(out):
        out[0] = f()

    (spec,) = k.overloads.values()
    assert spec.cooperative is coop
    assert spec._codelibrary._linking_files == ["<unnamed-cu>"]
    assert not any("cudadevrt" in name for name in spec._codelibrary._linking_files)


@pytest.mark.gpu
def test_a_kernel_taking_the_grid_is_launched_cooperatively():
    k = cuda.jit(takes_the_grid)
    a = cuda.to_device(np.full(1, np.nan))
    blocks = k.compile(F64).max_cooperative_grid_blocks(64)
    k[blocks, 64](a)
    assert a.copy_to_host()[0] == 2.5 and k.overloads[F64].cooperative
