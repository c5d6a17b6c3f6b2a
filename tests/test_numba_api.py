"""docs/numba-api.md tells the truth: 'yes' names exist in cujit.cuda, 'no' names raise
an error saying they are not supported, on the host and inside a kernel."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from cujit import cuda
from cujit.diagnostics import UnsupportedError

DOC = Path(__file__).resolve().parent.parent / "docs" / "numba-api.md"


def rows():
    out = []
    for line in DOC.read_text().splitlines():
        m = re.match(r"\| (.+?) \| (yes|no) \|", line)
        if m:
            names = re.findall(r"`([A-Za-z_0-9.]+)`", m.group(1))  # cuda.types.X: types.X
            out.extend((name, m.group(2) == "yes") for name in names)
    return out


ROWS = rows()


def test_the_table_is_read():
    assert len(ROWS) > 60 and any(ok for _, ok in ROWS)


@pytest.mark.parametrize("name", sorted({n for n, ok in ROWS if ok} - {"int32"}))
def test_supported_names_exist(name):
    assert functools.reduce(getattr, name.split("."), cuda) is not None


def test_the_unsupported_names_are_the_tables_no_rows():
    # Every 'no' row is refused by name, and nothing is refused that the table calls
    # supported (the table may have no 'no' row at all).
    assert {n for n, ok in ROWS if not ok} == set(cuda.NOT_SUPPORTED)


@pytest.fixture
def a_gap(monkeypatch):
    """A numba.cuda name cujit refuses, as a 'no' row of the table would make one."""
    monkeypatch.setitem(cuda.NOT_SUPPORTED, "frobnicate", "an example gap")
    return "frobnicate"


def test_an_unsupported_name_says_so_on_the_host(a_gap):
    with pytest.raises(AttributeError, match="'frobnicate' .an example gap. is not supported"):
        getattr(cuda, a_gap)


def test_unsupported_name_in_a_kernel_is_a_compile_error_at_its_line(a_gap):
    def lib_sin(x):
        x[0] = cuda.frobnicate()

    with pytest.raises(UnsupportedError) as info:
        cuda.compile_ptx(lib_sin, "void(float32[:])")
    assert info.value.loc.line == lib_sin.__code__.co_firstlineno + 1
    assert "'frobnicate' (an example gap)" in str(info.value)
