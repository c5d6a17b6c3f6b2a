"""Unsupported constructs and type errors point at the user's line, with a caret,
and never mention cujit's own files."""

from __future__ import annotations

import inspect

import pytest

from cujit import cuda, float32
from cujit.diagnostics import CompileError


def marked_line(fn) -> int:
    """The line of ``fn`` that carries the ``# <-`` marker."""
    lines, first = inspect.getsourcelines(fn)
    for offset, text in enumerate(lines):
        if "# <-" in text:
            return first + offset
    raise AssertionError("no marker")


def uses_try(x):
    try:  # <-
        x[0] = 1.0
    except Exception:
        pass


def uses_generator(x):
    yield x[0]  # <-


def uses_string(x):
    s = "text"  # <-
    x[0] = len(s)


def calls_unknown(x):
    x[0] = sorted(x)  # <-


def dynamic_shape(x, n):
    buf = cuda.shared.array(n, float32)  # <-
    buf[0] = x[0]
    x[0] = buf[0]


def undefined_name(x):
    x[0] = not_defined_anywhere  # noqa: F821  # <-


def indexes_scalar(x, a):
    x[0] = a[0]  # <-


def too_few_indices(x):
    x[0] = 1.0  # <-


CASES = [
    (uses_try, "void(float32[:])", "try"),
    (uses_generator, "void(float32[:])", "generator"),
    (uses_string, "void(float32[:])", "string"),
    (calls_unknown, "void(float32[:])", "sorted"),
    (dynamic_shape, "void(float32[:], int64)", "constant"),
    (undefined_name, "void(float32[:])", "not_defined_anywhere"),
    (indexes_scalar, "void(float32[:], float32)", "index"),
    (too_few_indices, "void(float32[:, :])", "ind"),
]


@pytest.mark.parametrize("fn,sig,words", CASES, ids=[c[0].__name__ for c in CASES])
def test_error_points_at_user_line(fn, sig, words):
    with pytest.raises(CompileError) as info:
        cuda.compile_ptx(fn, sig)
    err = info.value
    line = marked_line(fn)
    assert err.loc is not None and err.loc.line == line, str(err)
    text = str(err)
    assert f"{__file__}:{line}:" in text.splitlines()[0]
    assert words.lower() in text.lower()
    source = inspect.getsourcelines(fn)[0][line - fn.__code__.co_firstlineno].strip()
    assert source in text and "^" in text
    assert "cujit/" not in text.replace(__file__, "")
