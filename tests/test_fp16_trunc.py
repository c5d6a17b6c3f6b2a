"""``math.trunc`` of a float16 rounds toward zero (a float16, as numba-cuda's htrunc),
although float16 -> int casts round to nearest; checked against np.trunc."""

import math

import numpy as np
import pytest

from cujit import cuda


def _trunc(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = math.trunc(a[i])


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_trunc_of_float16_rounds_toward_zero(target):
    a = np.concatenate([np.linspace(-3, 3, 61), [0.5, -0.5, 1.5, -2.5, 2.75]]).astype(np.float16)
    out = np.full(a.size, np.float16(99.0))
    kernel = cuda.jit("void(float16[::1], float16[::1])", target=target)(_trunc)
    kernel[1, 128](a, out)
    np.testing.assert_array_equal(out, np.trunc(a))
