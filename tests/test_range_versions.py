"""Range loops versioned on the sign of their start (``passes/range_versions.py``): the
copy run for a non-negative start indexes arrays without wrapping negative indices, the
loop as written runs otherwise.  Results against NumPy on the CPU target (negative
starts included), the IR the pass makes and refuses, and the PTX of the copy."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda, float32, int32
from cujit import ir as cir
from cujit.options import Options
from cujit.passes import RELEASE_PASSES
from cujit.pipeline import compile_kernel

SPMV_TYPES = (int32[::1], int32[::1], float32[::1], float32[::1], float32[::1])


def spmv(rowptr, cols, vals, x, y):
    row = cuda.grid(1)
    if row < y.size:
        acc = float32(0.0)
        for k in range(rowptr[row], rowptr[row + 1]):
            acc += vals[k] * x[cols[k]]
        y[row] = acc


def spmv_ref(rowptr, cols, vals, x):
    out = np.zeros(len(rowptr) - 1)
    for row in range(len(out)):
        for k in range(rowptr[row], rowptr[row + 1]):
            out[row] += float(vals[k]) * float(x[cols[k]])
    return out


def last_index(starts, data, out, last):  # the loop's value read after the loop
    i = cuda.grid(1)
    if i < out.size:
        s = 0.0
        k = -100
        for k in range(starts[i], starts[i] + 3):
            s += data[k]
        out[i] = s
        last[i] = k


def run_cpu(fn, n, *args):
    k = cuda.jit(target="cpu")(fn)
    k[-(-n // 32), 32](*args)


def csr(rng, rows, per, ncols):
    counts = rng.integers(0, per + 1, rows)
    rowptr = np.zeros(rows + 1, np.int32)
    np.cumsum(counts, out=rowptr[1:])
    cols = rng.integers(-ncols, ncols, rowptr[-1]).astype(np.int32)  # some wrap
    vals = rng.standard_normal(rowptr[-1]).astype(np.float32)
    return rowptr, cols, vals


@pytest.mark.parametrize("shift", [0, -7])  # -7: the first rows' ranges start below zero
def test_spmv_matches_numpy_on_the_cpu(shift):
    rng = np.random.default_rng(5)
    rowptr, cols, vals = csr(rng, 70, 6, 50)
    rowptr = rowptr + np.int32(shift)  # k < 0 counts from the end of vals and cols
    x = rng.standard_normal(50).astype(np.float32)
    y = np.full(70, np.nan, np.float32)
    run_cpu(spmv, 70, rowptr, cols, vals, x, y)
    np.testing.assert_allclose(y, spmv_ref(rowptr, cols, vals, x), rtol=1e-5, atol=1e-5)
    assert (rowptr[:-1] < 0).any() == (shift < 0)


def test_the_loop_value_after_the_loop():
    starts = np.array([0, 4, -3, -1, 2, 5], np.int64)
    data = np.arange(1.0, 9.0)
    out = np.full(6, np.nan)
    last = np.full(6, -1, np.int64)
    run_cpu(last_index, 6, starts, data, out, last)
    want = [sum(data[k] for k in range(s, s + 3)) for s in starts]
    np.testing.assert_allclose(out, want)
    np.testing.assert_array_equal(last, starts + 2)


def _passes(fn, types):
    return compile_kernel(fn, types, Options(verify=True), stop_after="passes").outputs["passes"]


def _ranges(fn) -> int:
    return sum(1 for op in fn.all_ops() if isinstance(op, cir.Intrinsic) and op.name == "range")


def test_the_spmv_loop_is_versioned():
    fn = _passes(spmv, SPMV_TYPES)
    assert _ranges(fn) == 2
    starts = [op for op in fn.all_ops() if isinstance(op, cir.Intrinsic) and op.name == "max"]
    assert len(starts) == 1  # the copy's start, max(start, 0)


def constant_start(vals, out):
    i = cuda.grid(1)
    if i < out.size:
        s = float32(0.0)
        for k in range(0, i):
            s += vals[k]
        out[i] = s


def step_two(starts, vals, out):
    i = cuda.grid(1)
    if i < out.size:
        s = float32(0.0)
        for k in range(starts[i], starts[i + 1], 2):
            s += vals[k]
        out[i] = s


def with_break(starts, vals, out):
    i = cuda.grid(1)
    if i < out.size:
        s = float32(0.0)
        for k in range(starts[i], starts[i + 1]):
            if vals[k] < 0:
                break
            s += vals[k]
        out[i] = s


def not_an_index(starts, out):
    i = cuda.grid(1)
    if i < out.size:
        s = 0
        for k in range(starts[i], starts[i + 1]):
            s += k
        out[i] = s


@pytest.mark.parametrize(
    "fn, types",
    [
        (constant_start, (float32[::1], float32[::1])),
        (step_two, (int32[::1], float32[::1], float32[::1])),
        (with_break, (int32[::1], float32[::1], float32[::1])),
        (not_an_index, (int32[::1], int32[::1])),
    ],
)
def test_loops_it_leaves_alone(fn, types):
    assert _ranges(_passes(fn, types)) == 1


@pytest.mark.parametrize("fn", [step_two, with_break])
def test_loops_it_leaves_alone_still_compute_the_same(fn):
    rng = np.random.default_rng(9)
    starts = np.sort(rng.integers(-6, 30, 41)).astype(np.int32)
    vals = rng.standard_normal(30).astype(np.float32)
    out = np.full(40, np.nan, np.float32)
    run_cpu(fn, 40, starts, vals, out)
    want = np.zeros(40)
    for i in range(40):
        step = 2 if fn is step_two else 1
        for k in range(starts[i], starts[i + 1], step):
            if fn is with_break and vals[k] < 0:
                break
            want[i] += vals[k]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def _loops_without_wraps(ptx: str) -> int:
    """Blocks of the PTX (between labels) that load floats and wrap no index."""
    count = 0
    for block in re.split(r"\n\$L__BB\d+_\d+:", ptx):
        loads = "ld.global.f32" in block
        if loads and "shr.s64" not in block and "selp.b64" not in block:
            count += 1
    return count


def gather(starts, vals, out):
    i = cuda.grid(1)
    if i < out.size:
        s = float32(0.0)
        for k in range(starts[i], starts[i + 1]):
            s += vals[k]
        out[i] = s


def test_the_copy_loads_without_wrapping(monkeypatch):
    import cujit.passes as passes

    types = (int32[::1], float32[::1], float32[::1])
    versioned = compile_kernel(gather, types, Options()).ptx
    assert _loops_without_wraps(versioned) >= 1
    unversioned = tuple(p for p in RELEASE_PASSES if p.__name__ != "version_range_loops")
    monkeypatch.setattr(passes, "RELEASE_PASSES", unversioned)
    plain = compile_kernel(gather, types, Options()).ptx
    assert _loops_without_wraps(plain) == 0  # as written, every load wraps its index
