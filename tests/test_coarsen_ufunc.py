"""cujit's vectorize kernels through coarsening: the flat form of a ufunc whose scalar
function is pure is a one-element-per-thread kernel that the launch coarsens; results
against NumPy on the CPU target, aligned and not, and the fallbacks."""

import math

import numpy as np
import pytest

from cujit import config
from cujit.ufunc import vectorize

RNG = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def variants_at_the_first_launch(monkeypatch):
    """These tests check the variants' results: each kernel's first launch that could
    take one compiles it (tests/test_variants_background.py tests the lazy default)."""
    monkeypatch.setenv("CUJIT_VARIANTS_LAZY", "0")


def _fma_exp(x, y):
    return math.exp(x) * y + 1


def _is_positive(x):
    return x > 0


def flat_kernel(ufunc):
    kernels = [k for key, k in ufunc._kernels.items() if "coarsened" in key]
    assert len(kernels) == 1
    return kernels[0]


@pytest.mark.parametrize("dtype, width", [(np.float32, 4), (np.float64, 2)])
@pytest.mark.parametrize("n", [1, 7, 1001])
def test_binary_ufunc_coarsened_matches_numpy(dtype, width, n):
    f = vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cpu")(
        _fma_exp
    )
    x, y = RNG.random(n + 1).astype(dtype), RNG.random(n + 1).astype(dtype)
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(f(x[:n], y[:n]), np.exp(x[:n]) * y[:n] + 1, rtol=tol)
    (spec,) = flat_kernel(f).overloads.values()
    assert spec.coarse is not None and spec.coarse.k == width and spec.coarse.wide is not None
    # a view 1 element in: not 16-byte aligned, so the kernel as written runs it
    np.testing.assert_allclose(f(x[1:], y[1:]), np.exp(x[1:]) * y[1:] + 1, rtol=tol)


def test_scalar_operand_and_explicit_out():
    f = vectorize(["float32(float32, float32)"], target="cpu")(_fma_exp)
    x = RNG.random(513).astype(np.float32)
    out = np.full(513, np.nan, np.float32)
    f(x, np.float32(2.5), out=out)
    np.testing.assert_allclose(out, np.exp(x) * 2.5 + 1, rtol=1e-6)
    assert flat_kernel(f) is not None


def test_bool_output_takes_the_grid_stride_kernel():
    f = vectorize(["boolean(float32)"], target="cpu")(_is_positive)
    x = RNG.standard_normal(100).astype(np.float32)
    np.testing.assert_array_equal(f(x), x > 0)
    assert [k for key, k in f._kernels.items() if "coarsened" in key] == [None]


def test_switched_off(monkeypatch):
    monkeypatch.setenv(config.COARSEN.name, "0")
    f = vectorize(["float32(float32, float32)"], target="cpu")(_fma_exp)
    x = RNG.random(64).astype(np.float32)
    np.testing.assert_allclose(f(x, x), np.exp(x) * x + 1, rtol=1e-6)
    assert [k for key, k in f._kernels.items() if "coarsened" in key] == [None]


@pytest.mark.gpu
def test_gpu_ufunc_coarsened():
    from cujit import cuda

    f = vectorize(["float32(float32, float32)"], target="cuda")(_fma_exp)
    n = (1 << 22) + 3
    x, y = RNG.random(n).astype(np.float32), RNG.random(n).astype(np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    out = cuda.device_array(n, np.float32)
    for _ in range(3):
        f(dx, dy, out=out)
    np.testing.assert_allclose(out.copy_to_host(), np.exp(x) * y + 1, rtol=1e-6)
    (spec,) = flat_kernel(f).overloads.values()
    assert spec.coarse.wide is not None
