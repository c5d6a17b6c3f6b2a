"""``print()`` of tuples and of ``cuda.threadIdx``-style dim3 objects in kernels, in the
format numba prints them (Python's tuple syntax, numba's ``%f`` for floats)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from cujit import cuda
from cujit.pipeline import compile_kernel
from cujit.types import typeof


def print_tuple(tup):
    print(tup)


def print_mixed(x, y):
    print("t", (x, (y, x > 0)), (y,))


def print_indices():
    print(cuda.threadIdx, cuda.blockIdx)


def _output(capfd, kernel, config, *args, gpu: bool = False) -> list[str]:
    kernel[config](*args)
    if gpu:  # CPU-target launches return once the kernel has run
        cuda.synchronize()
    ctypes.CDLL(None).fflush(None)
    out, _ = capfd.readouterr()
    return out.splitlines()


@pytest.mark.parametrize(
    "value",
    [(1, 2, 3, 4, 5), (7,), (1, ((2, 4), 3.0), (4,), 5), (-3, 2.5, True)],
    ids=str,
)
def test_a_tuple_prints_as_python_writes_it(capfd, value):
    kernel = cuda.jit(print_tuple, target="cpu")
    (line,) = _output(capfd, kernel, (1, 1), value)
    # Floats print with C's %f, as numba prints them: 3.0 -> 3.000000.
    expected = repr(value).replace("3.0", "3.000000").replace("2.5", "2.500000")
    assert line == expected


def test_tuples_mix_with_other_items(capfd):
    kernel = cuda.jit(print_mixed, target="cpu")
    assert _output(capfd, kernel, (1, 1), np.int32(-4), 0.25) == [
        "t (-4, (0.250000, False)) (0.250000,)"
    ]


def test_dim3_objects_print_as_their_xyz(capfd):
    kernel = cuda.jit(print_indices, target="cpu")
    lines = _output(capfd, kernel, ((2, 1, 1), (2, 3, 1)))
    expected = [
        f"({tx}, {ty}, 0) ({bx}, 0, 0)" for bx in range(2) for ty in range(3) for tx in range(2)
    ]
    assert sorted(lines) == sorted(expected)


def test_the_ptx_format_of_a_nested_tuple():
    ptx = compile_kernel(print_tuple, (typeof((1, (2.0, 3))),), stop_after="ptx").ptx
    fmt = "(%lld, (%f, %lld))\n"
    data = f"[{len(fmt) + 1}] = {{" + ", ".join(str(b) for b in fmt.encode()) + "}"
    assert data in ptx


@pytest.mark.gpu
def test_tuples_and_dim3_print_on_the_gpu(capfd):
    kernel = cuda.jit(print_tuple)
    assert _output(capfd, kernel, (1, 1), (1, ((2, 4), 3.0), (4,), 5), gpu=True) == [
        "(1, ((2, 4), 3.000000), (4,), 5)"
    ]
    lines = _output(capfd, cuda.jit(print_indices), (1, (2, 2, 2)), gpu=True)
    assert sorted(lines) == sorted(f"({x}, {y}, {z}) (0, 0, 0)" for x, y, z in np.ndindex(2, 2, 2))


def test_more_than_32_values_print_the_format_and_warn(capfd):
    # A 33-tuple: 33 values for vprintf, one more than it takes.  (A call with 33
    # arguments compiles to CALL_FUNCTION_EX, which kernels do not support.)
    kernel = cuda.jit(print_tuple, target="cpu")
    value = tuple(range(100, 133))
    with pytest.warns(RuntimeWarning, match="cannot print more than 32 items"):
        lines = _output(capfd, kernel, (1, 1), value)
    assert lines == ["(" + ", ".join(["%lld"] * 33) + ")"]
    (line,) = _output(capfd, kernel, (1, 1), value[:32])
    assert line == repr(value[:32])  # 32 values still print
