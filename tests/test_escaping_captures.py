"""Nested functions passed as arguments (infer/escapes.py): numba's rule by default (one
constant value per captured variable), cujit's run-time captures with
``jit(escaping_captures=True)``; nested functions called where they are made capture
anything."""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError


@cuda.jit(device=True)
def consume(func, v):
    return func(v)


def captures_one_constant(out, n):
    k = 40

    def inner(y):
        return y + k

    out[0] = consume(inner, n)


def captures_reassigned(out, n):
    k = 1

    def inner(y):
        return y + k

    k = 2  # Python's cell would give inner this value
    out[0] = consume(inner, n)


def captures_runtime_value(out, n):
    k = n * 3

    def inner(y):
        return y + k

    out[0] = consume(inner, 1)


def calls_in_place(out, n):
    k = n * 3

    def inner(y):
        return y + k

    out[0] = inner(1)


def _run(fn, n, **flags):
    out = np.full(1, -1, dtype=np.int64)
    cuda.jit(fn, target="cpu", **flags)[1, 1](out, n)
    return out[0]


def test_a_constant_capture_may_escape():
    assert _run(captures_one_constant, 2) == 42


def test_a_reassigned_capture_may_not_escape():
    with pytest.raises(TypingError, match="multiple definitions present") as info:
        _run(captures_reassigned, 2)
    assert "'k'" in info.value.message
    with pytest.raises(TypingError, match="multiple definitions present"):
        _run(captures_reassigned, 2, escaping_captures=True)  # not even with the option


def test_a_runtime_capture_escapes_only_with_the_option():
    with pytest.raises(TypingError, match="Cannot capture the non-constant value") as info:
        _run(captures_runtime_value, 5)
    assert "variable 'k' in a function that may escape" in info.value.message
    assert "escaping_captures=True" in info.value.hint
    assert _run(captures_runtime_value, 5, escaping_captures=True) == 5 * 3 + 1


def test_a_nested_function_called_in_place_captures_runtime_values():
    assert _run(calls_in_place, 4) == 4 * 3 + 1
