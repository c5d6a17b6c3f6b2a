"""``cuda.selp(test, a, b)``: a select with no branch, on both targets."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda, float64, int64
from cujit.diagnostics import TypingError

SIG = (int64[:], int64, int64[:])


def _selects(a, b, c):
    i = cuda.grid(1)
    inner = cuda.selp(b % 2 == 0, c[i], 13)
    a[i] = cuda.selp(a[i] > 4, inner, 3)


def _model(a, b, c):
    inner = c if b % 2 == 0 else np.full_like(c, 13)
    return np.where(a > 4, inner, 3)


def test_selp_compiles_without_branches():
    ptx = cuda.jit(SIG, target="cuda")(_selects).inspect_asm(SIG)
    assert not re.search(r"\s+bra\s+", ptx)
    assert "selp.b64" in ptx


@pytest.mark.parametrize("b", [6, 7])
def test_selp_values_on_cpu(b):
    a = np.arange(-3, 29, dtype=np.int64)
    c = np.arange(100, 132, dtype=np.int64)
    want = _model(a, b, c)
    cuda.jit(SIG, target="cpu")(_selects)[a.size, 1](a, b, c)
    np.testing.assert_array_equal(a, want)


def test_selp_values_meet_in_their_common_type():
    def k(out, x):
        out[0] = cuda.selp(x[0] > 0, x[0], 2)  # float64 and int64: float64
        out[1] = cuda.selp(x[0] < 0, x[0], 2)

    out = np.full(2, -9.0)
    cuda.jit((float64[:], float64[:]), target="cpu")(k)[1, 1](out, np.array([0.5]))
    assert list(out) == [0.5, 2.0]


def test_selp_takes_three_arguments():
    def k(out):
        out[0] = cuda.selp(True, 1)

    with pytest.raises(TypingError):
        cuda.jit((int64[:],), target="cpu")(k)
