"""Kernels for ``test_callee_options.py``, outside a test module: pytest rewrites the
``assert`` statements of test modules into code no kernel may hold."""

from __future__ import annotations

from cujit import cuda


def make_kernels(target: str):
    """A fresh device function holding an ``assert``, and a release and a debug kernel
    that both call it: ``(release, debug)``.  Fresh each time, so that nothing compiled
    for one test is reused by the next."""

    @cuda.jit(device=True)
    def must_be_negative(x):
        assert x < 0, "x is not negative"
        return x * 2

    def body(out, x):
        out[0] = must_be_negative(x)

    release = cuda.jit(target=target)(body)
    debug = cuda.jit(debug=True, target=target)(body)
    return release, debug
