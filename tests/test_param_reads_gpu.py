"""The kernels of ``test_param_reads.py``, run on the GPU: each launches with only the
parameters its record passes, and its results must match NumPy's (a parameter
wrongly left out would read garbage).  Marked ``gpu``: skipped without one."""

from __future__ import annotations

import numpy as np
import pytest
from test_param_reads import (
    atomics,
    column_major,
    loop_index,
    neg_index,
    saxpy,
    shape_only,
    strided_2d,
    through_device_function,
)

from cujit import cuda

pytestmark = pytest.mark.gpu


def run(fn, grid, block, *args):
    """Launch ``fn`` on device copies of ``args``; return the arrays copied back and
    the kernel's record (whose mask must drop something for the test to mean much)."""
    kernel = cuda.jit(fn)
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]  # or views
    kernel[grid, block](*dev)
    (spec,) = kernel.overloads.values()
    return [d.copy_to_host() if hasattr(d, "copy_to_host") else d for d in dev], spec.record


def test_saxpy():
    rng = np.random.default_rng(1)
    x, y = rng.random(1000, np.float32), rng.random(1000, np.float32)
    out = np.full(1000, np.nan, np.float32)
    (_, _, _, got), record = run(saxpy, 4, 256, np.float32(2.5), x, y, out)
    assert not all(record.passed)
    np.testing.assert_allclose(got, 2.5 * x + y, rtol=1e-6)


def test_negative_index_wraps():
    x = np.arange(1.0, 65.0)
    out = np.full(64, np.nan)
    (_, got), record = run(neg_index, 1, 64, x, out)
    assert record.passed == (True, True, True, False)
    np.testing.assert_array_equal(got, np.roll(x, 1))  # out[i] = x[i - 1], x[-1] at 0


def test_strided_and_contiguous_2d():
    base = np.arange(1.0, 1 + 40 * 30).reshape(40, 30)
    a = base[::2, ::3]
    # A strided view of a device array (to_device itself copies into a contiguous one):
    # layout 'A', so its strides are passed and its extents not.
    view = cuda.to_device(base)[::2, ::3]
    out = np.full((20, 10), np.nan)
    (got_a, got, _), record = run(strided_2d, (3, 2), (8, 8), view, out, np.int32(7))
    assert record.passed[1:3] == (False, False)
    np.testing.assert_array_equal(got, a)
    np.testing.assert_array_equal(got_a, a)


def test_shape_only_and_loop_and_column_major():
    x = np.arange(5.0)
    out = np.full(32, np.nan)
    (_, got), _ = run(shape_only, 1, 32, x, out)
    np.testing.assert_array_equal(got, np.full(32, 5.0))
    y = np.full(16, -1.0)
    (got,), _ = run(loop_index, 1, 1, y)
    want = np.full(16, -1.0)
    want[0:16:4] = np.arange(0, 16, 4)
    np.testing.assert_array_equal(got, want)
    f = np.asfortranarray(np.arange(1.0, 1 + 8 * 4).reshape(8, 4))
    out = np.full(8, np.nan)
    (_, got), _ = run(column_major, (1, 1), (8, 1), f, out)
    np.testing.assert_array_equal(got, f[:, 0])


def test_atomics_and_device_function():
    hist = np.zeros(64, np.int32)
    (got, _), _ = run(atomics, 1, 64, hist, np.int32(3))
    want = np.full(64, 3, np.int32)
    want[-1] += 3 * 64
    np.testing.assert_array_equal(got, want)
    x = np.arange(7.0, 17.0)
    out = np.full(32, np.nan)
    (_, got), _ = run(through_device_function, 1, 32, x, out)
    np.testing.assert_array_equal(got, np.full(32, 7.0))
