"""Self-recursive device functions (declared or inferred return type), checked
against the same functions run by Python; mutual and runaway recursion are located
errors."""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError, UnsupportedError


def _fib(n):
    if n < 2:
        return n
    return _fib(n - 1) + _fib(n - 2)


@cuda.jit("int64(int64)", device=True)
def fib_declared(n):
    if n < 2:
        return n
    return fib_declared(n - 1) + fib_declared(n - 2)


@cuda.jit(device=True)
def fib_inferred(n):
    if n < 2:
        return n
    return fib_inferred(n - 1) + fib_inferred(n - 2)


@cuda.jit(device=True)
def power_sum(x, n, acc):
    # the float accumulator: the return type found from the base case (float64)
    if n == 0:
        return acc
    return power_sum(x, n - 1, acc + x**n)


@cuda.jit(target="cpu")
def _kernel(out, ns, x):
    i = cuda.grid(1)
    if i < ns.size:
        out[i, 0] = fib_declared(ns[i])
        out[i, 1] = fib_inferred(ns[i])
        out[i, 2] = power_sum(x, ns[i], 0.5)


def test_self_recursion_matches_python():
    ns = np.array([0, 1, 2, 7, 12, 15], dtype=np.int64)
    x = 1.25
    out = np.full((ns.size, 3), np.nan)
    _kernel[1, 32](out, ns, x)
    ref = np.array([[_fib(n), _fib(n), 0.5 + sum(x**k for k in range(1, n + 1))] for n in ns])
    np.testing.assert_allclose(out, ref, rtol=1e-14)


def test_runaway_recursion_is_a_typing_error():
    @cuda.jit(device=True)
    def forever(x):
        return forever(x)

    @cuda.jit(target="cpu")
    def kernel(out):
        out[0] = forever(1)

    with pytest.raises(TypingError, match="runaway recursion"):
        kernel[1, 1](np.zeros(1))


@cuda.jit(device=True)
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@cuda.jit(device=True)
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def test_mutual_recursion_is_refused_at_the_call():
    @cuda.jit(target="cpu")
    def kernel(out, n):
        out[0] = is_even(n)

    with pytest.raises(UnsupportedError, match="mutually recursive.*is_even -> is_odd -> is_even"):
        kernel[1, 1](np.zeros(1), 4)


def test_recursion_with_other_argument_types_is_refused():
    @cuda.jit(device=True)
    def halves(x):
        if x < 1:
            return x
        return halves(x / 2)  # int64 in, float64 in the recursive call

    @cuda.jit(target="cpu")
    def kernel(out, n):
        out[0] = halves(n)

    with pytest.raises(UnsupportedError, match="calls itself with argument types"):
        kernel[1, 1](np.zeros(1), 8)
