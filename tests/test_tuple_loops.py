"""Tuple displays CPython builds as lists (more than 30 items, ``(a, *s)``), ``tuple()``,
and ``for`` loops over tuples of arrays or vector types (unrolled), against Python."""

import numpy as np

from cujit import cuda

N = 36  # CPython builds a display of more than 30 items as a list, then a tuple
_NAMES = ", ".join(f"a{i}" for i in range(N))
_SOURCE = f"""
def long_display(out, x):
    {_NAMES} = {", ".join(f"x[{i}] * {i}" for i in range(N))}
    t = ({_NAMES})
    j = 0
    for v in t:
        out[j] = v
        j += 1
    s = (x[1], 2.5)
    u = (x[0], *s, *t, 7.0)
    out[N] = u[1] + u[2] * 10 + u[len(u) - 1] * 100 + len(u) * 1000
"""


def test_long_tuple_display_and_star_items():
    namespace = {"N": N}
    exec(_SOURCE, namespace)
    pyfunc = namespace["long_display"]
    x = np.linspace(1.0, 2.0, N)
    out = np.full(N + 1, np.nan)
    cuda.jit(target="cpu")(pyfunc)[1, 1](out, x)
    ref = np.full(N + 1, np.nan)
    pyfunc(ref, x)
    np.testing.assert_array_equal(out, ref)


@cuda.jit(target="cpu")
def _over_arrays(out, a, b, c):
    j = 0
    for arr in tuple((a, b, c)):  # three array types: one body copy each
        out[j] = arr.sum() + arr.ndim * 100
        j += 1
    p = cuda.float4(1.0, 2.0, 3.0, 4.0)
    q = cuda.float4(p.w, p.z, 8.0, 9.0)
    for v in (p, q):
        out[j] = v.x * 10 + v.w
        j += 1


def test_loops_over_tuples_of_arrays_and_vectors():
    a = np.arange(4.0)
    b = np.ones((2, 3), dtype=np.int32)
    c = np.array([0.5, 0.25], dtype=np.float32)
    out = np.full(5, np.nan)
    _over_arrays[1, 1](out, a, b, c)
    ref = [a.sum() + 100, b.sum() + 200, c.sum() + 100, 1.0 * 10 + 4.0, 4.0 * 10 + 9.0]
    np.testing.assert_array_equal(out, ref)
