"""Debug mode with numba's semantics (on the CPU target; the GPU runs the same checks):
its message format, float division by zero, a run-time index past a tuple, the ``in``
operator on tuples, and numba's warning names."""

from __future__ import annotations

import itertools
import re
import warnings
from textwrap import dedent

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import NumbaDebugInfoWarning, NumbaInvalidConfigWarning

PREFIX = re.compile(
    r"^In function '(\w+)', file (\S+), line (\d+), tid=\[(\d+), (\d+), (\d+)\] "
    r"ctaid=\[(\d+), (\d+), (\d+)\]: (.*)$"
)


def cpu_debug(fn):
    return cuda.jit(fn, target="cpu", debug=True)


def line_of(fn, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, ln in enumerate(lines) if text in ln)


def fails_at(grid_block_thread):
    def kernel(out):
        if cuda.blockIdx.y == 1 and cuda.threadIdx.x == 2 and cuda.threadIdx.z == 1:
            raise ValueError("stop here")
        out[0] = 1.0

    return kernel


def test_the_message_is_numbas_with_thread_and_block_listed_z_y_x():
    fn = fails_at(None)
    k = cpu_debug(fn)
    with pytest.raises(ValueError) as info:
        k[(1, 2, 1), (3, 1, 2)](np.zeros(1))
    first, source = str(info.value).splitlines()
    m = PREFIX.match(first)
    assert m, first
    assert m.group(1) == "kernel" and m.group(2) == fn.__code__.co_filename
    assert int(m.group(3)) == line_of(fn, "raise ValueError")
    assert [int(g) for g in m.groups()[3:6]] == [1, 0, 2]  # threadIdx z, y, x
    assert [int(g) for g in m.groups()[6:9]] == [0, 1, 0]  # blockIdx z, y, x
    assert m.group(10) == "stop here"
    assert source.strip() == 'raise ValueError("stop here")'


def true_division(r, x, y):
    r[0] = y[0] / x[0]
    r[1] = y[0]


def floor_division(r, x, y):
    r[0] = y[0] // x[0]
    r[1] = y[0]


def modulo(r, x, y):
    r[0] = y[0] % x[0]
    r[1] = y[0]


@pytest.mark.parametrize(
    "fn,message",
    [
        (true_division, "float division by zero"),
        (floor_division, "float floor division by zero"),
        (modulo, "float modulo by zero"),
    ],
)
def test_float_division_by_zero_raises_and_stops_the_thread(fn, message):
    r = np.full(2, -5.0)
    with pytest.raises(ZeroDivisionError) as info:
        cpu_debug(fn)[1, 1](r, np.zeros(1), np.full(1, 3.0))
    assert PREFIX.match(str(info.value).splitlines()[0]).group(10) == message
    np.testing.assert_array_equal(r, [-5.0, -5.0])  # nothing after the division ran


@pytest.mark.parametrize("fn", [true_division, floor_division, modulo])
def test_float_division_by_a_non_zero_divisor_gives_pythons_result(fn):
    x, y = np.array([-2.5]), np.array([7.0])
    r = np.full(2, -5.0)
    cpu_debug(fn)[1, 1](r, x, y)
    op = {true_division: float.__truediv__, floor_division: float.__floordiv__}.get(
        fn, float.__mod__
    )
    assert r[0] == op(7.0, -2.5) and r[1] == 7.0


def test_without_debug_float_division_by_zero_is_ieee():
    r = np.full(2, -5.0)
    cuda.jit(true_division, target="cpu")[1, 1](r, np.zeros(1), np.full(1, 3.0))
    assert np.isinf(r[0]) and r[1] == 3.0


def shape_at(ary, out):
    x = cuda.threadIdx.x
    if x == 2:
        ary.shape[-x - 1]  # an unread expression: debug builds still check it
    out[x] = ary.shape[-1 - (x % 2)] if x < 2 else -1


def test_a_run_time_index_past_a_tuple_is_pythons_index_error():
    out = np.full(3, -9, np.int64)
    with pytest.raises(IndexError) as info:
        cpu_debug(shape_at)[1, 3](np.zeros((4, 6)), out)
    first = str(info.value).splitlines()[0]
    m = PREFIX.match(first)
    assert m.group(10) == "tuple index out of range"
    assert int(m.group(3)) == line_of(shape_at, "ary.shape[-x - 1]")
    assert m.group(6) == "2"  # threadIdx.x
    np.testing.assert_array_equal(out[:2], [6, 4])  # the threads in range read the shape


def membership(v, out):
    i = cuda.grid(1)
    if i < v.size:
        out[i, 0] = v[i] in (2, 3)
        out[i, 1] = v[i] not in (2.5, -1, 7)
        out[i, 2] = v[i] in ()
        out[i, 3] = 1 if v[i] in (True, 4) else 0


@pytest.mark.parametrize("debug", [False, True])
def test_in_and_not_in_on_tuples_follow_python(debug):
    v = np.array([-1, 0, 1, 2, 3, 4, 7, 9], np.int64)
    out = np.full((v.size, 4), -3, np.int64)
    cuda.jit(membership, target="cpu", debug=debug)[1, 16](v, out)
    want = [
        [x in (2, 3), x not in (2.5, -1, 7), x in (), 1 if x in (True, 4) else 0]
        for x in v.tolist()
    ]
    np.testing.assert_array_equal(out, np.array(want, np.int64))


def test_debug_with_lineinfo_warns_with_numbas_warning_class():
    with pytest.warns(NumbaInvalidConfigWarning, match="mutually exclusive"):
        cuda.jit(debug=True, lineinfo=True)(true_division)


@pytest.mark.parametrize("debug,lineinfo", itertools.product([True, False], [True, False]))
def test_debug_info_without_source_warns(debug, lineinfo):
    scope = {"cuda": cuda}
    exec(dedent("def made(x):\n    x[0] = 1.0\n"), scope)
    k = cuda.jit(scope["made"], target="cpu", debug=debug, lineinfo=lineinfo and not debug)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NumbaDebugInfoWarning)
        x = np.zeros(1)
        k[1, 1](x)
    found = [w for w in caught if w.category is NumbaDebugInfoWarning]
    assert x[0] == 1.0
    if not (debug or lineinfo):
        assert found == []
        return
    assert len(found) == 1
    text = str(found[0].message)
    assert "Could not find source for function" in text and str(scope["made"]) in text
