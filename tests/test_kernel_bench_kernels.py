"""bench/kernel_bench.py's kernels, shrunk, on the CPU target against the bench's own
NumPy references (so a wrong kernel text or reference shows here, not on the H200),
and their CUDA C twins through NVRTC for sm_90 (compile only)."""

import importlib.util
import math
import pathlib
import sys

import numpy as np
import pytest

BENCH = pathlib.Path(__file__).resolve().parent.parent / "bench"
SMALL = {
    "elementwise": 4099,
    "complex": 2051,
    "nbody": 300,
    "spmv_rows": 777,
    "spmv_per_row": 6,
    "stencil": 12,
    "hist": 5000,
    "softmax_rows": 19,
    "softmax_cols": 100,
    "conv": 3001,
}


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("kernel_bench", BENCH / "kernel_bench.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.path.remove(str(BENCH))


NEW = ["axpby", "gelu", "complex_mul", "nbody", "spmv", "stencil7", "histogram"]
NEW += ["softmax", "conv1d"]


def test_the_suite_has_at_least_twelve_kernels(bench):
    assert len(bench.KERNELS) >= 12 and set(NEW) <= set(bench.KERNELS)


@pytest.mark.parametrize("name", NEW)
def test_python_kernel_matches_the_reference_on_the_cpu(bench, monkeypatch, name):
    from cujit import cuda

    for key, value in SMALL.items():
        monkeypatch.setitem(bench.more.SIZES, key, value)
    kernel = bench.KERNELS[name]
    args, grid, block, _ = kernel.make(np.random.default_rng(3), 2)
    expected = kernel.reference(args)
    fn = cuda.jit(bench.python_kernel(kernel, cuda), target="cpu")
    fn[grid, block](*args)
    for k, want in expected.items():
        err = bench.rel_err(args[k], want)
        assert err <= max(kernel.tol, 1e-6 if kernel.tol else 0.0), (name, k, err)
        assert not np.isnan(np.asarray(args[k], np.complex128)).any()


@pytest.mark.parametrize("name", NEW)
def test_c_twin_compiles_with_nvrtc(bench, name):
    from cujit.ptx.nvrtc import compile_cuda

    try:
        ptx = compile_cuda(bench.KERNELS[name].c_src, f"{name}.cu", (9, 0))
    except (OSError, ImportError) as exc:  # no NVRTC library on this machine
        pytest.skip(f"NVRTC unavailable: {exc}")
    assert f".entry {name}(" in ptx.decode()


def test_input_sets_exceed_twice_the_l2(bench):
    small = [np.float32(1), np.ones(1000, np.float32), np.ones(1000, np.float32)]
    sets = bench.input_sets(small, 60_000)
    assert len(sets) == math.ceil(120_000 / 8000) and sets[0] is small
    assert sets[1][1] is not small[1] and np.array_equal(sets[1][1], small[1])
    big = [np.ones(40_000, np.float32)]
    assert len(bench.input_sets(big, 60_000)) == 1
