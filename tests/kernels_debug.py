"""Kernels for ``test_debug_mode.py``, in a module of their own: pytest rewrites the
``assert`` statements of test modules (into code no kernel may hold), not of this one.

Each has one failing thread for the launches the tests make.
"""

from __future__ import annotations

from cujit import cuda, float32


def write_all(x):
    i = cuda.grid(1)
    x[i] = 1.0


def read_all(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * 2.0


def write_2d(x):
    i, j = cuda.grid(2)
    x[i, j] = 1.0


def negative_index(x, k):
    if cuda.grid(1) == 0:
        x[k] = 5.0


def atomic_count(counts, keys):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.add(counts, keys[i], 1)


def checks_input(x):
    i = cuda.grid(1)
    assert x[i] >= 0, "negative input"
    x[i] = x[i] + 1


def bare_assert(x):
    i = cuda.grid(1)
    assert x[i] >= 0
    x[i] = x[i] + 1


def raises_value_error(x):
    i = cuda.grid(1)
    if x[i] == 3:
        raise ValueError("three is not allowed")
    x[i] = 7


class KernelSaidNo(Exception):
    pass


def raises_custom(x):
    if x[cuda.grid(1)] < 0:
        raise KernelSaidNo("no")


@cuda.jit(device=True)
def load_at(a, i):
    return a[i]


def calls_device(x, out):
    i = cuda.grid(1)
    out[0] = load_at(x, i + 1)
    out[1] = 99.0  # never reached by the failing thread: it left after the call


def with_barrier(x):
    buf = cuda.shared.array(4, float32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    cuda.syncthreads()
    x[t] = buf[3 - t]


def assert_first_nonnegative(x):
    """A plain function (not jitted) for the pass tests: one assert, one store."""
    i = 0
    assert x[i] >= 0.0, "negative input"
    x[i] = 1.0
