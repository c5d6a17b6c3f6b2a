"""Nested functions and lambdas in kernels and device functions (constants frozen into
their closure, run-time values captured as hidden parameters), ``*args`` device
functions and ``f(*args)``: checked against the same Python run on the host."""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import UnsupportedError


@cuda.jit(device=True)
def apply(func, *args):
    return func(*args)


@cuda.jit(device=True)
def count_args(*args):
    return len(args) * 100 + args[-1]


def _closures(out, x, a):
    scale = 2.5  # a constant: frozen into the closures
    shift = x + 1  # a run-time value: captured as a parameter

    def affine(v, bias=10):
        return v * scale + shift + bias

    sq = lambda v: v * v  # noqa: E731 -- the lambda is what is tested

    def reads_array(i):
        return a[i] + sq(i)

    for i in range(a.size):
        out[i] = affine(reads_array(i)) + apply(affine, i, 0)
    out[a.size] = apply(sq, 7) + count_args(1, 2, 3)


def test_closures_capture_constants_and_runtime_values():
    # ``apply(affine, ...)`` passes on a run-time capture: cujit's option (numba refuses it)
    kernel = cuda.jit(target="cpu", escaping_captures=True)(_closures)
    a = np.array([1.5, -2.0, 4.0])
    out = np.full(4, np.nan)
    kernel[1, 1](out, 3, a)
    ref = np.full(4, np.nan)
    scale, shift = 2.5, 4
    for i in range(3):
        ref[i] = ((a[i] + i * i) * scale + shift + 10) + (i * scale + shift + 0)
    ref[3] = 49 + 303
    np.testing.assert_array_equal(out, ref)


def _factory(k):
    def kernel(out, x):
        def inner(y):
            return x * y + k  # x: run time; k: the factory's constant

        out[0] = apply(inner, 5)
        out[1] = inner(2)

    return kernel


def test_closure_escapes_into_a_device_function():
    for k in (1, 7):
        kernel = cuda.jit(target="cpu", escaping_captures=True)(_factory(k))
        out = np.zeros(2, dtype=np.int64)
        kernel[1, 1](out, 3)
        assert list(out) == [3 * 5 + k, 3 * 2 + k]


def test_star_call_of_a_kernel_called_as_a_device_function():
    @cuda.jit(target="cpu")
    def consumer(func, *args):
        x, y = args
        return func(x, y) + func(*args)

    @cuda.jit(target="cpu")
    def kernel(out, a, b):
        out[0] = consumer(lambda p, q: p - q, a, b)

    out = np.zeros(1)
    kernel[1, 1](out, 10.0, 4.0)
    assert out[0] == 12.0


def test_nonlocal_and_comprehensions_stay_refused():
    @cuda.jit(target="cpu")
    def writes_nonlocal(out):
        total = 0

        def add(v):
            nonlocal total
            total += v

        add(1)
        out[0] = total

    with pytest.raises(UnsupportedError, match="nonlocal"):
        writes_nonlocal[1, 1](np.zeros(1))

    @cuda.jit(target="cpu")
    def generator(out):
        out[0] = sum(v for v in range(3))

    with pytest.raises(UnsupportedError, match="generator"):
        generator[1, 1](np.zeros(1))
