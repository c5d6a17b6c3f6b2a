"""The kernel object's inspection and resource queries (cujit/inspection.py): numba's
shapes (a dict over specialisations without a signature, one answer with one), on the
CPU target here and on the GPU (marked gpu)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from cujit import cuda
from cujit.types import float32, float64, int32

F32 = (float32[::1], float32[::1])
F64 = (float64[::1], float64[::1])


def _kernel(target: str):
    @cuda.jit(target=target)
    def twice(x, y):
        s = cuda.shared.array(64, float32)
        i = cuda.grid(1)
        s[cuda.threadIdx.x] = x[i]
        cuda.syncthreads()
        y[i] = s[cuda.threadIdx.x] * 2

    return twice


def _run(k, dtype):
    x = np.arange(64, dtype=dtype)
    y = np.full_like(x, -1)
    k[1, 64](x, y)
    assert np.array_equal(y, 2 * x)


def test_signatures_and_per_signature_dicts():
    k = _kernel("cpu")
    _run(k, np.float32)
    _run(k, np.float64)
    assert k.signatures == [F32, F64] and list(k.definitions) == [F32, F64]
    llvm = k.inspect_llvm()
    assert set(llvm) == {F32, F64}
    assert "float" in llvm[F32] and "double" in llvm[F64]
    assert k.inspect_llvm(F64) == llvm[F64]
    asm = k.inspect_asm(signature=F32)
    # numba's meaning, on the CPU target too: the kernel's PTX (tests/test_cpu_inspection.py)
    assert ".entry twice" in asm and "bar.sync" in asm
    assert k.inspect_lto_ptx(F32) == asm


def test_resource_queries_on_the_cpu_target():
    k = _kernel("cpu")
    _run(k, np.float32)
    assert k.get_shared_mem_per_block() == {F32: 64 * 4}
    assert k.get_shared_mem_per_block(F32) == 256
    assert k.get_max_threads_per_block(F32) == 1024
    # Registers, local and constant memory: ptxas's for the kernel's CUDA code
    # (tests/test_cpu_inspection.py).
    assert 0 < k.get_regs_per_thread(F32) <= 255 and k.get_local_mem_per_thread(F32) == 0
    assert k.get_const_mem_size() == {F32: 0}


def test_inspect_types_prints_each_specialisation():
    k = _kernel("cpu")
    _run(k, np.float32)
    out = io.StringIO()
    k.inspect_types(file=out)
    text = out.getvalue()
    assert text.startswith("twice (array(float32, 1d, C), array(float32, 1d, C))")
    assert "shared.array" in text and "cuda.syncthreads" in text


def test_specialize_fixes_the_types():
    k = _kernel("cpu")
    x = np.arange(64, dtype=np.float32)
    fixed = k.specialize(x, x)
    assert fixed.specialized and not k.specialized
    assert fixed.signatures == [F32]
    assert fixed.get_shared_mem_per_block() == 256  # one answer, not a dict
    _run(fixed, np.float32)
    by_type = k.specialize(int32[::1], int32[::1])
    assert by_type.signatures == [(int32[::1], int32[::1])]
    with pytest.raises(RuntimeError, match="already specialized"):
        fixed.specialize(x, x)


def test_sass_on_the_cpu_target_is_the_cubins_or_says_why_not():
    from cujit.inspection import nvdisasm_path

    k = _kernel("cpu")
    _run(k, np.float32)
    if nvdisasm_path() is None:
        with pytest.raises(RuntimeError, match="nvdisasm was not found"):
            k.inspect_sass(F32)
    else:
        assert "BAR" in k.inspect_sass(F32)


@pytest.mark.gpu
def test_on_the_gpu():
    from cujit.inspection import nvdisasm_path

    k = _kernel("cuda")
    _run(k, np.float32)
    assert ".entry" in k.inspect_asm()[F32] and k.inspect_asm(F32) == k.inspect_ptx(F32)
    assert k.get_shared_mem_per_block(F32) == 256
    assert 0 < k.get_regs_per_thread(F32) <= 255
    assert k.get_max_threads_per_block(F32) >= 64
    assert k.get_local_mem_per_thread(F32) >= 0 and k.get_const_mem_size(F32) >= 0
    if nvdisasm_path() is None:
        with pytest.raises(RuntimeError, match="needs nvdisasm"):
            k.inspect_sass(F32)
    else:
        sass = k.inspect_sass(F32)
        assert "BAR" in sass and ("LDS" in sass or "STS" in sass)


def test_a_kernel_of_one_declared_signature_still_inspects_as_a_dict():
    # numba: a one-signature kernel is specialised, but inspect_llvm()/inspect_asm()
    # without a signature still map each signature to its code (numba-cuda's
    # test_atomics reads next(iter(kernel.inspect_asm().values()))).
    k = cuda.jit("void(float32[::1], float32[::1])", target="cpu")(_kernel("cpu").py_func)
    assert k.specialized
    for code in (k.inspect_llvm(), k.inspect_asm()):
        assert isinstance(code, dict) and list(code) == [F32]
        assert isinstance(next(iter(code.values())), str)
    assert isinstance(k.inspect_llvm(F32), str)
