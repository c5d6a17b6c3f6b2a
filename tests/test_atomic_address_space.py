"""Atomics on array arguments are global-space instructions in the PTX (``atom.global``
or ``red.global``), never the generic form, which ptxas turns into a returning atomic
with a shared-memory fallback loop; on shared arrays they are ``.shared``."""

from __future__ import annotations

import re

import pytest

from cujit import cuda


def _global_add(idx, ary):
    i = cuda.threadIdx.x
    cuda.atomic.add(ary, idx[i] % ary.size, 1.0)


def _global_add_2d(ary, out):
    i = cuda.threadIdx.x
    out[i] = cuda.atomic.add(ary, (i // 8, i % 8), 2.0)


def _shared_add(out):
    s = cuda.shared.array(8, out.dtype)
    i = cuda.threadIdx.x
    if i < 8:
        s[i] = 0
    cuda.syncthreads()
    cuda.atomic.add(s, i % 8, 1.0)
    cuda.syncthreads()
    if i < 8:
        out[i] = s[i]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_adds_on_arguments_are_global(dtype):
    bits = dtype[-2:]
    for fn, sig in (
        (_global_add, f"void(int64[::1], {dtype}[::1])"),
        (_global_add_2d, f"void({dtype}[:, ::1], {dtype}[::1])"),
    ):
        ptx, _ = cuda.compile_ptx(fn, sig)
        ops = re.findall(r"\b(?:red|atom)\.[\w.]*add\.f" + bits, ptx)
        assert ops and all(".global." in op for op in ops), ops


def test_float_adds_on_shared_arrays_are_shared():
    ptx, _ = cuda.compile_ptx(_shared_add, "void(float64[::1])")
    ops = re.findall(r"\b(?:red|atom)\.[\w.]*add\.f64", ptx)
    assert ops and all(".shared." in op for op in ops), ops
