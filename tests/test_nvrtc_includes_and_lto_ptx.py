"""CUDA C++ linked into kernels sees the toolkit's headers and numba's extra include
directories (CUDA_NVRTC_EXTRA_SEARCH_PATHS); inspect_lto_ptx shows the kernel and its
foreign code after nvJitLink's link-time optimisation.  Everything here compiles without
a GPU; the gpu test launches the kernel that uses the extra include directory."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from cujit import cuda, numba_config
from cujit.cuda import float32, int32
from cujit.ptx import libs
from cujit.ptx.nvrtc import NVRTCError, compile_cuda

ARGS = (int32[::1], int32[::1])


def _has_header(name: str) -> bool:
    return any(os.path.exists(os.path.join(d, name)) for d in libs.cuda_include_dirs())


@pytest.fixture
def search_paths(monkeypatch):
    """Set numba's CUDA_NVRTC_EXTRA_SEARCH_PATHS for one test."""

    def set_paths(value: str) -> None:
        monkeypatch.setattr(numba_config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", value)

    return set_paths


@pytest.mark.skipif(not _has_header("cuda_fp16.h"), reason="no CUDA toolkit headers found")
def test_a_source_including_cuda_fp16_compiles():
    src = """#include <cuda_fp16.h>
    extern "C" __device__ int hadd(__half *r, __half *a, __half *b) { *r = *a + *b; return 0; }"""
    ptx = compile_cuda(src, "hadd.cu", (9, 0)).decode()
    assert re.search(r"\.visible\s+\.func.*hadd", ptx)
    assert "add.f16" in ptx or "add.rn.f16" in ptx


def test_search_paths_split_on_colons(search_paths):
    search_paths("/a/b::/c")
    assert numba_config.nvrtc_search_paths() == ("/a/b", "/c")
    search_paths("")
    assert numba_config.nvrtc_search_paths() == ()


def test_numba_cuda_config_is_cujits_numba_config():
    assert cuda.config is numba_config
    assert hasattr(cuda.config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS")


def _header_kernel(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "triple.cuh").write_text("__device__ int triple(int x) { return 3 * x; }\n")
    src = cuda.CUSource(
        '#include <triple.cuh>\nextern "C" __device__ int f(int *r, int x) '
        "{ *r = triple(x) + 1; return 0; }",
        name="uses_header.cu",
    )
    f = cuda.declare_device("f", "int32(int32)", link=src)

    @cuda.jit(target="cuda")
    def k(out, x):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = f(x[i])

    return k, str(inc)


def test_extra_search_paths_reach_nvrtc(tmp_path, search_paths):
    k, inc = _header_kernel(tmp_path)
    search_paths("")
    with pytest.raises(NVRTCError, match="triple.cuh"):
        k.compile(ARGS)
    search_paths(f"/nonexistent:{inc}")
    spec = k.compile(ARGS)
    assert spec.result.cubin[:4] == b"\x7fELF"
    assert k._options().include_paths == ("/nonexistent", inc)


@pytest.mark.gpu
def test_extra_search_paths_kernel_runs(tmp_path, search_paths):
    k, inc = _header_kernel(tmp_path)
    search_paths(inc)
    x = np.arange(-50, 50, dtype=np.int32) * 7
    out = np.full_like(x, -999)
    k[1, 128](out, x)
    np.testing.assert_array_equal(out, 3 * x + 1)


SHIFT_SRC = """
extern "C" __device__ int mix(int *r, int a, int b) { *r = (a << 3) ^ (b * 0x2f1); return 0; }
"""


def test_inspect_lto_ptx_inlines_the_foreign_function():
    mix = cuda.declare_device("mix", "int32(int32, int32)", link=cuda.CUSource(SHIFT_SRC))

    @cuda.jit(target="cuda")
    def k(out, x):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = mix(x[i], i)

    sig = (int32[::1], int32[::1])
    asm = k.inspect_asm(sig)
    assert re.search(r"call[^;]*mix", asm)  # without LTO: a call to the linked function
    lto = k.inspect_lto_ptx(sig)
    assert re.search(r"\.entry\s+\w*k", lto)
    assert "call" not in lto
    assert "xor.b32" in lto and ("shl.b32" in lto or "mul" in lto)
    assert list(k.inspect_lto_ptx()) == [sig]


def test_inspect_lto_ptx_of_a_cpu_target_kernel_shows_bf16_instructions():
    from cujit.cuda import bf16

    nv_bfloat16 = bf16.nv_bfloat16

    @cuda.jit(target="cpu")
    def k(out, x):
        a = nv_bfloat16(x[0])
        b = nv_bfloat16(x[1])
        out[0] = float32(a + b)
        out[1] = float32(a * b)

    x = np.array([3.25, -1.5], dtype=np.float32)  # exact in bfloat16
    out = np.full(2, np.nan, dtype=np.float32)
    k[1, 1](out, x)
    np.testing.assert_array_equal(out, [3.25 - 1.5, 3.25 * -1.5])
    ptx = next(iter(k.inspect_lto_ptx().values()))  # compiled for the CPU device's sm_90
    assert "add.bf16" in ptx and "mul.bf16" in ptx


MIX_SRC = """
extern "C" __device__ int mix_values(int *r, int a, int b)
{ *r = (a << 3) ^ (b * 0x2f1); return 0; }
"""


def _mix_kernel(**flags):
    mix = cuda.declare_device("mix_values", "int32(int32, int32)", link=cuda.CUSource(MIX_SRC))

    def body(out, x):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = mix(x[i], i)

    return cuda.jit(target="cuda", **flags)(body)


def test_jit_lto_links_the_foreign_function_into_the_kernel():
    plain = _mix_kernel().compile(ARGS).result.cubin
    lto = _mix_kernel(lto=True).compile(ARGS).result.cubin
    assert plain[:4] == lto[:4] == b"\x7fELF"
    # Without LTO the cubin keeps the linked function's own symbol; with it, the
    # function is optimised into the kernel and its symbol is gone.
    assert b"mix_values" in plain
    assert b"mix_values" not in lto
    assert _mix_kernel(lto=True)._options().lto and not _mix_kernel()._options().lto


@pytest.mark.gpu
def test_jit_lto_kernel_runs():
    k = _mix_kernel(lto=True)
    x = np.arange(-64, 64, dtype=np.int32) * 13
    out = np.full_like(x, -1)
    k[1, 128](out, x)
    i = np.arange(x.size, dtype=np.int64)
    want = ((x.astype(np.int64) << 3) ^ (i * 0x2F1)).astype(np.int32)
    np.testing.assert_array_equal(out, want)
