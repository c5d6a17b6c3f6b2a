"""A kernel for test_debug_boundscheck_split.py, outside the test module: pytest rewrites
the ``assert`` statements of test modules into code no kernel may hold."""

from cujit import cuda


def guarded_copy(x, out, n, d):
    i = cuda.grid(1)
    assert i < n, "too far"
    out[i] = x[i] // d
