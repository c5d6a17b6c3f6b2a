"""``a.reshape(...)``, ``a.view(dtype)`` and ``a.copy()`` of a global array in kernels,
against NumPy on the CPU target."""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import UnsupportedError

TABLE = np.array([[4.5, -1.0, 2.0], [7.0, 8.5, -3.25]])[:, ::-1]  # a strided global


@cuda.jit(target="cpu")
def _views(out, a, raw, start):
    q = TABLE.copy()  # a local array with the frozen contents: writable
    q[0, 0] += 100.0
    k = 0
    for i in range(q.shape[0]):
        for j in range(q.shape[1]):
            out[k] = q[i, j]
            k += 1
    flat = a.reshape(a.size)
    cube = flat.reshape((2, -1, 2))
    for i in range(cube.shape[0]):
        for j in range(cube.shape[1]):
            for m in range(cube.shape[2]):
                out[k] = cube[i, j, m] * 10 + i
                k += 1
    words = raw[start : start + 8].view(np.int32)
    out[k] = words[0]
    out[k + 1] = words[1]
    out[k + 2] = raw.view(np.uint16).shape[0]
    out[k + 3] = cube.shape[1]


def test_views_and_copy_match_numpy():
    a = np.arange(12.0).reshape(3, 4) - 5.5
    raw = np.arange(64, dtype=np.uint8) * 3
    out = np.full(6 + 12 + 4, np.nan)
    _views[1, 1](out, a, raw, 4)
    q = TABLE.copy()
    q[0, 0] += 100.0
    cube = a.reshape(a.size).reshape((2, -1, 2))
    ref = list(q.ravel())
    ref += [cube[i, j, m] * 10 + i for i in range(2) for j in range(3) for m in range(2)]
    words = raw[4:12].view(np.int32)
    ref += [words[0], words[1], raw.view(np.uint16).shape[0], cube.shape[1]]
    np.testing.assert_array_equal(out, ref)
    assert TABLE[0, 0] == 2.0  # the global itself is untouched


def test_copy_of_an_argument_is_refused_at_the_call():
    @cuda.jit(target="cpu")
    def kernel(out, a):
        b = a.copy()
        out[0] = b[0]

    with pytest.raises(UnsupportedError, match="cannot allocate") as info:
        kernel[1, 1](np.zeros(1), np.ones(3))
    assert "test_array_view_methods.py" in str(info.value)


def test_reshape_of_a_strided_view_is_refused():
    @cuda.jit(target="cpu")
    def kernel(out, a):
        b = a[:, ::2].reshape(4)
        out[0] = b[0]

    with pytest.raises(UnsupportedError, match="non-contiguous"):
        kernel[1, 1](np.zeros(1), np.ones((2, 4)))
