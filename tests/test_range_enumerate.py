"""``enumerate(range(...))`` and ``zip()`` of ranges in kernels (steps of either sign,
empty ranges), against Python's own loops."""

import numpy as np
import pytest

from cujit import cuda


def _loops(out, x, y, step):
    acc = 0
    for i, j in enumerate(range(x, y, step)):
        acc += (i + 1) * j
    out[0] = acc
    acc = 0
    for a, b in zip(range(3, 40, 4), range(y, x, -step)):  # noqa: B905 -- kernels' zip
        acc += a * 1000 + b
    out[1] = acc
    n = 0
    for k, (i, j) in enumerate(zip(range(x), range(y, 0, -1)), 5):  # noqa: B905
        n += k * i - j
    out[2] = n


CASES = [(10, 3, -1), (3, 17, 2), (5, 5, 1), (20, -7, -3), (0, 9, 4)]


@pytest.mark.parametrize("x, y, step", CASES)
def test_enumerate_and_zip_of_ranges(x, y, step):
    kernel = cuda.jit(target="cpu")(_loops)
    out = np.full(3, -999, dtype=np.int64)
    kernel[1, 1](out, x, y, step)
    ref = np.full(3, -999, dtype=np.int64)
    _loops(ref, x, y, step)
    np.testing.assert_array_equal(out, ref)
