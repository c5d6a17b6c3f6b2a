"""A conformance suite of numba.cuda programs as numba's users write them: the examples
of numba-cuda's documentation and common idioms, each re-typed with only the import
changed (``from cujit import cuda``), run on the CPU target everywhere and on the GPU
where there is one (marked ``gpu``), and checked against NumPy or a plain-Python model.

Each example is written the way its source writes it: a bare ``@cuda.jit`` and the
host API of ``cuda`` (``to_device``, ``device_array_like``, ``copy_to_host``...).  The
``target`` fixture picks the target through ``CUJIT_TARGET`` and makes ``cujit.cuda``
resolve its host names again (it keeps the first ones it resolves), so the same code
runs on either target.  Outputs start filled with a poison value; floats compare by
relative norm (float32 below 1e-5, float64 below 1e-12), integers exactly.

Not covered, as cujit does not provide them (docs/numba-api.md): ``cuda.reduce`` (the
Monte Carlo example sums on the host instead), ``cuda.vectorize``,
``cuda.guvectorize``, ``cuda.declare_device`` (the FFI examples), CuPy arrays (the
documentation's examples use them; NumPy and cujit device arrays stand in here).

This module holds what the suite's files share: the ``target`` fixture (each file
imports ``target_fixture``), poisoned outputs and the comparison.
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import _CPU_NAMES

# numba.cuda's host names that cujit.cuda resolves per target (its ``_CPU_NAMES``).
_TARGET_NAMES = tuple(_CPU_NAMES)  # the names whose home depends on CUJIT_TARGET


@pytest.fixture(name="target", params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def target_fixture(request, monkeypatch):
    """``target``: the test runs once per target (CUDA where there is a GPU)."""
    monkeypatch.setenv("CUJIT_TARGET", request.param)
    namespace = vars(cuda)
    before = {name: namespace.pop(name) for name in _TARGET_NAMES if name in namespace}
    yield request.param
    # Forget what this target resolved, so later tests (in any file) resolve afresh.
    for name in _TARGET_NAMES:
        namespace.pop(name, None)
    namespace.update(before)


# -- checking ----------------------------------------------------------------------


def poisoned(shape, dtype):
    """A host array filled with a value no kernel here writes."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.full(shape, np.nan, dtype)
    if dtype.kind == "b":
        return np.ones(shape, dtype)
    return np.full(shape, np.iinfo(dtype).max, dtype)


def assert_matches(got, expected):
    got = np.asarray(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if got.dtype.kind in "fc":
        assert np.all(np.isfinite(got)), "poison left in the output"
        tol = 1e-5 if got.dtype in (np.float32, np.complex64) else 1e-12
        scale = np.linalg.norm(expected.ravel())
        err = np.linalg.norm((got - expected).ravel()) / (scale if scale else 1.0)
        assert err < tol, f"relative error {err:.3g} (tolerance {tol:g})"
    else:
        np.testing.assert_array_equal(got, expected)


def rng():
    return np.random.default_rng(20240611)
