"""A kernel that returns a value is refused with a TypeError, as numba refuses it, by
``cuda.jit`` and by ``cuda.compile_ptx`` alike, naming the user's return line."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, uint32
from cujit.diagnostics import CompileError


def summed(x, y):
    return x[0] + y[0]


def test_compile_ptx_of_a_returning_kernel_is_a_type_error():
    with pytest.raises(TypeError, match="must have void return type") as info:
        cuda.compile_ptx(summed, (uint32[::1], uint32[::1]))
    assert isinstance(info.value, CompileError)
    assert f"{__file__}:14:" in str(info.value)  # the return line


def test_launching_a_returning_kernel_is_a_type_error():
    k = cuda.jit(summed, target="cpu")
    a = np.arange(1, 3, dtype=np.uint32)
    with pytest.raises(TypeError, match="must have void return type"):
        k[1, 1](a, a)
