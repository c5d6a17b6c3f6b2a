"""The kernel-language constructs of literal_unroll, reductions, nested functions,
recursion, optional results and array views, run on the GPU (marked ``gpu``) against
NumPy and Python: the CPU-target tests' kernels on the CUDA target."""

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import literal_unroll

pytestmark = pytest.mark.gpu

NAN = float("nan")
CASES = (
    np.float64([1.0, 2.0, -0.0, -1.5]),
    np.float64([NAN, -1.5, 2.5]),
    np.float64([[1.0, 1.5], [4.0, -0.5]])[::-1],
    np.int32([4, -7, 9]),
)


@pytest.mark.parametrize("name", ["sum", "max", "nanmin", "mean", "nanmean", "std", "any"])
def test_reductions_over_literal_unroll(name):
    namespace = {"np": np, "literal_unroll": literal_unroll, "cases": CASES}
    exec(
        "def kernel(out):\n"
        "    i = 0\n"
        "    for arr in literal_unroll(cases):\n"
        f"        out[i] = np.{name}(arr)\n"
        "        i += 1\n",
        namespace,
    )
    kernel = cuda.jit(namespace["kernel"])
    ref = np.array([getattr(np, name)(a) for a in CASES])
    out = cuda.to_device(np.full(len(CASES), 99, dtype=ref.dtype))
    kernel[1, 1](out)
    np.testing.assert_allclose(out.copy_to_host(), ref, rtol=1e-15, equal_nan=True)


@cuda.jit(device=True)
def apply(func, *args):
    return func(*args)


@cuda.jit(device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@cuda.jit(device=True)
def maybe(x):
    if x > 0:
        return x * 3
    return


@cuda.jit(escaping_captures=True)  # affine, passed on, captures the run-time x
def _mixed(out, a, x):
    scale = 2.5

    def affine(v):
        return v * scale + x  # scale frozen, x captured at run time

    out[0] = apply(affine, 4.0)
    out[1] = fib(15)
    r = maybe(x)
    out[2] = -1 if r is None else r
    flat = a.reshape(a.size)
    out[3] = flat[5] + a.view(np.int64)[0, 0] * 0
    out[4] = a.sum()


def test_closures_recursion_optional_and_views():
    a = np.arange(6.0).reshape(2, 3)
    out = cuda.to_device(np.full(5, np.nan))
    _mixed[1, 1](out, a, 7)
    np.testing.assert_array_equal(out.copy_to_host(), [4.0 * 2.5 + 7, 610, 21, 5.0, 15.0])
