"""written_arguments: which kernel arguments a kernel may store into."""

from __future__ import annotations

import numpy as np

from cujit import cuda
from cujit.ir.analysis import written_arguments
from cujit.pipeline import compile_kernel
from cujit.types import typeof


def written(fn, *args):
    typed = compile_kernel(fn, tuple(typeof(a) for a in args), stop_after="passes")
    return written_arguments(typed.outputs["passes"])


def test_reads_and_writes():
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]

    v = np.zeros(4, np.float32)
    assert written(saxpy, np.float32(1), v, v, v) == (False, False, False, True)


def test_atomics_write_their_array():
    def hist(x, h):
        cuda.atomic.add(h, x[0], 1)

    assert written(hist, np.zeros(3, np.int64), np.zeros(3, np.int32)) == (False, True)


def test_writes_through_a_merged_variable_count_for_both_sources():
    def pick(a, b, flag):
        t = a if flag > 0 else b
        t[0] = 1.0

    v = np.zeros(3)
    assert written(pick, v, v, 1) == (True, True, False)


def test_writes_through_a_tuple():
    def via_tuple(a, b, c):
        t = (a, b)
        t[1][0] = c[0]

    v = np.zeros(3)
    flags = written(via_tuple, v, v, v)
    assert flags[1] and not flags[2]
