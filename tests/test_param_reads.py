"""Which flat parameters a kernel takes: decided on the typed IR before stage 6
(``cujit.codegen.params``), declared by the generated entry, recorded in the
``LaunchRecord``'s ``passed`` mask that every launch path reads.  The PTX is never
edited: its entry declares exactly the passed parameters.

A parameter wrongly dropped is a miscompile, so besides the expected masks a
soundness check compiles every kernel of the shared sets with every parameter
declared (and the same code otherwise) and requires that each parameter the
optimised PTX still loads is one the analysis passes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from kernels import CASES
from kernels_device import DEVICE_CASES

from cujit import abi, cuda
from cujit.codegen import lower_to_llvm
from cujit.codegen.params import ParamUse, read_params
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.ptx import compile_ptx
from cujit.targets.cuda import CUDA_TARGET
from cujit.types import complex128, float32, float64, int32, int64, typeof

SM90 = Options(arch=(9, 0))


def entry_params(result) -> list[str]:
    """The parameter names the PTX entry declares."""
    return [
        ln.split()[-1].rstrip(",")
        for ln in result.ptx.splitlines()
        if ln.strip().startswith(".param") and result.symbol + "_param_" in ln
    ]


def passed(fn, types, options=SM90) -> tuple[bool, ...]:
    result = compile_kernel(fn, types, options)
    assert len(entry_params(result)) == sum(result.record.passed)  # declared = passed
    return result.record.passed


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


SAXPY = (float32, float32[::1], float32[::1], float32[::1])


def test_saxpy_takes_its_pointers_and_one_extent():
    result = compile_kernel(saxpy, SAXPY, SM90)
    # a, x.data, x.shape0 (x.size), y.data, out.data: the grid index is never
    # negative, so no negative-index wrap needs y's or out's extent.
    assert result.record.passed == (True, True, True, True, False, True, False)
    assert result.kept == result.record.passed  # the result's view of the record
    assert entry_params(result) == [f"saxpy_param_{k}" for k in range(5)]
    assert result.record.param_kinds(SAXPY) == ["float32", "ptr", "int64", "ptr", "ptr"]
    assert result.cubin[:4] == b"\x7fELF"


# -- each kind of use keeps what it reads ------------------------------------------


def neg_index(x, out):
    i = cuda.grid(1)
    out[i] = x[i - 1]  # i - 1 may be -1: Python's wrap needs x's extent


def strided_2d(a, out, n):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j]  # 'A' layout: a's strides; C: out's row length


def shape_only(x, out):
    out[cuda.grid(1)] = x.shape[0]  # x's pointer is never read, its extent is


def scalar_index(x, k):
    x[k] = 1.0  # k may be negative: x's extent for the wrap


def loop_index(x):
    for j in range(0, 16, 4):  # j in [0, 12]: never negative
        x[j] = j


def atomics(hist, v):
    cuda.atomic.add(hist, cuda.grid(1), v)  # a grid index: no wrap
    cuda.atomic.add(hist, -1, v)  # a negative one: the extent


def column_major(f, out):
    i, j = cuda.grid(2)
    out[i] = f[i, j]  # F layout: the first extent, not the last


@cuda.jit(device=True)
def first(x):
    return x[0]


def through_device_function(x, out):
    out[cuda.grid(1)] = first(x)  # passed on to a device function: all of x


def ignore(a, b, c):
    pass


def by_constants(x, n):
    x[n % 32] = 1.0  # in [0, 32): no wrap
    x[cuda.grid(1) // 2] = 2.0  # a non-negative value floored: no wrap
    x[n & 7] = 3.0  # in [0, 7]: no wrap


def by_negative_constants(x, n):
    x[n % -4] = 1.0  # in (-4, 0]: wrapped


@pytest.mark.parametrize(
    "fn,types,want",
    [
        (neg_index, (float64[::1], float64[::1]), (True, True, True, False)),
        (
            strided_2d,
            (float64[:, :], float64[:, ::1], int32),
            # a: data, extents not read (no wrap), strides; out: data and extents; n unread
            (True, False, False, True, True, True, True, True, False),
        ),
        (shape_only, (float64[::1], float64[::1]), (False, True, True, False)),
        (scalar_index, (float64[::1], int64), (True, True, True)),
        (loop_index, (float64[::1],), (True, False)),
        (atomics, (int32[::1], int32), (True, True, True)),
        (column_major, (float64[::1, :], float64[::1]), (True, True, False, True, False)),
        (through_device_function, (float64[::1], float64[::1]), (True, True, True, False)),
        (ignore, (float64[:, :], int64, complex128), (False,) * 8),
        (by_constants, (float64[::1], int64), (True, False, True)),
        (by_negative_constants, (float64[::1], int64), (True, True, True)),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_what_the_code_reads_decides(fn, types, want):
    assert passed(fn, types) == want


def test_the_grid_index_alone_drops_the_extent_and_a_guard_keeps_it():
    def plain(x):
        x[cuda.grid(1)] = 1.0

    def guarded(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = 1.0

    assert passed(plain, (float32[::1],)) == (True, False)
    assert passed(guarded, (float32[::1],)) == (True, True)


def test_debug_builds_pass_every_parameter():
    result = compile_kernel(saxpy, SAXPY, Options(arch=(9, 0), debug=True))
    assert all(result.record.passed) and len(entry_params(result)) == 7
    assert result.kept is None


def test_cpu_target_passes_every_parameter():
    result = compile_kernel(saxpy, SAXPY, Options(target="cpu"))
    assert all(result.record.passed) and result.kept is None


def test_the_llvm_function_declares_only_the_passed_parameters():
    llvm = compile_kernel(saxpy, SAXPY, SM90, stop_after="llvm").outputs["llvm"]
    header = next(ln for ln in llvm.splitlines() if ln.startswith("define"))
    assert re.findall(r'%"([^"]+)"', header) == ["a", "x.data", "x.shape0", "y.data", "out.data"]


# -- soundness: nothing the code loads is left out ---------------------------------


def _loaded_params(fn, types) -> tuple[bool, ...]:
    """Per flat parameter: does the optimised PTX load it, when the kernel declares
    every parameter and is otherwise the code the analysis leads to?"""
    typed = compile_kernel(fn, types, SM90, stop_after="passes").outputs["passes"]
    use = read_params(typed)
    module = lower_to_llvm(
        typed, CUDA_TARGET, params=ParamUse((True,) * len(use.passed), use.unwrapped)
    )
    ptx = compile_ptx(str(module), SM90.arch)
    symbol = re.search(r"\.entry\s+(\w+)\s*\(", ptx).group(1)
    body = ptx[ptx.index("{", ptx.index(".entry " + symbol)) :]
    read = {int(n) for n in re.findall(rf"\b{symbol}_param_(\d+)\b", body)}
    return tuple(k in read for k in range(len(use.passed))), use.passed


def _types(case) -> tuple:
    args, *_ = case.setup(np.random.default_rng(0))
    return tuple(typeof(a) for a in args)


SOUNDNESS = [pytest.param(c.kernel.py_func, _types(c), id=c.name) for c in CASES + DEVICE_CASES] + [
    pytest.param(f, t, id=f.__name__)
    for f, t in (
        (saxpy, SAXPY),
        (neg_index, (float64[::1], float64[::1])),
        (strided_2d, (float64[:, :], float64[:, ::1], int32)),
        (atomics, (int32[::1], int32)),
        (column_major, (float64[::1, :], float64[::1])),
        (loop_index, (float64[::1],)),
    )
]


@pytest.mark.parametrize("fn,types", SOUNDNESS)
def test_every_parameter_the_code_loads_is_passed(fn, types):
    loaded, kept = _loaded_params(fn, types)
    missing = [k for k, (ld, p) in enumerate(zip(loaded, kept, strict=True)) if ld and not p]
    names = [n for k, t in enumerate(types) for n in abi.param_names(f"arg{k}", t)]
    assert not missing, f"loaded but not passed: {[names[k] for k in missing]}"


def shared_by_thread(x, k):
    buf = cuda.shared.array((32, 4), float32)
    buf[cuda.threadIdx.x, 3] = x[0]  # never negative: no wrap on either axis
    buf[k, 0] = x[1]  # any int64 on axis 0: wrapped


def test_a_shared_arrays_non_negative_index_takes_no_wrap():
    """Arrays that are not arguments (shared, local) have no extent parameters, but
    their accesses' wraps are left out alike where the index cannot be negative."""
    typed = compile_kernel(
        shared_by_thread, (float32[::1], int64), SM90, stop_after="passes"
    ).outputs["passes"]
    sets = [op for op in typed.all_ops() if type(op).__name__ == "SetItem"]
    shared = [op for op in sets if op.obj.id != typed.args[0].id]
    assert len(shared) == 2
    unwrapped = read_params(typed).unwrapped
    assert {(id(shared[0]), 0), (id(shared[0]), 1), (id(shared[1]), 1)} <= unwrapped
    assert (id(shared[1]), 0) not in unwrapped
    llvm = compile_kernel(shared_by_thread, (float32[::1], int64), SM90, stop_after="llvm")
    # one wrap left, of k against the shared array's extent (32)
    text = llvm.outputs["llvm"]
    assert text.count("icmp slt") == 1 and 'add i64 %"k", 32' in text


def loops(x, n, step):
    acc = 0.0
    for i in range(n):  # step 1
        acc += x[i]
    for i in range(n, 0, -2):  # a negative constant step
        acc += x[i]
    for i in range(0, n, step):  # any step
        acc += x[i]
    x[0] = acc


def grid_stride(x, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        x[i] = 0.0


def test_a_loop_with_a_known_steps_sign_tests_one_direction():
    """A ``range`` loop whose step is known positive (or negative) tests only
    ``next < stop`` (``>``); a step of either sign keeps both directions' tests."""
    types = (float64[::1], int64, int64)
    typed = compile_kernel(loops, types, SM90, stop_after="passes").outputs["passes"]
    tests = [op for op in typed.all_ops() if type(op).__name__ == "IterValid"]
    signs = dict(read_params(typed).step_signs)
    assert [signs.get(id(op)) for op in tests] == [1, -1, None]
    text = compile_kernel(loops, types, SM90, stop_after="llvm").outputs["llvm"]
    # the -2 loop's next > stop, the unknown step's step > 0 and next > stop (each loop
    # tested both ways would have six)
    assert text.count("icmp sgt i64") == 3
    typed = compile_kernel(grid_stride, types[:2], SM90, stop_after="passes").outputs["passes"]
    assert list(dict(read_params(typed).step_signs).values()) == [1]


@pytest.mark.parametrize("n,step", [(10, 3), (7, -1), (0, 2), (9, 1), (5, -2)])
def test_loops_with_known_steps_run_as_python_does(n, step):
    """Run on the host (stage 6's LLVM through llvmlite's JIT) with the step facts."""
    from codegen_helpers import HOST_TARGET, host_module_call

    typed = compile_kernel(loops, (float64[::1], int64, int64), SM90, stop_after="passes")
    fn = typed.outputs["passes"]
    use = read_params(fn)
    assert use.step_signs
    every = ParamUse((True,) * len(use.passed), frozenset(), use.step_signs)
    x = np.arange(1.0, 41.0)
    got = x.copy()
    host_module_call(lower_to_llvm(fn, HOST_TARGET, params=every), fn)(got, n, step)
    acc = sum(x[i] for i in range(n)) + sum(x[i] for i in range(n, 0, -2))
    acc += sum(x[i] for i in range(0, n, step))
    assert got[0] == acc
