"""Enum members in kernels: ``Color.red`` and ``Color["red"]`` are the same constant
member; an unknown member name is the user's error at its line."""

from __future__ import annotations

from enum import Enum, IntEnum

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError


class Color(Enum):
    red = 1
    green = 2


class Status(IntEnum):
    ok = 7
    missing = 404
    failed = 500


def _compare(out):
    out[0] = Color["red"] == Color["green"]
    out[1] = Color["red"] == Color.red
    out[2] = Color.green != Color["green"]


def test_getitem_on_an_enum_class_cpu():
    got = np.array([True, False, True])
    cuda.jit(_compare, target="cpu")[1, 1](got)
    np.testing.assert_array_equal(got, [False, True, False])


def _status(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if x[i] != Status["missing"]:
            out[i] = Status["failed"] + x[i]
        else:
            out[i] = Status.ok


def test_intenum_getitem_is_an_integer_cpu():
    x = np.array([3, 404, -5, 404], np.int64)
    out = np.full(4, -1, np.int64)
    cuda.jit(_status, target="cpu")[1, 4](x, out)
    np.testing.assert_array_equal(out, np.where(x != 404, 500 + x, 7))


def _unknown(out):
    out[0] = Color["blue"] == Color.red


def test_unknown_member_is_a_typing_error():
    with pytest.raises(TypingError, match="enum Color has no member 'blue'") as info:
        cuda.jit(_unknown, target="cpu")[1, 1](np.zeros(1, np.bool_))
    assert "test_enum_members.py" in str(info.value)
