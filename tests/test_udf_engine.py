"""examples/udf_engine: a user's function of masked values compiled through the
extension API into a generated kernel that a host routine launches (CPU target on CI;
the gpu tests run it, and its C++ shim, on the GPU)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cujit import cuda  # noqa: E402
from cujit.cuda import boolean, float64, int32  # noqa: E402
from cujit.diagnostics import UnsupportedError  # noqa: E402
from examples.udf_engine import Column, Masked, apply_udf, compile_udf, masked_fma  # noqa: E402


def _columns(n: int, seed: int):
    rng = np.random.default_rng(seed)
    x = Column(rng.uniform(-5, 5, n), rng.random(n) > 0.3)
    y = Column(rng.integers(-9, 9, n).astype(np.int32), rng.random(n) > 0.2)
    return x, y


def linear(x, y):
    return x * 2.5 - y


def _check_linear(out: Column, x: Column, y: Column) -> None:
    valid = x.mask & y.mask
    assert out.data.dtype == np.float64  # float64 * float - int32: float64
    np.testing.assert_array_equal(out.mask, valid)
    ref = x.data * 2.5 - y.data
    got = out.data[valid]
    assert np.linalg.norm(got - ref[valid]) / np.linalg.norm(ref[valid]) < 1e-12


def test_udf_over_masked_columns_cpu():
    x, y = _columns(1000, 1)
    _check_linear(apply_udf(linear, x, y, target="cpu"), x, y)


def fill_invalid(x):
    if x.valid:
        return x + 1.0
    return Masked(-1.0, True)


def test_udf_decides_validity_itself_cpu():
    x, _ = _columns(300, 2)
    out = apply_udf(fill_invalid, x, target="cpu")
    assert out.mask.all()
    np.testing.assert_array_equal(out.data, np.where(x.mask, x.data + 1.0, -1.0))


def test_result_type_comes_from_the_compiled_function():
    def halve(v):
        return v / 2

    _, dtype = compile_udf(halve, (np.dtype(np.int32).str,), "cpu")
    assert dtype == np.float64  # int32 / int: true division
    _, dtype = compile_udf(linear, (np.dtype(np.float32).str, np.dtype(np.int32).str), "cpu")
    assert dtype == np.float64


def test_generated_kernel_compiles_to_ptx_without_a_gpu():
    kernel, _ = compile_udf(linear, (np.dtype(np.float64).str, np.dtype(np.int32).str), "cuda")
    sig = (float64[::1], boolean[::1], float64[::1], boolean[::1], int32[::1], boolean[::1])
    ptx, _ = cuda.compile_ptx(kernel.py_func, sig)
    assert ".entry" in ptx and "sm_90" in ptx


def fma_udf(x, y, z):
    return masked_fma(x, y, z)


def test_shim_refused_on_the_cpu_target_naming_the_call():
    x, _ = _columns(16, 3)
    with pytest.raises(UnsupportedError, match="CPU target") as info:
        apply_udf(fma_udf, x, x, x, target="cpu")
    assert "shim.py" in str(info.value)


def test_shim_kernel_links_to_a_cubin_without_a_gpu():
    kernel, dtype = compile_udf(fma_udf, (np.dtype(np.float64).str,) * 3, "cuda")
    assert dtype == np.float64
    sig = (float64[::1], boolean[::1]) * 4
    assert kernel.compile(sig).result.cubin[:4] == b"\x7fELF"


@pytest.mark.gpu
def test_gpu_udf_over_masked_columns():
    x, y = _columns(100_000, 4)
    _check_linear(apply_udf(linear, x, y), x, y)


@pytest.mark.gpu
def test_gpu_udf_calls_the_cpp_shim():
    rng = np.random.default_rng(5)
    cols = [Column(rng.uniform(-2, 2, 5000), rng.random(5000) > 0.25) for _ in range(3)]
    out = apply_udf(fma_udf, *cols)
    valid = cols[0].mask & cols[1].mask & cols[2].mask
    np.testing.assert_array_equal(out.mask, valid)
    ref = cols[0].data * cols[1].data + cols[2].data
    got = out.data[valid]
    assert np.linalg.norm(got - ref[valid]) / np.linalg.norm(ref[valid]) < 1e-12
