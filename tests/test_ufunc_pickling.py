"""A GPU ufunc (``cuda.vectorize``) pickles as its function and decorator arguments; the
receiver builds its own loops, and a rebuilt ufunc pickles again."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cujit import cuda

pytest.importorskip("cloudpickle")  # a local function's code travels by value


def _local_ufunc():
    @cuda.vectorize(["int64(int64)", "float64(float64)"], target="cpu")
    def affine(x):
        return x * 3 - 1

    return affine


def test_local_ufunc_round_trips_twice():
    uf = _local_ufunc()
    ints = np.arange(-4, 6, dtype=np.int64)
    floats = np.linspace(-2.0, 2.0, 7)
    once = pickle.loads(pickle.dumps(uf))
    twice = pickle.loads(pickle.dumps(once))
    for rebuilt in (once, twice):
        assert rebuilt is not uf and rebuilt.types == uf.types
        np.testing.assert_array_equal(rebuilt(ints), ints * 3 - 1)
        np.testing.assert_allclose(rebuilt(floats), floats * 3 - 1)


def test_rebuilt_ufunc_keeps_its_identity_and_target():
    @cuda.vectorize(["float64(float64, float64)"], target="cpu", identity=0)
    def add(a, b):
        return a + b

    rebuilt = pickle.loads(pickle.dumps(add))
    assert rebuilt.identity == 0 and rebuilt.target == add.target
    x = np.linspace(0.5, 4.0, 8)
    np.testing.assert_allclose(rebuilt(x, x[::-1]), x + x[::-1])
