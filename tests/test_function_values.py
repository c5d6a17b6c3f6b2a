"""Functions and dtype classes as values: passed to device functions, called there.

A function argument (a device function, ``cuda.atomic.add``, ``operator.add``,
``math.sin``, a dtype class) is a compile-time constant: the callee is compiled
for it and the call through it resolves statically.  Kernels and ``numba.njit``
functions called from kernels compile as device functions (numba-cuda's rule).
"""

import math
import operator

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError


@cuda.jit(device=True)
def apply(f, x):
    return f(x)


@cuda.jit(device=True)
def combine(op, x, y):
    return op(x, y)


@cuda.jit(device=True)
def convert(dt, x):
    return dt(x)


@cuda.jit(device=True)
def update(op, a, i, v):
    op(a, i, v)


@cuda.jit(device=True)
def square(x):
    return x * x


@cuda.jit(device=True)
def shared_sum(n, dtype, x):
    sm = cuda.shared.array(n, dtype)  # n and dtype: the call's constants
    sm[0] = 0
    cuda.syncthreads()
    cuda.atomic.add(sm, 0, dtype(x))
    cuda.syncthreads()
    return sm[0]


@cuda.jit
def triple(x):  # a kernel, called from a kernel: a device function
    return x * 3


def run(kernel, *arrays, n=8):
    kernel[1, n](*arrays)


def test_functions_as_arguments():
    @cuda.jit(target="cpu")
    def k(out, a):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = apply(math.sin, a[i]) + apply(square, a[i]) + combine(operator.sub, a[i], 0.5)

    a = np.linspace(0.25, 3.0, 8)
    out = np.full(8, np.nan)
    run(k, out, a)
    np.testing.assert_allclose(out, np.sin(a) + a * a + (a - 0.5), rtol=1e-12)


def test_dtype_class_as_argument():
    @cuda.jit(target="cpu")
    def k(out, a):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = convert(np.uint32, a[i] * 10.0) + convert(np.int8, a[i])

    a = np.linspace(0.3, 7.9, 8)
    out = np.full(8, np.nan)
    run(k, out, a)
    np.testing.assert_array_equal(out, (a * 10).astype(np.uint32) + a.astype(np.int8))


def test_atomic_as_argument():
    @cuda.jit(target="cpu")
    def k(acc, a):
        i = cuda.grid(1)
        if i < a.size:
            update(cuda.atomic.add, acc, 0, a[i])
            update(cuda.atomic.max, acc, 1, a[i])

    a = np.array([3.0, -1.0, 7.5, 2.0, 0.5, 6.0, -4.0, 1.0])
    acc = np.array([0.0, -100.0])
    run(k, acc, a)
    np.testing.assert_allclose(acc, [a.sum(), a.max()])


def test_constant_arguments_retried_as_literals():
    @cuda.jit(target="cpu")
    def k(out, a):
        i = cuda.threadIdx.x
        out[i] = shared_sum(8, np.float64, a[i])

    a = np.arange(1.0, 9.0)
    out = np.full(8, np.nan)
    run(k, out, a)
    np.testing.assert_allclose(out, np.full(8, a.sum()))


def test_constant_branch_pruned():
    @cuda.jit(device=True)
    def pick(flag, x):
        if flag:
            return x + 1.0
        return x * 2.0

    @cuda.jit(target="cpu")
    def k(out, a):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = pick(True, a[i]) + pick(None, a[i])

    a = np.linspace(1.0, 2.0, 8)
    out = np.full(8, np.nan)
    run(k, out, a)
    np.testing.assert_allclose(out, (a + 1.0) + a * 2.0)


def test_kernel_and_njit_called_from_kernel():
    numba = pytest.importorskip("numba")

    @numba.njit
    def plus(x):
        return x + 1.5

    @cuda.jit(target="cpu")
    def k(out, a):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = plus(a[i]) + triple(a[i])

    a = np.linspace(-2.0, 2.0, 8)
    out = np.full(8, np.nan)
    run(k, out, a)
    np.testing.assert_allclose(out, a + 1.5 + a * 3)


def test_operator_functions():
    @cuda.jit(target="cpu")
    def k(out, a, b):
        i = cuda.grid(1)
        if i < a.size:
            out[0, i] = combine(operator.add, a[i], b[i])
            out[1, i] = combine(operator.floordiv, a[i], b[i])
            out[2, i] = combine(operator.mod, a[i], b[i])
            out[3, i] = combine(operator.lt, a[i], b[i])
            out[4, i] = apply(operator.neg, a[i])

    a = np.array([7, -7, 9, 3, 0, 12, -5, 8], dtype=np.int64)
    b = np.array([2, 3, -4, 5, 1, 5, 2, 3], dtype=np.int64)
    out = np.full((5, 8), -99, dtype=np.int64)
    run(k, out, a, b)
    np.testing.assert_array_equal(out, [a + b, a // b, a % b, a < b, -a])


def test_calling_a_non_callable_value_names_the_line():
    @cuda.jit(target="cpu")
    def k(out):
        out[0] = apply(2.0, 1.0)

    with pytest.raises(TypingError) as info:
        k[1, 1](np.zeros(1))
    assert "not callable" in str(info.value)
    assert "test_function_values.py" in str(info.value)


@pytest.mark.gpu
def test_function_values_gpu():
    @cuda.jit
    def k(out, acc, a):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = apply(math.sin, a[i]) + convert(np.float32, a[i]) + triple(a[i])
            update(cuda.atomic.add, acc, 0, a[i])

    a = np.linspace(0.25, 3.0, 64)
    out = np.full(64, np.nan)
    acc = np.zeros(1)
    k[1, 64](out, acc, a)
    np.testing.assert_allclose(out, np.sin(a) + a.astype(np.float32) + a * 3, rtol=1e-6)
    np.testing.assert_allclose(acc, [a.sum()])
