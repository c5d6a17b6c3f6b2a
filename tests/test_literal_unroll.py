"""``literal_unroll``: loops over heterogeneous tuples unrolled at compile time, checked
against the same loop run by plain Python on the CPU target."""

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import literal_unroll
from cujit.diagnostics import UnsupportedError

ARRAYS = (np.float64([1.5, -2.0, 4.0]), np.int32([[3, 4], [5, -6]]), np.float32([0.5, 8.0])[::-1])


def _mixed(out):
    i = 0
    for item in literal_unroll(ARRAYS):  # three array types: one body copy each
        out[i] = item.sum() * 10 + item.size
        i += 1
    out[3] = i


def test_heterogeneous_global_tuple():
    kernel = cuda.jit(target="cpu")(_mixed)
    out = np.full(4, np.nan)
    kernel[1, 1](out)
    ref = np.full(4, np.nan)
    _mixed(ref)  # literal_unroll is the tuple itself on the host
    np.testing.assert_array_equal(out, ref)
    assert list(out) == [38.0, 64.0, 87.0, 3.0]


@cuda.jit(target="cpu")
def _argument_and_display(out, tup):
    i = 0
    for v in literal_unroll(tup):
        out[i] = v + 0.5
        i += 1
    for v in literal_unroll((3, 1.25, True)):
        out[i] = v
        i += 1


def test_tuple_argument_and_display():
    out = np.full(6, np.nan)
    _argument_and_display[1, 1](out, (1, 2.5, np.int8(-4)))
    assert list(out) == [1.5, 3.0, -3.5, 3.0, 1.25, 1.0]


def _break_continue(out, x):
    total = 0.0
    n = 0
    for arr in literal_unroll((x, x[::2], x[1:])):
        n += 1
        if arr.size == 2:
            continue
        for k in range(arr.size):
            total += arr[k] * n
        if total > 100.0:
            break
    out[0] = total
    out[1] = n


def test_break_continue_and_values_after_the_loop():
    kernel = cuda.jit(target="cpu")(_break_continue)
    for x in (np.arange(1.0, 5.0), np.array([50.0, 60.0, 1.0, 2.0])):
        out = np.full(2, np.nan)
        kernel[1, 1](out, x)
        ref = np.full(2, np.nan)
        _break_continue(ref, x)
        np.testing.assert_array_equal(out, ref)


@cuda.jit(target="cpu")
def _nested(out):
    i = 0
    for a in literal_unroll((1, 2.5)):
        for b in literal_unroll((10, np.float32(0.25))):
            out[i] = a * b
            i += 1


def test_nested_loops():
    out = np.full(4, np.nan)
    _nested[1, 1](out)
    assert list(out) == [10.0, 0.25, 25.0, 0.625]


def test_unknown_length_is_a_located_error():
    @cuda.jit(target="cpu")
    def kernel(out, x):
        for v in literal_unroll(x):
            out[0] = v

    with pytest.raises(UnsupportedError, match="length is known") as info:
        kernel[1, 1](np.zeros(1), np.ones(3))
    assert "test_literal_unroll.py" in str(info.value)
