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
    assert len(ROWS) > 60 and any(ok for _, ok in ROWS) and any(not ok for _, ok in ROWS)


@pytest.mark.parametrize("name", sorted({n for n, ok in ROWS if ok} - {"int32"}))
def test_supported_names_exist(name):
    assert functools.reduce(getattr, name.split("."), cuda) is not None


@pytest.mark.parametrize("name", sorted(n for n, ok in ROWS if not ok))
def test_unsupported_names_say_so(name):
    assert name in cuda.NOT_SUPPORTED
    with pytest.raises(AttributeError, match="not supported by cujit yet"):
        getattr(cuda, name)


def test_unsupported_name_in_a_kernel_is_a_compile_error_at_its_line():
    def lib_sin(x):
        x[0] = cuda.profile_start()

    with pytest.raises(UnsupportedError) as info:
        cuda.compile_ptx(lib_sin, "void(float32[:])")
    assert info.value.loc.line == lib_sin.__code__.co_firstlineno + 1
    assert "'profile_start' (profiler control)" in str(info.value)
