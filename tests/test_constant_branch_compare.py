"""A comparison of two compile-time integers or bools (a global flag, a closure's
constant, ``flag is True``) is decided when the kernel compiles, so a branch on it
types only the side it takes: a variable may hold a tuple on the side not taken."""

import numpy as np
import pytest

from cujit import cuda

TAKE_FIRST = True
LEVEL = 3


def _make(flag):
    @cuda.jit(device=True)
    def first_or_self(b):
        if flag is True:
            b = b[0]
        return b

    return first_or_self


_first = _make(True)
_keep = _make(False)


@cuda.jit(device=True)
def _by_level(b):
    if LEVEL >= 2 and TAKE_FIRST == 1:
        b = b[1]
    return b


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_a_constant_condition_types_one_side(target):
    @cuda.jit(target=target)
    def kernel(out, pair, x):
        out[0] = _first(pair)
        out[1] = _keep(x)
        out[2] = _by_level(pair)

    out = np.full(3, -1, dtype=np.int64)
    kernel[1, 1](out, (11, 22), 7)
    np.testing.assert_array_equal(out, [11, 7, 22])


def test_a_run_time_comparison_still_needs_one_type():
    from cujit.diagnostics import TypingError

    @cuda.jit(device=True)
    def pick(b, n):
        if n > 0:
            b = b[0]
        return b

    @cuda.jit(target="cpu")
    def kernel(out, pair, n):
        out[0] = pick(pair, n)

    with pytest.raises(TypingError, match="on one path"):
        kernel[1, 1](np.zeros(1, np.int64), (1, 2), 1)
