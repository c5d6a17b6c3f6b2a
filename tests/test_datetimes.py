"""datetime64 and timedelta64 arrays and scalars as kernel arguments: arithmetic with units
meeting in the finer one, NaT kept as NumPy keeps it, comparisons, stores that convert the
unit, and the errors for operations NumPy refuses; on the CPU target against NumPy, and on
the GPU (marked gpu)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError
from cujit.types import Array, typeof
from cujit.types.datetimes import datetime_type

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
NAT = np.datetime64("NaT")


def _dates(n=40, seed=0, unit="D"):
    rng = np.random.default_rng(seed)
    d = np.datetime64("2001-03-04", unit) + rng.integers(-5000, 5000, n).astype(f"m8[{unit}]")
    d[[3, 17]] = NAT
    return d


def test_types_carry_the_unit():
    assert typeof(np.zeros(2, "M8[h]")) == Array(datetime_type("M", "h"), 1, "C")
    assert typeof(np.timedelta64(3, "ms")) == datetime_type("m", "ms")
    assert str(datetime_type("m", "")) == "timedelta64"
    assert datetime_type("M", "D").dtype == np.dtype("M8[D]")


@pytest.mark.parametrize("target", TARGETS)
def test_arithmetic_meets_in_the_finer_unit_and_keeps_nat(target):
    @cuda.jit(target=target)
    def k(days, hours, step, diff, later, scaled, halved):
        i = cuda.grid(1)
        if i < days.size:
            diff[i] = hours[i] - days[i]  # timedelta64[h]
            later[i] = days[i] + step  # datetime64[h]: D + h
            scaled[i] = (hours[i] - days[i]) * 3
            halved[i] = (hours[i] - days[i]) // -7  # NumPy truncates toward zero

    days = _dates()
    hours = _dates(seed=1, unit="h")
    hours[5] = NAT
    step = np.timedelta64(-30, "h")
    outs = [
        np.zeros(days.size, "m8[h]"),
        np.zeros(days.size, "M8[h]"),
        np.zeros(days.size, "m8[h]"),
        np.zeros(days.size, "m8[h]"),
    ]
    k[2, 32](days, hours, step, *outs)
    np.testing.assert_array_equal(outs[0], hours - days)
    np.testing.assert_array_equal(outs[1], days + step)
    np.testing.assert_array_equal(outs[2], (hours - days) * 3)
    np.testing.assert_array_equal(outs[3], (hours - days) // -7)
    assert np.isnat(outs[0][[3, 5, 17]]).all() and np.isnat(outs[1][[3, 17]]).all()


@pytest.mark.parametrize("target", TARGETS)
def test_comparisons_and_nat(target):
    @cuda.jit(target=target)
    def k(a, b, lt, eq, ne):
        i = cuda.grid(1)
        if i < a.size:
            lt[i] = a[i] < b[i]
            eq[i] = a[i] == b[i]
            ne[i] = a[i] != b[i]

    a = _dates()
    b = a.astype("M8[s]")  # the same instants, in seconds
    b[::4] += np.timedelta64(1, "s")
    outs = [np.zeros(a.size, bool) for _ in range(3)]
    k[2, 32](a, b, *outs)
    np.testing.assert_array_equal(outs[0], a < b)
    np.testing.assert_array_equal(outs[1], a == b)
    np.testing.assert_array_equal(outs[2], a != b)
    assert outs[2][3] and not outs[1][3] and not outs[0][3]  # NaT


@pytest.mark.parametrize("target", TARGETS)
def test_stores_convert_the_unit(target):
    @cuda.jit(target=target)
    def k(src, finer, coarser, span, span_days):
        i = cuda.grid(1)
        if i < src.size:
            finer[i] = src[i]
            coarser[i] = src[i]
            span_days[i] = span[i]

    src = _dates(unit="h") - np.timedelta64(40 * 365 * 24, "h")  # before 1970 too
    span = src - np.datetime64("1969-06-01T05", "h")
    finer, coarser = np.zeros(src.size, "M8[s]"), np.zeros(src.size, "M8[D]")
    span_days = np.zeros(src.size, "m8[D]")
    k[2, 32](src, finer, coarser, span, span_days)
    assert (src < np.datetime64("1970-01-01", "h")).sum() > 5
    np.testing.assert_array_equal(finer, src.astype("M8[s]"))
    np.testing.assert_array_equal(coarser, src.astype("M8[D]"))  # floors, NaT kept
    np.testing.assert_array_equal(span_days, span.astype("m8[D]"))


def _line_of(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, text in enumerate(lines) if marker in text)


def _adds_dates(a, out):
    out[0] = a[0] + a[1]  # <- dates


def _compares_kinds(a, d, out):
    out[0] = a[0] < d[0]  # <- kinds


@pytest.mark.parametrize(
    "fn,args,marker,words",
    [
        (
            _adds_dates,
            (_dates(), np.zeros(1, "M8[D]")),
            "# <- dates",
            "unsupported operand types for +: 'datetime64[D]' and 'datetime64[D]'",
        ),
        (
            _compares_kinds,
            (_dates(), np.zeros(1, "m8[D]"), np.zeros(1, bool)),
            "# <- kinds",
            "datetimes compare with datetimes",
        ),
    ],
)
def test_refused_operations_are_errors_at_the_line(fn, args, marker, words):
    with pytest.raises(TypingError) as info:
        cuda.jit(fn, target="cpu")[1, 1](*args)
    assert words in str(info.value)
    assert f"{__file__}:{_line_of(fn, marker)}:" in str(info.value)
