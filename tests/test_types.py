"""Types as numba spells them, typeof of launch arguments, signature parsing."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, float32, float64, int32, int64, void
from cujit.types import Array, Signature, Tuple, boolean, parse_signature, typeof, uint8


def test_array_type_spellings():
    assert float32[:] == Array(float32, 1, "A")
    assert float32[::1] == Array(float32, 1, "C")
    assert float64[:, ::1] == Array(float64, 2, "C")
    assert float64[::1, :] == Array(float64, 2, "F")
    assert int32[:, :, :] == Array(int32, 3, "A")
    with pytest.raises(TypeError):
        float32[:, ::1, :]
    with pytest.raises(TypeError):
        float32[1:2]


def test_signatures():
    assert void(float32[:], int64) == Signature(void, (float32[:], int64))
    assert parse_signature("void(float32[:], int64)") == Signature(void, (float32[:], int64))
    assert parse_signature("void(float64[:, ::1], uint8)").args == (float64[:, ::1], uint8)
    assert parse_signature((float32[:], int32)) == Signature(void, (float32[:], int32))
    with pytest.raises(TypeError, match="cannot parse"):
        parse_signature("void(float33[:])")
    with pytest.raises(TypeError, match="cannot parse"):
        parse_signature("__import__('os')")


def test_namespaces_share_the_type_objects():
    assert cuda.float32 is float32
    assert cuda.types.int32 is int32
    assert float32(1.5) == np.float32(1.5) and isinstance(float32(1.5), np.float32)


def test_typeof_arguments():
    assert typeof(1) == int64
    assert typeof(1.0) == float64
    assert typeof(True) == boolean
    assert typeof(np.float32(2)) == float32
    assert typeof(np.zeros(3, np.float32)) == float32[::1]
    assert typeof(np.zeros((3, 4))) == float64[:, ::1]
    assert typeof(np.zeros((3, 4)).T) == float64[::1, :]
    assert typeof(np.zeros((3, 4))[:, ::2]) == float64[:, :]
    assert typeof(np.zeros((1, 4))[:, :]) == float64[:, ::1]
    assert typeof((1, 2.0)) == Tuple((int64, float64))
    with pytest.raises(TypeError, match="unsupported dtype"):
        typeof(np.zeros(3, dtype=object))
    with pytest.raises(TypeError, match="cannot pass"):
        typeof("text")
