"""The per-index independence rule (cujit.ir.independence, docs/coarsening.md): the
kernels it accepts and, above all, those it must refuse (a wrong yes is a miscompile)."""

import math

import numpy as np
import pytest

from cujit import cuda
from cujit.ir.independence import analyse
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import typeof

F32 = np.ones(8, np.float32)
F64 = np.ones(8, np.float64)
I32 = np.ones(8, np.int32)
I64 = np.ones(8, np.int64)


def verdict(fn, *args):
    types = tuple(typeof(a) for a in args)
    result = compile_kernel(fn, types, Options(), stop_after="passes")
    return analyse(result.outputs["passes"])


def refused(fn, *args, rule: str):
    v = verdict(fn, *args)
    assert not v.ok, f"{fn.__name__} accepted"
    assert rule in v.rule, v.rule
    assert v.loc is not None and v.loc.line > 0
    return v


@cuda.jit(device=True)
def gelu(x):
    return 0.5 * x * (1.0 + math.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


@cuda.jit(device=True)
def with_loop(x, n):
    acc = 0.0
    for k in range(n):
        acc += x * k
    return acc


@cuda.jit(device=True)
def reads_thread(x):
    return x + cuda.threadIdx.x


@cuda.jit(device=True)
def takes_array(a, j):
    return a[j]


# -- accepted -------------------------------------------------------------
def saxpy(out, a, x, y, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a * x[i] + y[i]


def explicit_index(out, x):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i >= out.size:
        return
    out[i] = math.exp(x[i])


def swapped_bound(out, x, n):
    i = cuda.grid(1)
    if n - 1 > i:
        out[i] = x[i + 1] - x[i]


def two_bounds(out, x):
    i = cuda.grid(1)
    if i < out.shape[0] and i < x.size:
        out[i] = gelu(x[i]) + with_loop(x[i], 3)


def mixed_widths(out, x):
    i = cuda.grid(1)
    if i <= x.size - 1:
        out[i] = x[i]


def test_saxpy_is_independent_with_four_float32_per_thread():
    v = verdict(saxpy, F32, np.float32(2), F32, F32, 8)
    assert v.ok and v.width == 4 and v.arrays == (0, 2, 3)
    assert [b.expr for b in v.bounds] == [("arg", 4)]
    assert "coarsened" in v.describe()


def test_threadidx_form_and_exit_form():
    v = verdict(explicit_index, F64, F64)
    assert v.ok and v.width == 2  # float64: two per 16 bytes
    assert v.bounds[0].expr == ("size", 0) and not v.bounds[0].inclusive


def test_offset_reads_and_a_computed_bound():
    v = verdict(swapped_bound, F32, F32, 8)
    assert v.ok
    assert v.bounds[0].expr == ("-", ("arg", 2), ("const", 1))
    assert sorted(c for _, c in v.offsets) == [0, 1]


def test_pure_device_functions_and_two_bounds():
    v = verdict(two_bounds, F32, F32)
    assert v.ok and len(v.bounds) == 2
    assert {b.expr for b in v.bounds} == {("shape", 0, 0), ("size", 1)}


def test_narrowest_type_sets_the_width_and_inclusive_bound():
    v = verdict(mixed_widths, F64, F32)
    assert v.ok and v.width == 4 and v.bounds[0].inclusive


# -- refused --------------------------------------------------------------
def strided(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[2 * i]


def stores_index(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i


def index_as_value(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * i


def shared(out, x):
    s = cuda.shared.array(32, np.float32)
    i = cuda.grid(1)
    if i < out.size:
        s[0] = x[i]
        out[i] = x[i]


def barrier(out, x):
    i = cuda.grid(1)
    cuda.syncthreads()
    if i < out.size:
        out[i] = x[i]


def atomic(out, x):
    i = cuda.grid(1)
    if i < out.size:
        cuda.atomic.add(out, i, x[i])


def warp(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = cuda.shfl_down_sync(0xFFFFFFFF, x[i], 1)


def data_exit(out, x):
    i = cuda.grid(1)
    if i < out.size:
        if x[i] > 0:
            return
        out[i] = x[i]


def lower_bound(out, x):
    i = cuda.grid(1)
    if i > 0:
        out[i] = x[i - 1]


def loop_over_indices(out, x, n):
    i = cuda.grid(1)
    if i < out.size:
        acc = 0.0
        for j in range(n):
            acc += x[j]
        out[i] = acc


def loop_at_i(out, x):
    i = cuda.grid(1)
    if i < out.size:
        for _ in range(3):
            out[i] += x[i]


def other_index(out, x, j):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[j]


def grid2d(out, x):
    i, j = cuda.grid(2)
    if i < out.size:
        out[i] = x[i]


def grid_stride(out, x):
    i = cuda.grid(1)
    while i < out.size:
        out[i] = x[i]
        i += cuda.gridsize(1)


def in_place_shift(x):
    i = cuda.grid(1)
    if i < x.size - 1:
        x[i] = x[i + 1]


def store_ahead(out, x):
    i = cuda.grid(1)
    if i < out.size - 1:
        out[i + 1] = x[i]


def no_guard(out, x):
    i = cuda.grid(1)
    out[i] = x[i]


def block_index_only(out, x):
    i = cuda.blockIdx.x
    if i < out.size:
        out[i] = x[i]


def impure_callee(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = reads_thread(x[i])


def array_callee(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = takes_array(x, i)


def work_before_guard(out, x):
    i = cuda.grid(1)
    v = x[0]
    if i < out.size:
        out[i] = v


def load_before_guard(out, x):
    i = cuda.grid(1)
    v = x[i]
    if i < out.size:
        out[i] = v


def data_bound(out, x, m):
    i = cuda.grid(1)
    if i < m[0]:
        out[i] = x[i]


CASES = [
    (strided, (F32, F32), "arithmetic other than i + c"),
    (stores_index, (I64,), "stored to memory"),
    (index_as_value, (F32, F32), "arithmetic other than i + c"),
    (shared, (F32, F32), "shared memory"),
    (barrier, (F32, F32), "barrier"),
    (atomic, (F32, F32), "atomic"),
    (warp, (F32, F32), "warp function"),
    (data_exit, (F32, F32), "not a bounds check"),
    (lower_bound, (F32, F32), "not on an upper bound"),
    (loop_over_indices, (F32, F32, 3), "control flow"),
    (loop_at_i, (F32, F32), "control flow"),
    (other_index, (F32, F32, 3), "index other than i + c"),
    (grid2d, (F32, F32), "a 2-D grid index"),
    (grid_stride, (F32, F32), "cuda.gridsize"),
    (in_place_shift, (F32,), "read at another index"),
    (store_ahead, (F32, F32), "store at another index"),
    (no_guard, (F32, F32), "no bounds check"),
    (block_index_only, (F32, F32), "1-D global index"),
    (impure_callee, (F32, F32), "calls cuda.sreg"),
    (array_callee, (F32, F32), "array or object argument"),
    (work_before_guard, (F32, F32), "work before the bounds check"),
    (load_before_guard, (F32, F32), "work before the bounds check"),
    (data_bound, (F32, F32, I32), "bound on i that the launch cannot compute"),
]


@pytest.mark.parametrize("fn, args, rule", CASES, ids=[c[0].__name__ for c in CASES])
def test_refused(fn, args, rule):
    v = refused(fn, *args, rule=rule)
    assert v.describe().startswith("not coarsened: ")


def test_views_of_other_layouts_are_refused():
    strided_view = np.ones(16, np.float32)[::2]
    refused(saxpy, F32, np.float32(1), strided_view, F32, 8, rule="1-D C-contiguous")


def test_two_d_arrays_are_refused():
    two = np.ones((4, 4), np.float32)

    def k(out, x):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i, 0] = x[i, 0]

    refused(k, two, two, rule="other than i + c")


@cuda.jit("int64(int64)", device=True)
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def calls_recursive(out, n):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = fact(n)


def test_refuses_a_recursive_device_function():
    # The purity check walks callees: a self-recursive one is refused, not walked forever.
    refused(calls_recursive, I64, 5, rule="recursive call of fact")
