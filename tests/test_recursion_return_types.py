"""Self-recursive device functions by what they return: nothing (a recursion that only
stores), and a type that grows with each call (``(n, f(n - 1))`` after ``return
None``), which numba refuses with "Return type of recursive function does not
converge"."""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError


@cuda.jit(device=True)
def _fill(a, n):
    if n <= 0:
        return
    a[n - 1] = n * n
    _fill(a, n - 1)


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_a_recursion_that_returns_nothing(target):
    @cuda.jit(target=target)
    def kernel(a, n):
        _fill(a, n)

    a = np.full(7, -1.0)
    kernel[1, 1](a, 5)
    np.testing.assert_array_equal(a, [1.0, 4.0, 9.0, 16.0, 25.0, -1.0, -1.0])


def test_a_growing_return_type_does_not_converge():
    @cuda.jit(device=True)
    def nest(n):
        if n <= 0:
            return None
        return (n, nest(n - 1))

    def kernel(out):
        nest(3)

    with pytest.raises(TypingError, match="Return type of recursive function does not converge"):
        cuda.compile_ptx(kernel, "void(int64[:])")
