"""Debug mode and bounds checks are separate options, as in numba: ``debug=True`` checks
``assert``, ``raise`` and division by zero, and checks array bounds only where
``boundscheck=True`` (or ``CUJIT_BOUNDSCHECK=1``) asks; the CPU target keeps its own
default of checking bounds."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_boundscheck_split import guarded_copy

from cujit import cuda
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import int64

BOUNDS = "index {index} is out of bounds for axis {axis} with size {size}"


TYPES = (int64[::1], int64[::1], int64, int64)


def sites(options: Options) -> set[tuple[str, str]]:
    last = "native" if options.target == "cpu" else "llvm"  # where each makes its record
    result = compile_kernel(guarded_copy, TYPES, options, stop_after=last)
    return {(s.exc.__name__, s.message) for s in result.record.debug_sites.values()}


def test_debug_alone_checks_no_bounds_on_the_gpu():
    found = sites(Options(debug=True, opt=0))
    assert ("AssertionError", "too far") in found
    assert ("ZeroDivisionError", "integer division or modulo by zero") in found
    assert ("IndexError", BOUNDS) not in found


def test_boundscheck_adds_bounds_to_debug_mode():
    found = sites(Options(debug=True, opt=0, boundscheck=True))
    assert {("AssertionError", "too far"), ("IndexError", BOUNDS)} <= found


def test_boundscheck_alone_checks_bounds_only():
    assert sites(Options(boundscheck=True)) == {("IndexError", BOUNDS)}


def test_the_environment_variable_reaches_a_debug_kernel(monkeypatch):
    monkeypatch.setenv("CUJIT_BOUNDSCHECK", "1")
    kernel = cuda.jit(debug=True, opt=False)(guarded_copy)
    kernel.compile("void(int64[::1], int64[::1], int64, int64)")
    spec = next(iter(kernel.overloads.values()))
    found = {s.exc.__name__ for s in spec.result.debug_sites.values()}
    assert found == {"AssertionError", "ZeroDivisionError", "IndexError"}


def test_the_cpu_target_still_checks_bounds_in_debug_mode():
    found = sites(Options(debug=True, opt=0, target="cpu"))
    assert ("IndexError", BOUNDS) in found and ("AssertionError", "too far") in found
    off = sites(Options(debug=True, opt=0, target="cpu", boundscheck=False))
    assert ("IndexError", BOUNDS) not in off and ("AssertionError", "too far") in off


def test_a_debug_kernel_on_the_cpu_target_reports_an_index_past_the_end():
    kernel = cuda.jit(guarded_copy, target="cpu", debug=True, opt=False)
    x = np.arange(1, 9, dtype=np.int64)
    out = np.full(7, -1, np.int64)
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 7"):
        kernel[1, 8](x, out, 9, 2)  # thread 7 passes the assert and writes past out's end
    ok = np.full(8, -1, np.int64)
    kernel[1, 8](x, ok, 8, 2)
    np.testing.assert_array_equal(ok, x // 2)


@pytest.mark.gpu
def test_on_the_gpu_a_debug_kernel_with_boundscheck_reports_the_index():
    kernel = cuda.jit(guarded_copy, debug=True, opt=False, boundscheck=True)
    x = np.arange(1, 9, dtype=np.int64)
    out = np.full(7, -1, np.int64)
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 7"):
        kernel[1, 8](x, out, 9, 2)
    ok = np.full(8, -1, np.int64)
    kernel[1, 8](x, ok, 8, 2)
    np.testing.assert_array_equal(ok, x // 2)


@pytest.mark.gpu
def test_on_the_gpu_debug_mode_alone_still_reports_an_assert():
    kernel = cuda.jit(guarded_copy, debug=True, opt=False)
    x = np.arange(1, 9, dtype=np.int64)
    out = np.full(8, -1, np.int64)
    with pytest.raises(AssertionError, match="too far"):
        kernel[1, 8](x, out, 7, 2)  # thread 7 fails the assert (every index is in bounds)
