"""Type inference's last sweep: a kernel whose last non-final sweep was clean keeps
that sweep's blocks (``infer.driver._State.clean``), which must be exactly what the
final sweep makes; anything the final sweep would change takes the final sweep."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import cujit.infer.driver as driver
from cujit import cuda, pipeline
from cujit.ir.printer import format_function
from cujit.options import Options
from cujit.types import float32, float64, int32, int64

OPTS = Options(arch=(9, 0))


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def loop_sum(x, out):  # a loop whose counter and sum keep their types
    s = 0.0
    for i in range(x.size):
        s += x[i]
    out[0] = s


def branch_merge(x, out):  # int on one path, float on the other: the edge casts
    v = 1
    if x[0] > 0:
        v = 2.5
    out[0] = v


def loop_widens(x, out):  # int before the loop, float after its first trip
    s = 0
    for i in range(x.size):
        s += x[i]
    out[0] = s


def unassigned(x, out):  # a read no assignment reaches: the final sweep warns
    if x[0] > 0:
        w = x[0]
        out[0] = w
    else:
        w += 1  # noqa: F821
        out[0] = w


@cuda.jit(device=True)
def twice(v):
    return v + v


def calls_device_function(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = twice(x[i])


CASES = {
    "saxpy": (saxpy, (float32, float32[::1], float32[::1], float32[::1]), True),
    "loop_sum": (loop_sum, (float64[::1], float64[::1]), True),
    "branch_merge": (branch_merge, (float64[::1], float64[::1]), False),
    "loop_widens": (loop_widens, (float64[::1], float64[::1]), False),
    "unassigned": (unassigned, (int32[::1], int32[::1]), False),
    "calls_device_function": (calls_device_function, (int64[::1], int64[::1]), True),
}


def _typed(fn, sig, monkeypatch, shortcut: bool):
    """(typed IR text, final sweeps run) for ``fn``, with the shortcut or without."""
    finals = []
    inner_sweep, inner_settle = driver._sweep, driver._settle

    def sweep(f, order, state, final):
        finals.append(final and not state.device)
        return inner_sweep(f, order, state, final)

    def settle(f, order, state):
        blocks = inner_settle(f, order, state)
        if not shortcut:
            state.clean = False
        return blocks

    with monkeypatch.context() as m:
        m.setattr(driver, "_sweep", sweep)
        m.setattr(driver, "_settle", settle)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = pipeline.compile_kernel(fn, sig, OPTS, stop_after="typed")
    return format_function(result.outputs["typed"]), sum(finals)


@pytest.mark.parametrize("name", CASES)
def test_the_shortcut_makes_what_the_final_sweep_makes(name, monkeypatch):
    fn, sig, clean = CASES[name]
    with_shortcut, finals = _typed(fn, sig, monkeypatch, shortcut=True)
    without, finals_without = _typed(fn, sig, monkeypatch, shortcut=False)
    assert with_shortcut == without
    assert finals_without == 1
    assert finals == (0 if clean else 1)  # the kernel's own final sweep, skipped or run


def test_a_casting_merge_keeps_its_cast(monkeypatch):
    text, finals = _typed(*CASES["branch_merge"][:2], monkeypatch, shortcut=True)
    assert finals == 1
    assert "cast" in text


def test_the_unassigned_read_still_warns():
    fn, sig, _ = CASES["unassigned"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipeline.compile_kernel(fn, sig, OPTS, stop_after="typed")
    assert [str(w.message) for w in caught if "uninitialized variable w" in str(w.message)]


@pytest.mark.parametrize("name", ["saxpy", "loop_sum", "branch_merge", "loop_widens"])
def test_results_on_the_cpu_target(name):
    fn, sig, _ = CASES[name]
    kernel = cuda.jit(fn, target="cpu")
    n = 16
    x = np.arange(1, n + 1, dtype=np.float64)
    if name == "saxpy":
        xs, ys = x.astype(np.float32), (2 * x).astype(np.float32)
        out = np.zeros(n, np.float32)
        kernel[1, n](np.float32(3.0), xs, ys, out)
        np.testing.assert_allclose(out, 3 * xs + ys)
        return
    out = np.zeros(1)
    kernel[1, 1](x, out)
    expected = {"loop_sum": x.sum(), "branch_merge": 2.5, "loop_widens": x.sum()}[name]
    assert out[0] == expected


def test_random_kernels_type_alike_both_ways(monkeypatch):
    # tests/kernelgen's random kernels (loops, branches, mixed int and float
    # arithmetic): the shortcut's typed IR is the final sweep's, and most take it.
    import random

    from kernelgen import generate_kernel
    from test_random_kernels import compile_source

    sig = (int64[:, ::1], int32[:, ::1], float64[:, ::1], float32[:, ::1])
    sig += (int64[:, ::1], float64[:, ::1], float32[:, ::1])
    skipped = 0
    for seed in range(12):
        fn = compile_source(generate_kernel(random.Random(seed), 5)[0], str(seed))
        with_shortcut, finals = _typed(fn, sig, monkeypatch, shortcut=True)
        without, _ = _typed(fn, sig, monkeypatch, shortcut=False)
        assert with_shortcut == without, seed
        skipped += finals == 0
    assert skipped >= 9  # 394 of the generator's first 400 kernels took it
