"""``jit(launch_bounds=...)``: compiled into the kernel as NVVM's annotations (PTX
``.maxntid`` / ``.minnctapersm`` / ``.maxclusterrank``) and enforced at launch."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda.cudadrv.driver import CudaAPIError
from cujit.launch_bounds import LaunchBoundsError


def fill(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = i * 2


def _directives(ptx: str) -> dict[str, str]:
    found = re.findall(r"^\s*\.(maxntid|minnctapersm|maxclusterrank)\s+([^\n]+)$", ptx, re.M)
    return {name: value.strip() for name, value in found}


@pytest.mark.parametrize(
    "bounds,expected",
    [
        (128, {"maxntid": "128, 1, 1"}),
        ((64,), {"maxntid": "64, 1, 1"}),
        ((256, 3), {"maxntid": "256, 1, 1", "minnctapersm": "3"}),
        ((96, 2, 4), {"maxntid": "96, 1, 1", "minnctapersm": "2", "maxclusterrank": "4"}),
    ],
)
def test_bounds_become_ptx_directives(bounds, expected):
    k = cuda.jit("void(int32[:])", launch_bounds=bounds, target="cuda")(fill)
    assert _directives(k.inspect_asm(k.signatures[0])) == expected


def test_no_bounds_no_directives():
    k = cuda.jit("void(int32[:])", target="cuda")(fill)
    assert _directives(k.inspect_asm(k.signatures[0])) == {}


def test_bounds_are_part_of_the_specialisations_identity():
    a = cuda.jit("void(int32[:])", launch_bounds=128, target="cuda")(fill)
    b = cuda.jit("void(int32[:])", launch_bounds=64, target="cuda")(fill)
    assert a._base_options != b._base_options
    assert a.inspect_asm(a.signatures[0]) != b.inspect_asm(b.signatures[0])


def test_launch_within_the_bound_runs_and_above_is_refused():
    k = cuda.jit(launch_bounds=(32, 1), target="cpu")(fill)
    out = np.full(64, -1, dtype=np.int32)
    k[2, 32](out)
    np.testing.assert_array_equal(out, np.arange(64) * 2)
    out[:] = -1
    with pytest.raises(LaunchBoundsError, match="CUDA_ERROR_INVALID_VALUE") as info:
        k[1, (8, 8)](out)  # 64 threads
    assert "64 threads per block" in str(info.value) and "(32)" in str(info.value)
    assert isinstance(info.value, CudaAPIError)
    assert (out == -1).all()  # nothing ran


def test_error_is_cuda_cores_error_class():
    core = pytest.importorskip("cuda.core._utils.cuda_utils")
    assert issubclass(LaunchBoundsError, core.CUDAError)


def test_forall_keeps_to_the_bound_on_the_cpu_target():
    k = cuda.jit(launch_bounds=16, target="cpu")(fill)
    out = np.full(100, -1, dtype=np.int32)
    k.forall(100)(out)
    np.testing.assert_array_equal(out, np.arange(100) * 2)


@pytest.mark.gpu
def test_gpu_launch_above_the_bound_is_refused():
    k = cuda.jit(launch_bounds=128)(fill)
    out = cuda.to_device(np.full(256, -1, dtype=np.int32))
    k[1, 128](out)
    with pytest.raises(LaunchBoundsError):
        k[1, 256](out)
    host = out.copy_to_host()
    np.testing.assert_array_equal(host[:128], np.arange(128) * 2)
    assert (host[128:] == -1).all()
