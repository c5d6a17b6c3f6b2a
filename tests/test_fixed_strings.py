"""Fixed-size string arrays and record fields (NumPy's ``S<n>`` and ``U<n>``): constant
``str``/``bytes`` stored (truncated and zero-padded as NumPy stores them), strings of the
same type copied, and the errors for what does not convert; on the CPU target against
NumPy, and on the GPU (marked gpu)."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError
from cujit.types import CharSeq, from_dtype

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def test_string_dtypes_are_char_sequences():
    assert from_dtype("S7") == CharSeq("S", 7) and from_dtype("S7").itemsize == 7
    assert from_dtype("<U5") == CharSeq("U", 5) and from_dtype("<U5").itemsize == 20
    assert CharSeq("U", 2).dtype == np.dtype("<U2")


@pytest.mark.parametrize("target", TARGETS)
def test_constants_stored_into_string_arrays(target):
    @cuda.jit(target=target)
    def k(u, s, short):
        i = cuda.grid(1)
        if i < u.size - 1:  # the last element keeps its old value
            u[i] = "XYZ\u00e9"
            s[i] = b"XYZ"
            short[i] = "longer than two"

    u = np.array(["poison-poison"] * 5, "<U12")
    s = np.array([b"poison-poison"] * 5, "S12")
    short = np.array(["pp"] * 5, "S2")
    expect = u.copy(), s.copy(), short.copy()
    k[1, 8](u, s, short)
    expect[0][:-1], expect[1][:-1], expect[2][:-1] = "XYZ\u00e9", b"XYZ", b"lo"
    for got, want in zip((u, s, short), expect, strict=True):
        assert got.tobytes() == want.tobytes()  # padding zeroed as NumPy does


@pytest.mark.parametrize("target", TARGETS)
def test_string_fields_of_records(target):
    dt = np.dtype([("x", np.int32), ("name", "<U6"), ("tag", "S3")], align=True)

    @cuda.jit(target=target)
    def k(a, names):
        a[0]["x"] = 1
        a[0]["name"] = "ABC"
        a[1].tag = b"XYZW"
        a[1].name = a[0].name  # the same type: copied
        names[1] = names[0]

    a = np.zeros(3, dt)
    a["name"] = "zzzzzz"
    names = np.array(["first", "second"], "<U7")
    expect = a.copy()
    k[1, 1](a, names)
    expect[0]["x"], expect[0]["name"] = 1, "ABC"
    expect[1]["tag"], expect[1]["name"] = b"XYZ", "ABC"
    np.testing.assert_array_equal(a, expect)
    np.testing.assert_array_equal(names, ["first", "first"])


def _non_ascii_bytes(s):
    s[0] = "\u00e9"


def _number_into_string(s):
    s[0] = 3


@pytest.mark.parametrize(
    "fn,words",
    [(_non_ascii_bytes, "a non-ASCII string"), (_number_into_string, "cannot store int64")],
)
def test_what_does_not_convert_is_refused(fn, words):
    with pytest.raises(TypingError, match=words) as info:
        cuda.jit(fn, target="cpu")[1, 1](np.zeros(2, "S4"))
    assert f"{__file__}:" in str(info.value)
