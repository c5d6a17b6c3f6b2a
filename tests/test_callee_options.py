"""A device function's typed IR depends on the caller's options: a release kernel drops
its ``assert``, a debug kernel keeps it.  Compiling it for one must not hand the other
the wrong one, whichever comes first."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_callee_options import make_kernels

TARGETS = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=pytest.mark.gpu)]


def _run(kernel, target, x: float) -> float:
    from cujit import cuda

    out = np.full(1, -1234.5)  # poisoned: each launch must overwrite it
    if target == "cuda":
        d = cuda.to_device(out)
        kernel[1, 1](d, x)
        return float(d.copy_to_host()[0])
    kernel[1, 1](out, x)
    return float(out[0])


@pytest.mark.parametrize("target", TARGETS)
def test_debug_kernel_after_release_kernel_still_asserts(target):
    release, debug = make_kernels(target)
    assert _run(release, target, 3.0) == 6.0  # release: the assert compiles to nothing
    with pytest.raises(AssertionError, match="x is not negative"):
        _run(debug, target, 3.0)
    assert _run(debug, target, -3.0) == -6.0  # a passing assert changes nothing


@pytest.mark.parametrize("target", TARGETS)
def test_release_kernel_after_debug_kernel_drops_the_assert(target):
    release, debug = make_kernels(target)
    with pytest.raises(AssertionError, match="x is not negative"):
        _run(debug, target, 3.0)
    assert _run(release, target, 3.0) == 6.0


def test_callee_typed_ir_is_shared_only_between_equal_options():
    from cujit.options import Options
    from cujit.pipeline import compile_kernel
    from cujit.types import float64, typeof

    release, debug = make_kernels("cpu")
    types = (typeof(np.zeros(1)), float64)
    fns = [
        compile_kernel(k.py_func, types, opts, stop_after="passes").outputs["passes"]
        for k, opts in ((release, Options()), (release, Options()), (debug, Options(debug=True)))
    ]
    assert fns[0].callees[0] is fns[1].callees[0]  # the same options: compiled once
    assert fns[2].callees[0] is not fns[0].callees[0]

    def raises(fn) -> bool:
        return any(type(b.term).__name__ == "Raise" for b in fn.blocks)

    assert not raises(fns[0].callees[0])  # release: the assert is gone
    assert raises(fns[2].callees[0])  # debug: it is kept
