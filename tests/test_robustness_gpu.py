"""Robustness on the CUDA target: the debug-mode division check and the stream,
keyword and read-only checks of the GPU launch path.  Compiling needs no GPU (the
checks' code must get through libNVVM); running is marked ``gpu``."""

from __future__ import annotations

import numpy as np
import pytest
from robust_helpers import marked_line

from cujit import cuda, float64, int64
from cujit.diagnostics import LaunchError


def divide(x, d):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = i // d + i % (d + 1)  # <-


def test_debug_division_check_compiles_for_the_gpu():
    kernel = cuda.jit(divide, debug=True)
    spec = kernel.compile((float64[::1], int64))
    sites = spec.result.debug_sites
    assert ZeroDivisionError in {s.exc for s in sites.values()}
    assert "cujit_debug_error" in spec.result.ptx
    release = cuda.jit(divide).compile((float64[::1], int64))
    assert "cujit_debug_error" not in release.result.ptx  # no check outside debug mode


def test_gpu_launch_configuration_checks_need_no_gpu():
    kernel = cuda.jit(divide)
    with pytest.raises(LaunchError, match="must be a stream"):
        kernel[1, 32, "fast"]
    with pytest.raises(LaunchError, match="keyword arguments"):
        kernel[1, 32](x=np.zeros(4), d=1)


@pytest.mark.gpu
def test_gpu_debug_division_by_zero_is_reported():
    kernel = cuda.jit(divide, debug=True)
    x = cuda.to_device(np.zeros(64))
    with pytest.raises(ZeroDivisionError) as info:
        kernel[2, 32](x, 0)
    # numba's debug-mode message: "In function 'divide', file F, line N, tid=... ctaid=...: ..."
    assert f"file {__file__}, line {marked_line(divide)}," in str(info.value)
    ok = np.full(64, -1.0)
    kernel[2, 32](ok, 3)  # the context survived: the next launch runs
    np.testing.assert_array_equal(ok, np.arange(64) // 3 + np.arange(64) % 4)


@pytest.mark.gpu
def test_gpu_refuses_read_only_host_arrays():
    kernel = cuda.jit(divide)
    ro = np.zeros(64)
    ro.flags.writeable = False
    with pytest.raises(LaunchError, match="read-only"):
        kernel[2, 32](ro, 1)
