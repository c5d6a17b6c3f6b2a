"""``print()`` in kernels: run on the CPU target with the output captured from the
file descriptor; on CUDA, the PTX calls ``vprintf`` with numba's format string
(and, where there is a GPU, the output is checked the same way)."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import UnsupportedError
from cujit.pipeline import compile_kernel
from cujit.types import typeof


@cuda.jit(device=True)
def report(label_value, x):
    print("device", label_value, x > 0)


def printing(ints, floats, small, big):
    i = cuda.grid(1)
    if i < ints.size:
        print("i =", i, "int:", ints[i], "f:", floats[i], "f32:", small[i], "u64:", big[i])
        print(ints[i] > 0, None, "100% done")
        report(i, floats[i])
    if i == 0:
        print()


def _args():
    return [
        np.array([-3, 7], np.int32),
        np.array([0.5, -2.25]),
        np.array([1.5, 3.0], np.float32),
        np.array([2**64 - 1, 5], np.uint64),
    ]


EXPECTED = """\
i = 0 int: -3 f: 0.500000 f32: 1.500000 u64: 18446744073709551615
False None 100% done
device 0 True

i = 1 int: 7 f: -2.250000 f32: 3.000000 u64: 5
True None 100% done
device 1 False
"""


def _flush_c_stdout():
    ctypes.CDLL(None).fflush(None)


def test_print_on_the_cpu_target(capfd):
    kernel = cuda.jit(printing, target="cpu")
    kernel[1, 2](*_args())
    _flush_c_stdout()
    out, _ = capfd.readouterr()
    # One block on one core: its threads run in order, each to its end.
    assert out == EXPECTED


def test_ptx_calls_vprintf_with_numbas_format():
    types = tuple(typeof(a) for a in _args())
    ptx = compile_kernel(printing, types, stop_after="ptx").ptx
    assert "vprintf" in ptx
    for fmt in (
        "i = %lld int: %lld f: %f f32: %f u64: %llu\n",
        "%s None 100%% done\n",
        "device %lld %s\n",
        "\n",
        "True",
        "False",
    ):
        # A .const byte array; PTX leaves out the trailing NUL's zero initializer.
        data = f"[{len(fmt) + 1}] = {{" + ", ".join(str(b) for b in fmt.encode()) + "}"
        assert data in ptx, f"format {fmt!r} missing from the PTX"


@pytest.mark.gpu
def test_print_on_the_gpu(capfd):
    kernel = cuda.jit(printing)
    kernel[1, 2](*_args())
    cuda.synchronize()
    _flush_c_stdout()
    out, _ = capfd.readouterr()
    # Warps print in an unspecified order: compare the lines as a multiset.
    assert sorted(out.splitlines()) == sorted(EXPECTED.splitlines())


@pytest.mark.parametrize(
    "kernel, message",
    [
        (lambda x: print(x), "print() of array"),
        (lambda x: print(x[0], x[1], sep=","), "no keyword arguments"),
    ],
)
def test_unsupported_prints(kernel, message):
    with pytest.raises(UnsupportedError, match=re.escape(message)):
        compile_kernel(kernel, (typeof(np.zeros(2)),), stop_after="typed")
