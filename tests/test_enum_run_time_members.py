"""Enum members held at run time (types.EnumMember): kernel arguments, members merged
from different paths and returned by device functions, compared as Python compares
them (the expected values are Python's own answers to the same expressions)."""

from __future__ import annotations

from enum import Enum, IntEnum

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import CujitError, TypingError
from cujit.types import float64, int64, typeof
from cujit.types.enums import EnumMember

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


class Fruit(Enum):
    apple = 10
    pear = 20
    plum = 30


class Point(Enum):
    origin = (0.0, 0.0)
    unit = (1.0, 0.0)
    diag = (1.0, 1.0)


class Level(IntEnum):
    low = 1
    mid = 5
    high = 9


class Code(IntEnum):
    ok = 5
    bad = 7


class Name(Enum):
    a = "x"


def _compare(a, b, out):
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b


PAIRS = [
    (Fruit.apple, Fruit.apple),
    (Fruit.apple, Fruit.plum),
    (Point.unit, Point.unit),
    (Point.unit, Point.diag),  # first items equal, second not
    (Level.mid, Code.ok),  # IntEnum members of two classes with one value
    (Level.low, Code.bad),
    (Fruit.pear, Level.mid),
    (Level.high, Level.high),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("a,b", PAIRS, ids=str)
def test_comparisons_give_pythons_answers(target, a, b):
    k = cuda.jit(target=target)(_compare)
    got = np.array([True, False, True, False])  # poison: the opposite of a == b twice
    got[:] = not (a == b)
    expect = np.zeros(4, np.bool_)
    _compare(a, b, expect)
    k[1, 1](a, b, got)
    assert got.tolist() == expect.tolist()


def test_argument_types():
    assert typeof(Fruit.pear) == EnumMember(Fruit, int64)
    assert typeof(Level.mid) == EnumMember(Level, int64) and typeof(Level.mid).is_int
    assert typeof(Point.unit).dtype.items == (float64, float64)
    with pytest.raises(TypeError, match="must be a number or a tuple of numbers"):
        typeof(Name.a)


@pytest.mark.parametrize("target", TARGETS)
def test_a_member_against_a_constant_member(target):
    @cuda.jit(target=target)
    def k(f, out):
        out[0] = f == Fruit.pear
        out[1] = f is Fruit.plum
        out[2] = f != Fruit.apple

    for f in Fruit:
        out = np.array([f != Fruit.pear, f is not Fruit.plum, f == Fruit.apple])
        k[1, 1](f, out)
        assert out.tolist() == [f == Fruit.pear, f is Fruit.plum, f != Fruit.apple]


@pytest.mark.parametrize("target", TARGETS)
def test_an_int_enum_argument_is_its_integer_in_arithmetic(target):
    @cuda.jit(target=target)
    def k(lv, x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * lv + (lv > Level.low) - Code.bad

    x = np.arange(-4, 12, dtype=np.int64)
    for lv in Level:
        out = np.full(x.size, -999, np.int64)
        k[1, 32](lv, x, out)
        assert np.array_equal(out, x * int(lv) + int(lv > Level.low) - 7)


@cuda.jit(device=True)
def _pick(flag):
    return Fruit.plum if flag else Fruit.apple


@cuda.jit(device=True)
def _pick_by_returns(n):
    if n > 1:
        return Point.diag
    if n > 0:
        return Point.unit
    return Point.origin


@pytest.mark.parametrize("target", TARGETS)
def test_device_functions_return_members_chosen_at_run_time(target):
    @cuda.jit(target=target)
    def k(flags, ns, out):
        i = cuda.grid(1)
        if i < flags.size:
            f = _pick(flags[i])
            p = _pick_by_returns(ns[i])
            out[i, 0] = f == Fruit.plum
            out[i, 1] = f is Fruit.apple
            out[i, 2] = p == Point.unit
            out[i, 3] = p is Point.diag

    flags = np.array([True, False, False, True, True])
    ns = np.array([2, 1, 0, -3, 1], np.int64)
    out = np.zeros((5, 4), np.bool_)
    out[:] = True
    k[1, 8](flags, ns, out)
    pf = [Fruit.plum if f else Fruit.apple for f in flags]
    pp = [Point.diag if n > 1 else Point.unit if n > 0 else Point.origin for n in ns]
    expect = [
        [f == Fruit.plum, f is Fruit.apple, p == Point.unit, p is Point.diag]
        for f, p in zip(pf, pp, strict=True)
    ]
    assert out.tolist() == expect


def test_members_of_a_plain_enum_are_not_ordered():
    def k(a, b, out):
        out[0] = a < b

    with pytest.raises(TypingError, match="members of Fruit are not ordered"):
        cuda.jit(target="cpu")(k)[1, 1](Fruit.apple, Fruit.pear, np.zeros(1, np.bool_))


def test_a_member_with_a_string_value_cannot_be_passed():
    def k(a, out):
        out[0] = a == Name.a

    with pytest.raises((TypeError, CujitError), match="a number or a tuple of numbers"):
        cuda.jit(target="cpu")(k)[1, 1](Name.a, np.zeros(1, np.bool_))


def test_numbas_enum_member_types_convert():
    numba_types = pytest.importorskip("numba.core.types")
    from cujit.types.foreign import from_numba_type

    assert from_numba_type(numba_types.IntEnumMember(Level, numba_types.int64)) == typeof(Level.low)
    assert from_numba_type(numba_types.EnumMember(Fruit, numba_types.int64)) == typeof(Fruit.plum)


@cuda.jit(device=True)
def _scaled(lv, fruit):
    return lv * 2 if fruit == Fruit.apple else lv  # an IntEnum member meets an int


@pytest.mark.parametrize("target", TARGETS)
def test_an_int_enum_member_merged_with_a_number_is_an_integer(target):
    @cuda.jit(target=target)
    def k(lv, fruit, out):
        out[0] = _scaled(lv, fruit)

    for lv in Level:
        for fruit in (Fruit.apple, Fruit.pear):
            out = np.full(1, -1, np.int64)
            k[1, 1](lv, fruit, out)
            assert out[0] == (int(lv) * 2 if fruit == Fruit.apple else int(lv))
