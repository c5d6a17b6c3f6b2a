"""Device functions that return a number on some paths and nothing on others give an
optional result: ``is None`` tests it, arithmetic and stores use the number.  Checked
against the same Python on the CPU target."""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError


def _maybe_half(x):
    if x % 2 == 0:
        return x // 2
    if x < 0:
        return None
    return


maybe_half = cuda.jit(device=True)(_maybe_half)


@cuda.jit(target="cpu")
def _use(out, xs):
    for i in range(xs.size):
        r = maybe_half(xs[i])
        if r is None:
            out[i, 0] = -1
        else:
            out[i, 0] = r + 100
        out[i, 1] = maybe_half(xs[i]) is not None


def test_optional_results_against_python():
    xs = np.array([8, 7, -3, -6, 0, 11], dtype=np.int64)
    out = np.full((xs.size, 2), -999, dtype=np.int64)
    _use[1, 1](out, xs)
    ref = []
    for x in xs:
        r = _maybe_half(int(x))
        ref.append([-1 if r is None else r + 100, r is not None])
    np.testing.assert_array_equal(out, ref)


def test_an_array_on_one_path_only_stays_an_error():
    @cuda.jit(device=True)
    def first_row(a, k):
        if k > 0:
            return a[0]
        return

    @cuda.jit(target="cpu")
    def kernel(out, a, k):
        r = first_row(a, k)
        out[0] = r[0]

    with pytest.raises(TypingError, match="returns a value here and nothing"):
        kernel[1, 1](np.zeros(1), np.ones((2, 2)), 1)


@cuda.jit(target="cpu")
def _merge(out, xs):
    for i in range(xs.size):
        r = maybe_half(xs[i])
        out[i] = -1 if r is None else r  # a number and an optional merge into an optional
        if xs[i] > 100:
            r = None
        out[xs.size + i] = r is None


def test_optional_merges_with_numbers_and_none():
    xs = np.array([8, 7, 300, -4], dtype=np.int64)
    out = np.full(2 * xs.size, -999, dtype=np.int64)
    _merge[1, 1](out, xs)
    halves = [_maybe_half(int(x)) for x in xs]
    ref = [-1 if r is None else r for r in halves]
    ref += [r is None or x > 100 for r, x in zip(halves, xs, strict=True)]
    np.testing.assert_array_equal(out, ref)
