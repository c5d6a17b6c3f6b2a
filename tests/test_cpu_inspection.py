"""A kernel on the CPU target inspects as on a GPU (cujit/cuda_view.py, inspection.py):
``inspect_asm`` is its PTX and ``inspect_llvm`` its NVVM IR, compiled on first use for the
CPU device's compute capability (or CUJIT_ARCH); ``target="cpu"`` shows the host code the
CPU target runs.  No GPU is needed: libNVVM and nvJitLink compile without one."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda, events
from cujit.types import float32, int32

SIG = (float32[::1], float32[::1])


def clamp_below(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = max(x[i], float32(1.0))


def grid_synced(a):
    g = cuda.cg.this_grid()
    a[cuda.grid(1)] = 1
    g.sync()


def _run(kernel):
    x = np.linspace(-2, 3, 64, dtype=np.float32)
    out = np.full_like(x, np.nan)
    kernel[2, 32](x, out)
    np.testing.assert_array_equal(out, np.maximum(x, 1))  # the host code ran
    return kernel


def test_inspect_asm_is_the_ptx_a_gpu_kernel_has():
    cpu = _run(cuda.jit(target="cpu")(clamp_below))
    gpu = cuda.jit(SIG, target="cuda")(clamp_below)  # compiled, never launched
    ptx = cpu.inspect_asm(SIG)
    assert ".target sm_90" in ptx and ".entry clamp_below" in ptx
    assert "max.f32" in ptx  # float max is fmax: PTX's max, not a host maxss
    assert ptx == gpu.inspect_asm(SIG) == cpu.inspect_ptx(SIG) == cpu.inspect_lto_ptx(SIG)
    assert cpu.inspect_asm() == {SIG: ptx}


def test_inspect_llvm_is_the_nvvm_ir():
    cpu = _run(cuda.jit(target="cpu")(clamp_below))
    llvm = cpu.inspect_llvm(SIG)
    assert "nvptx64" in llvm and "x86_64" not in llvm
    assert llvm == cuda.jit(SIG, target="cuda")(clamp_below).inspect_llvm(SIG)


def test_the_host_views_are_asked_for_by_target():
    cpu = _run(cuda.jit(target="cpu")(clamp_below))
    host_llvm = cpu.inspect_llvm(SIG, target="cpu")
    assert 'target triple = "x86_64' in host_llvm and "nvptx" not in host_llvm
    host_asm = cpu.inspect_asm(SIG, target="cpu")
    assert "@function" in host_asm and ".entry" not in host_asm  # ELF assembly, not PTX
    assert cpu.inspect_asm(target="cpu") == {SIG: host_asm}
    spec = cpu.overloads[SIG]
    assert spec.inspect_llvm(target="cpu") == host_llvm
    assert spec.inspect_asm(target="cpu") == host_asm
    assert cpu.inspect_asm(SIG, target="cuda") == cpu.inspect_asm(SIG)


def test_a_gpu_kernel_has_no_host_view():
    gpu = cuda.jit(SIG, target="cuda")(clamp_below)
    with pytest.raises(ValueError, match="host code of a kernel on the CPU target"):
        gpu.inspect_asm(SIG, target="cpu")
    with pytest.raises(ValueError, match="unknown target 'x86'"):
        gpu.inspect_llvm(SIG, target="x86")


def test_the_architecture_follows_cujit_arch_and_a_specialisations_cc(monkeypatch):
    monkeypatch.setenv("CUJIT_ARCH", "8.0")
    cpu = _run(cuda.jit(target="cpu")(clamp_below))
    assert ".target sm_80" in cpu.inspect_asm(SIG)
    spec = cpu.overloads[SIG]
    assert ".target sm_86" in spec.inspect_asm((8, 6))
    assert ".target sm_80" in spec.inspect_asm()
    assert "nvptx64" in spec.inspect_llvm()


def test_the_cuda_compile_happens_once_and_only_when_inspected():
    seen = []

    def count(kind, name, target):
        if kind == events.COMPILE:
            seen.append(target)

    events.subscribe(count)
    try:
        cpu = _run(cuda.jit(target="cpu")(clamp_below))
        assert "cpu" in seen and "cuda" not in seen  # a launch compiles for the host only
        cpu.inspect_asm(SIG)
        cpu.inspect_llvm(SIG)
        cpu.inspect_asm()
        assert seen.count("cuda") == 1
    finally:
        events.unsubscribe(count)


def test_cooperative_follows_the_grid_sync():
    synced = cuda.jit((int32[::1],), target="cpu")(grid_synced)
    plain = cuda.jit(target="cpu")(clamp_below)
    _run(plain)
    assert synced.overloads[(int32[::1],)].cooperative is True
    assert plain.overloads[SIG].cooperative is False
    assert re.search(r"\.entry grid_synced", synced.inspect_asm((int32[::1],)))


def test_sass_without_nvdisasm_says_so(monkeypatch):
    from cujit import inspection

    cpu = _run(cuda.jit(target="cpu")(clamp_below))
    monkeypatch.setattr(inspection, "nvdisasm_path", lambda: None)
    with pytest.raises(RuntimeError, match="nvdisasm was not found"):
        cpu.inspect_sass(SIG)
    with pytest.raises(RuntimeError, match="nvdisasm was not found"):
        cpu.inspect_sass_cfg()


def test_sass_with_nvdisasm_disassembles_the_cuda_cubin():
    from cujit.inspection import nvdisasm_path

    if nvdisasm_path() is None:
        pytest.skip("nvdisasm is not installed here")
    cpu = _run(cuda.jit(target="cpu")(clamp_below))
    sass = cpu.inspect_sass(SIG)
    assert "clamp_below" in sass and "EXIT" in sass


def test_compile_ptx_for_current_device_on_the_cpu_target(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    ptx, _ = cuda.compile_ptx_for_current_device(clamp_below, SIG)
    assert ".target sm_90" in ptx
    monkeypatch.setenv("CUJIT_ARCH", "8.9")
    ptx, _ = cuda.compile_ptx_for_current_device(clamp_below, SIG)
    assert ".target sm_89" in ptx


TABLE = np.arange(48, dtype=np.int64)


def reads_a_constant_table(x):
    t = cuda.const.array_like(TABLE)
    i = cuda.grid(1)
    if i < x.size:
        x[i] = t[i % 48]


def reverses_through_a_local_array(x):
    a = cuda.local.array(1000, int32)
    for i in range(1000):
        a[i] = x[i]
    for i in range(1000):
        x[i] = a[999 - i] + a[(i * 7) % 1000]


def test_resource_queries_are_those_of_the_cuda_code():
    sig = (cuda.types.int64[::1],)
    const = cuda.jit(sig, target="cpu")(reads_a_constant_table)
    x = np.full(64, -1, dtype=np.int64)
    const[1, 64](x)
    np.testing.assert_array_equal(x, TABLE[np.arange(64) % 48])
    assert const.get_const_mem_size() == TABLE.nbytes  # the table in the constant bank
    assert 0 < const.get_regs_per_thread() <= 255
    assert const.get_local_mem_per_thread() == 0

    local = cuda.jit(target="cpu")(reverses_through_a_local_array)
    y = np.arange(1000, dtype=np.int32)
    local[1, 1](y)
    i = np.arange(1000)
    np.testing.assert_array_equal(y, (999 - i) + (i * 7) % 1000)
    (lsig,) = local.signatures
    assert local.get_local_mem_per_thread(lsig) >= 1000 * 4  # the array lives in local memory
    assert local.get_const_mem_size(lsig) == 0
    assert local.get_max_threads_per_block(lsig) == 1024  # the CPU launch's limit


def test_a_device_function_has_no_sass_of_its_own():
    @cuda.jit(device=True)
    def add(a, b):
        return a + b

    with pytest.raises(RuntimeError, match="Cannot inspect SASS of a device function"):
        add.inspect_sass((int32, int32))
