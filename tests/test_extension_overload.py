"""``cujit.extending.overload``: a pure-Python function given device implementations
chosen by the argument types; kernels call it as a device function."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, types
from cujit.diagnostics import TypingError
from cujit.extending import overload


def clamp(x, lo, hi):
    raise AssertionError("the host version is never called by kernels")


@overload(clamp)
def _clamp_typing(x, lo, hi):
    if isinstance(x, types.Float):

        def float_impl(x, lo, hi):
            return min(max(x, lo), hi)

        return float_impl
    if isinstance(x, types.Integer):
        return lambda x, lo, hi: x if lo <= x <= hi else lo - 1
    return None


def _kernel(a, b, out, iout):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = clamp(a[i], -1.0, 1.5)
        iout[i] = clamp(b[i], 0, 5)


def test_implementation_per_argument_types_cpu():
    a = np.linspace(-3.0, 3.0, 9)
    b = np.arange(-4, 5)
    out = np.full(9, np.nan)
    iout = np.full(9, 77, np.int64)
    cuda.jit(_kernel, target="cpu")[1, 16](a, b, out, iout)
    np.testing.assert_array_equal(out, np.clip(a, -1.0, 1.5))
    np.testing.assert_array_equal(iout, np.where((b >= 0) & (b <= 5), b, -1))


def _complex_call(c, out):
    out[0] = clamp(c[0], 1j, 2j)


def test_no_implementation_for_the_types_is_a_typing_error():
    with pytest.raises(TypingError, match=r"no overload of clamp\(\) takes") as info:
        cuda.jit(_complex_call, target="cpu")[1, 1](
            np.ones(1, np.complex128), np.zeros(1, np.complex128)
        )
    assert "test_extension_overload.py" in str(info.value)


def test_overload_takes_a_callable():
    with pytest.raises(TypeError, match="callable"):
        overload(3)


@pytest.mark.gpu
def test_implementation_per_argument_types_gpu():
    a = np.linspace(-3.0, 3.0, 9)
    b = np.arange(-4, 5)
    out = np.full(9, np.nan)
    iout = np.full(9, 77, np.int64)
    cuda.jit(_kernel)[1, 16](a, b, out, iout)
    np.testing.assert_array_equal(out, np.clip(a, -1.0, 1.5))
    np.testing.assert_array_equal(iout, np.where((b >= 0) & (b <= 5), b, -1))
