"""NumPy ufuncs on arrays inside kernels: ``np.sin(x, out)`` and friends (numba-cuda's
"calling ufuncs in kernels"): the calling thread fills ``out`` element by element."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import float32, float64


def cpu(fn):
    return cuda.jit(target="cpu")(fn)


def unary_then_binary(x, y, r, s):
    i = cuda.grid(1)
    if i == 0:  # one thread does the whole arrays
        np.sqrt(x, r)
        np.hypot(r, y, out=s)
        np.minimum(s, 2.5, s)  # a scalar operand, out in place


def test_unary_binary_and_scalar_operands_on_2d_arrays():
    rng = np.random.default_rng(5)
    x, y = rng.random((3, 5)), rng.random((3, 5)) * 4
    r, s = np.full((3, 5), np.nan), np.full((3, 5), np.nan)
    cpu(unary_then_binary)[1, 4](x, y, r, s)
    np.testing.assert_allclose(r, np.sqrt(x), rtol=1e-15)
    np.testing.assert_allclose(s, np.minimum(np.hypot(np.sqrt(x), y), 2.5), rtol=1e-15)


def mixed_types(x, out, flags):
    np.log1p(x, out)  # float32 in, float64 out: computed in float32, stored widened
    np.isnan(out, flags)  # bool results into an int array


def test_dtypes_convert_as_the_scalar_ufunc_and_the_store_do():
    x = np.array([0.5, -0.25, 3.0, np.nan], np.float32)
    out, flags = np.zeros(4), np.full(4, -1, np.int32)
    cpu(mixed_types)[1, 1](x, out, flags)
    np.testing.assert_allclose(out, np.log1p(x), rtol=2e-7)  # C's log1pf vs NumPy's: an ulp
    assert (out[:3].astype(np.float32).astype(np.float64) == out[:3]).all()  # float32 values
    np.testing.assert_array_equal(flags, [0, 0, 0, 1])


def test_the_ufunc_returns_out():
    def kern(x, out, total):
        y = np.cos(x, out)
        total[0] = y[0] + y[1]

    x, out, total = np.array([0.0, np.pi]), np.zeros(2), np.zeros(1)
    cpu(kern)[1, 1](x, out, total)
    assert total[0] == pytest.approx(0.0, abs=1e-15)


def test_ptx_for_the_gpu():
    ptx = compile_kernel(
        unary_then_binary, (float64[:, ::1],) * 4, Options(arch=(9, 0)), stop_after="ptx"
    ).ptx
    assert "sqrt.rn.f64" in ptx


@pytest.mark.parametrize(
    "body,message",
    [
        ("np.sin(x)", "needs an 'out' array inside a kernel"),
        ("np.sin(x, 1.0)", "'out' must be an array"),
        ("np.sin(x, x2)", "arrays of out's 2 dimensions or scalars; an operand has 1"),
        ("np.hypot(x, out=x)", "takes 2 inputs and an 'out' array (1 inputs given)"),
        ("np.sin(x, out=x, where=x)", "takes only 'out' by keyword"),
    ],
)
def test_misuse_is_a_typing_error_at_the_line(body, message):
    ns = {"np": np, "cuda": cuda}
    exec(f"def kern(x, x2):\n    {body}\n", ns)
    with pytest.raises(TypingError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        compile_kernel(ns["kern"], (float32[::1], float32[:, ::1]), stop_after="typed")
    assert e.value.loc.line == 2
