"""``float(x)`` as numba types it: a float keeps its type, ints and bools become float64."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import float16, float32, int32
from cujit.diagnostics import TypingError


def _native(x):
    return float(x)


@pytest.mark.parametrize(
    "arg, store", [(float32, r"st\.f32"), (float16, r"st\.b16"), (int32, r"st\.f64")]
)
def test_float_keeps_a_float_type(arg, store):
    ptx, resty = cuda.compile_ptx(_native, (arg,), device=True)
    assert re.search(store, ptx)
    assert resty == (arg if arg is not int32 else cuda.float64)


def _widen(out, x, n, flag):
    out[0] = float(x[0]) + 1e-9  # float32 + a float64 literal: float64
    out[1] = float(n[0]) / 4
    out[2] = float(flag[0])


def test_float_values_on_cpu():
    x = np.array([1.5], np.float32)
    n = np.array([7], np.int64)
    flag = np.array([True])
    out = np.full(3, -1.0)
    cuda.jit(target="cpu")(_widen)[1, 1](out, x, n, flag)
    assert list(out) == [1.5 + 1e-9, 1.75, 1.0]


def test_float_of_float32_rounds_in_float32():
    def k(out, x):
        out[0] = float(x[0]) * float(x[0])  # a float32 product

    x = np.array([1.1], np.float32)
    out = np.zeros(1, np.float64)
    cuda.jit(target="cpu")(k)[1, 1](out, x)
    assert out[0] == np.float64(x[0] * x[0])  # the float32 product, widened on store


def test_float_of_complex_is_refused():
    def k(out, z):
        out[0] = float(z[0])

    with pytest.raises(TypingError, match="complex"):
        cuda.jit(target="cpu")(k)[1, 1](np.zeros(1), np.zeros(1, np.complex64))
