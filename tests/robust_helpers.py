"""Shared checks of the robustness suites (tests/test_robustness_*.py).

Every case is a bad input or launch.  ``expect_failure`` runs one and checks what
each case must give: the expected error class, the user's ``file:line`` where the
fault is in the user's source, no path of cujit's own files, and afterwards a
process that still compiles and runs a correct kernel on the CPU target.
"""

from __future__ import annotations

import inspect

import numpy as np
from internal_paths import internal_paths

from cujit import cuda

MARK = "# <-"


def marked_line(fn) -> int:
    """The line of ``fn``'s source that carries the ``# <-`` marker."""
    lines, first = inspect.getsourcelines(fn)
    (k,) = [k for k, text in enumerate(lines) if MARK in text]
    return first + k


def _saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


_compiled = cuda.jit(_saxpy, target="cpu")
_rng = np.random.default_rng(16)


def still_works(fresh: bool = False) -> None:
    """The process runs a correct kernel: the shared one, or a newly compiled one."""
    kernel = cuda.jit(_saxpy, target="cpu") if fresh else _compiled
    n = int(_rng.integers(100, 300))
    x, y = _rng.random(n), _rng.random(n)
    out = np.full(n, np.nan)  # poisoned: every element must be written
    kernel[(n + 63) // 64, 64](1.5, x, y, out)
    np.testing.assert_allclose(out, 1.5 * x + y, rtol=1e-15)


def expect_failure(run, error, where: tuple[str, int] | None, words: str = ""):
    """Run ``run``, which must raise ``error``; return it after the checks."""
    try:
        run()
    except error as exc:
        caught = exc
    else:
        raise AssertionError(f"no {error.__name__} raised")
    text = str(caught)
    assert not internal_paths(text), text
    if where is not None:
        file, line = where
        # file:line:col for a compile error; numba's "file F, line N," for a kernel's
        assert f"{file}:{line}:" in text or f"file {file}, line {line}," in text, text
    assert words in text, text
    still_works()
    return caught
