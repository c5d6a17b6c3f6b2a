"""Debug mode (``jit(debug=True)``, ``CUJIT_DEBUG=1``): ``assert`` and ``raise``, and
bounds checks where asked for (``boundscheck=True``; numba's debug mode does not imply
them), in kernels come back to the host as Python exceptions naming the source
line, the thread and the block, and the process stays usable.

Every test runs on the CPU target here and on the GPU where there is one (marked
``gpu``).  Each failing launch has exactly one failing thread, so the report is
deterministic on the GPU too (the first failure wins the record).  The kernels live
in ``kernels_debug.py``: pytest rewrites the ``assert`` statements of test modules,
kernels' included, into code no kernel may hold.
"""

from __future__ import annotations

import inspect
import os
import traceback

import numpy as np
import pytest
from kernels_debug import (
    KernelSaidNo,
    atomic_count,
    bare_assert,
    calls_device,
    checks_input,
    load_at,
    negative_index,
    raises_custom,
    raises_value_error,
    read_all,
    with_barrier,
    write_2d,
    write_all,
)

import cujit
from cujit import cuda
from cujit.diagnostics import KernelFailure

TARGETS = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=pytest.mark.gpu)]
CUJIT_SRC = os.path.dirname(os.path.abspath(cujit.__file__)) + os.sep


def where(fn, text: str) -> str:
    """``file:line:col`` of the first line of ``fn`` holding ``text``, and that line."""
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return (f"{inspect.getsourcefile(fn)}:{first + k}:{line.index(text) + 1}", line.strip())
    raise AssertionError(text)


def report(fn, text: str, message: str, kernel: str, thread, block) -> str:
    """numba's message: function, file, line, thread and block (listed z, y, x)."""
    loc, source = where(fn, text)
    file, line, _ = loc.rsplit(":", 2)
    tid, ctaid = list(reversed(thread)), list(reversed(block))
    return (
        f"In function {kernel!r}, file {file}, line {line}, tid={tid} ctaid={ctaid}: "
        f"{message}\n    {source}"
    )


def message_of(error: Exception) -> str:
    """The message after numba's prefix (function, file, line, tid, ctaid)."""
    first = str(error).splitlines()[0]
    assert first.startswith("In function "), first
    return first.partition("]: ")[2]


def jit(fn, target, debug=True, boundscheck=None):
    # As in numba, debug mode alone checks no array bounds on the GPU: the bounds
    # tests ask for them (the CPU target checks bounds by default).
    return cuda.jit(fn, target=target, debug=debug, boundscheck=boundscheck)


@pytest.mark.parametrize("target", TARGETS)
def test_out_of_bounds_write_names_line_thread_and_block(target):
    k = jit(write_all, target, boundscheck=True)
    x = np.zeros(11, np.float32)
    with pytest.raises(IndexError) as info:
        k[3, 4](x)  # global thread 11 = thread 3 of block 2 writes past the end
    assert str(info.value) == report(
        write_all,
        "x[i]",
        "index 11 is out of bounds for axis 0 with size 11",
        "write_all",
        (3, 0, 0),
        (2, 0, 0),
    )
    failure = info.value.kernel_failure
    assert isinstance(failure, KernelFailure)
    assert (failure.thread, failure.block) == ((3, 0, 0), (2, 0, 0))
    frames = [
        f
        for f in traceback.extract_tb(info.value.__traceback__)
        if os.path.abspath(f.filename).startswith(CUJIT_SRC)
    ]
    assert frames == []  # the user's frames only: the API boundary's re-raise is bare
    # The process (and the CUDA context) go on: the next launch runs and is right.
    y = np.zeros(12, np.float32)
    k[3, 4](y)
    assert (y == 1.0).all()
    k[1, 11](x)
    assert (x == 1.0).all()


@pytest.mark.parametrize("target", TARGETS)
def test_out_of_bounds_read(target):
    k = jit(read_all, target, boundscheck=True)
    x = np.arange(5, dtype=np.float32)
    out = np.full(6, -1.0, np.float32)
    with pytest.raises(IndexError) as info:
        k[1, 6](x, out)
    assert message_of(info.value) == "index 5 is out of bounds for axis 0 with size 5"
    assert info.value.kernel_failure.thread == (5, 0, 0)
    out = np.full(5, -1.0, np.float32)
    k[1, 5](x, out)
    assert (out == 2 * x).all()


@pytest.mark.parametrize("target", TARGETS)
def test_out_of_bounds_names_the_axis(target):
    k = jit(write_2d, target, boundscheck=True)
    x = np.zeros((4, 3), np.float32)
    with pytest.raises(IndexError) as info:
        k[(1, 1), (4, 4)](x)  # j = 3 is past axis 1 for every i: thread (i, 3) fails
    first = message_of(info.value)
    assert first == "index 3 is out of bounds for axis 1 with size 3"
    thread = info.value.kernel_failure.thread
    assert thread[1] == 3 and 0 <= thread[0] < 4 and thread[2] == 0


@pytest.mark.parametrize("target", TARGETS)
def test_negative_indices_follow_python(target):
    k = jit(negative_index, target, boundscheck=True)
    x = np.zeros(4, np.float32)
    k[1, 1](x, -4)  # x[-4] is x[0]
    assert x[0] == 5.0
    with pytest.raises(IndexError) as info:
        k[1, 1](x, -5)
    assert message_of(info.value) == "index -5 is out of bounds for axis 0 with size 4"


@pytest.mark.parametrize("target", TARGETS)
def test_atomic_out_of_bounds(target):
    k = jit(atomic_count, target, boundscheck=True)
    counts = np.zeros(4, np.int32)
    keys = np.array([0, 1, 2, 3, 2, 9], np.int64)
    with pytest.raises(IndexError) as info:
        k[1, 8](counts, keys)
    assert str(info.value) == report(
        atomic_count,
        "cuda.atomic.add",
        "index 9 is out of bounds for axis 0 with size 4",
        "atomic_count",
        (5, 0, 0),
        (0, 0, 0),
    )


@pytest.mark.parametrize("target", TARGETS)
def test_failed_assert_with_message(target):
    k = jit(checks_input, target)
    x = np.array([1, 2, -3, 4], np.float32)
    with pytest.raises(AssertionError) as info:
        k[1, 4](x)
    # A failed assert points at its condition (where Python's own traceback points).
    assert str(info.value) == report(
        checks_input, "x[i] >= 0", "negative input", "checks_input", (2, 0, 0), (0, 0, 0)
    )
    x = np.array([1, 2, 3, 4], np.float32)
    k[1, 4](x)
    assert (x == [2, 3, 4, 5]).all()


@pytest.mark.parametrize("target", TARGETS)
def test_failed_bare_assert(target):
    k = jit(bare_assert, target)
    x = np.array([-1, 2], np.float32)
    with pytest.raises(AssertionError) as info:
        k[1, 2](x)
    assert message_of(info.value) == "assertion failed"
    assert info.value.kernel_failure.thread == (0, 0, 0)


@pytest.mark.parametrize("target", TARGETS)
def test_raise_value_error(target):
    k = jit(raises_value_error, target)
    x = np.array([0, 1, 2, 3, 4], np.float32)
    with pytest.raises(ValueError) as info:
        k[1, 5](x)
    assert str(info.value) == report(
        raises_value_error,
        "raise Value",
        "three is not allowed",
        "raises_value_error",
        (3, 0, 0),
        (0, 0, 0),
    )


@pytest.mark.parametrize("target", TARGETS)
def test_raise_a_user_exception_class(target):
    k = jit(raises_custom, target)
    with pytest.raises(KernelSaidNo) as info:
        k[2, 2](np.array([0, 0, 0, -1], np.float32))
    assert message_of(info.value) == "no"
    assert info.value.kernel_failure.block == (1, 0, 0)


@pytest.mark.parametrize("target", TARGETS)
def test_failure_in_a_device_function(target):
    k = jit(calls_device, target, boundscheck=True)
    x = np.arange(4, dtype=np.float32)
    out = np.zeros(2, np.float32)
    with pytest.raises(IndexError) as info:
        k[1, 4](x, out)  # thread 3 loads x[4]
    assert str(info.value) == report(
        load_at.py_func,
        "a[i]",
        "index 4 is out of bounds for axis 0 with size 4",
        "calls_device",
        (3, 0, 0),
        (0, 0, 0),
    )


@pytest.mark.parametrize("target", TARGETS)
def test_kernel_with_a_barrier(target):
    k = jit(with_barrier, target, boundscheck=True)
    x = np.arange(4, dtype=np.float32)
    k[1, 4](x)
    assert (x == [3, 2, 1, 0]).all()
    with pytest.raises(IndexError) as info:
        k[1, 5](np.arange(5, dtype=np.float32))  # thread 4 stores past buf's 4 items
    assert message_of(info.value) == "index 4 is out of bounds for axis 0 with size 4"


def test_many_blocks_on_all_cores():
    """Large enough that the CPU target runs it on several host threads at once."""
    k = jit(write_all, "cpu")
    with pytest.raises(IndexError) as info:
        k[256, 257](np.zeros(256 * 257 - 1, np.float32))  # only the very last thread is past
    assert info.value.kernel_failure.block == (255, 0, 0)
    assert info.value.kernel_failure.thread == (256, 0, 0)


def test_cujit_debug_environment_variable(monkeypatch):
    monkeypatch.setenv("CUJIT_DEBUG", "1")
    k = cuda.jit(write_all, target="cpu")
    with pytest.raises(IndexError):
        k[1, 3](np.zeros(2, np.float32))


# -- without debug mode --------------------------------------------------------------


def test_assert_compiles_to_nothing_without_debug():
    k = cuda.jit(checks_input, target="cpu", boundscheck=False)
    x = np.array([1, -2], np.float32)
    k[1, 2](x)  # no exception: nothing is checked or reported
    assert x[0] == 2.0
    native = k.overloads[next(iter(k.overloads))].result.outputs["native"]
    assert "cujit_debug_error" not in native.llvm_ir and "cmpxchg" not in native.llvm_ir
    assert k.overloads[next(iter(k.overloads))].result.debug_sites == {}
    # The CPU target's default bounds checks report bounds only: the assert stays silent.
    default = jit(checks_input, "cpu", debug=False)
    y = np.array([1, -2], np.float32)
    default[1, 2](y)
    assert y[0] == 2.0
    sites = next(iter(default.overloads.values())).result.debug_sites
    assert {s.exc for s in sites.values()} == {IndexError}
    debug = jit(checks_input, "cpu")
    debug.compile("void(float32[:])")
    sites = next(iter(debug.overloads.values())).result.debug_sites
    assert sorted({(s.exc.__name__, s.message) for s in sites.values()}) == [
        ("AssertionError", "negative input"),
        ("IndexError", "index {index} is out of bounds for axis {axis} with size {size}"),
    ]


def test_ptx_has_no_record_without_debug():
    sig = "void(float32[:])"
    plain, _ = cuda.compile_ptx(checks_input, sig)
    checked, _ = cuda.compile_ptx(checks_input, sig, debug=True)
    assert "cujit_debug_error" not in plain and "atom" not in plain
    assert ".visible .global .align 8 .b8 cujit_debug_error[80];" in checked
    assert "atom.global.cas.b64" in checked
