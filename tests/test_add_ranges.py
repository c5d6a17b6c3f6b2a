"""``ir.analysis.non_overflowing_adds``: integer additions proved not to overflow get
``nsw``, so that LLVM can count a ``while`` loop's trips; an addition that might wrap
keeps cujit's wrapping int64 semantics."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, ir
from cujit.ir.analysis import MAX_CONTIGUOUS_EXTENT, non_overflowing_adds
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import float32, int64, typeof


def typed(fn, types):
    return compile_kernel(fn, types, Options(arch=(9, 0)), stop_after="passes").outputs["passes"]


def adds(fn: ir.Function) -> dict[str, bool]:
    """Each int ``+`` of ``fn`` (by result id, in order) -> proved not to overflow."""
    proved = non_overflowing_adds(fn)
    return {
        op.result.id: op.result.id in proved
        for op in fn.all_ops()
        if isinstance(op, ir.BinOp) and op.op == "+" and op.result.type.kind == "i"
    }


def grid_stride(x, total):
    acc = float32(0.0)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:  # i stays below the extent, the stride below the grid's size
        acc += x[i]
        i += stride
    cuda.atomic.add(total, 0, acc)


def test_a_grid_stride_while_loop_gets_nsw():
    fn = typed(grid_stride, (float32[::1], float32[::1]))
    assert list(adds(fn).values()) == [True]
    llvm = compile_kernel(
        grid_stride, (float32[::1], float32[::1]), Options(arch=(9, 0)), stop_after="llvm"
    ).outputs["llvm"]
    # The increment, and only it among the int64 adds of the loop (libNVVM then unrolls
    # the loop: bench/NOTES.md; the unrolling is the toolchain's, not checked here).
    assert llvm.count("add nsw i64") == 1


def stride_from_argument(x, total, stride):
    i = cuda.grid(1)
    while i < x.size:
        total[0] += x[i]
        i += stride  # any int64: may overflow


def bound_from_argument(x, n):
    i = cuda.grid(1)
    while i < n:  # n is any int64: i + 1 may overflow
        x[0] += 1.0
        i += 1


def strided_extent(x, total):
    i = cuda.grid(1)
    while i < x.size:  # a layout-'A' array may be a zero-stride view of any size
        total[0] += x[i]
        i += cuda.gridsize(1)


def bounded_sums(x, out):
    out[0] = x.size * 16 + x.size * 16  # below 2**62 + 2**62: fits
    out[1] = x.size * 64 + x.size * 64  # up to 2**64: might wrap


PROVED = [
    (stride_from_argument, (float32[::1], float32[::1], int64), [False]),
    (bound_from_argument, (float32[::1], int64), [False]),
    (strided_extent, (float32[:], float32[::1]), [False]),
    (bounded_sums, (float32[::1], int64[::1]), [True, False]),
]


@pytest.mark.parametrize("fn,types,want", PROVED)
def test_what_is_and_is_not_proved(fn, types, want):
    assert list(adds(typed(fn, types)).values()) == want


def test_the_extent_bound_is_the_address_space():
    assert MAX_CONTIGUOUS_EXTENT == 2**57  # the ranges above assume it


def wraps(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + 9223372036854775000  # not provable: wraps as int64 does


def test_an_unproved_addition_still_wraps_on_the_cpu_target():
    x = np.array([1000, 2000, -5], np.int64)
    out = np.zeros(3, np.int64)
    cuda.jit(wraps, target="cpu")[1, 4](x, out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, x + np.int64(9223372036854775000))
    assert list(adds(typed(wraps, (typeof(x), typeof(out)))).values()) == [False]


def _kernel_functions():
    """Every kernel of tests/kernels.py and of this file, typed and optimised."""
    from kernels import CASES

    for case in CASES:
        host_args, *_ = case.setup(np.random.default_rng(0))
        yield case.name, typed(case.kernel.py_func, tuple(typeof(a) for a in host_args))
    yield "grid_stride", typed(grid_stride, (float32[::1], float32[::1]))
    for fn, types, _ in PROVED:
        yield fn.__name__, typed(fn, types)


def test_stopping_the_sweeps_early_proves_what_every_sweep_proves():
    """``non_overflowing_adds`` stops sweeping once a sweep changes nothing, and sweeps
    a loop-free function once: the same answer as sweeping on, for every kernel here."""
    from cujit.ir.analysis import _has_back_edge, _proved_adds, _reverse_postorder

    loops = 0
    for name, fn in _kernel_functions():
        order = _reverse_postorder(fn)
        loops += _has_back_edge(order)
        assert non_overflowing_adds(fn) == _proved_adds(fn, order, 6, stop_early=False), name
    assert loops >= 3  # the kernels with loops are where sweeps matter


def test_a_loop_is_a_back_edge():
    from cujit.ir.analysis import _has_back_edge, _reverse_postorder

    assert _has_back_edge(_reverse_postorder(typed(grid_stride, (float32[::1], float32[::1]))))
    straight = typed(_straight, (float32[::1],))
    assert not _has_back_edge(_reverse_postorder(straight))


def _straight(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] + 1
