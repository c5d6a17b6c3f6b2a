"""Deep programs, generated: a chain of device functions each calling the one before, and
kernels of many statements nested as deep as Python allows (ifs, loops, an ``elif`` chain,
a ``sum`` of many terms, a condition of many ``and``s).

Each generator returns the source of a module whose ``kern(out, x)`` (int64 arrays) writes
``out[0]``; ``load`` imports it from a file, so that cujit's messages can show its lines,
and runs as plain Python to give the expected answer (``expected``).  Used by
``tests/test_deep_programs.py`` and ``bench/deep_programs_bench.py``.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import sys
import tempfile

import numpy as np

# CPython's own compiler recurses over a long expression or ``elif`` chain: the source
# of the largest programs compiles only under a higher limit than the default (cujit then
# compiles the function's bytecode under the caller's limit).
SOURCE_RECURSION_LIMIT = 50_000
# Python's limits: 100 levels of indentation, 20 statically nested blocks (loops).
IF_DEPTH = 90
LOOP_DEPTH = 18

_names = itertools.count()


def chain_source(n: int) -> str:
    """``f0 .. f{n-1}``, each ``@cuda.jit(device=True)`` calling the one before: ``f{k}(v)
    = f{k-1}(v) + k % 7``; the kernel stores ``f{n-1}(x[0])``."""
    lines = ["from cujit import cuda", "", "", "@cuda.jit(device=True)", "def f0(v):"]
    lines += ["    return v + 1", ""]
    for k in range(1, n):
        lines += [
            "",
            "@cuda.jit(device=True)",
            f"def f{k}(v):",
            f"    return f{k - 1}(v) + {k % 7}",
        ]
        lines.append("")
    lines += ["", "def kern(out, x):", f"    out[0] = f{n - 1}(x[0])", ""]
    return "\n".join(lines)


def _statement(k: int) -> str:
    return f"s = s + v * {k % 5 + 1} - {k % 3}"


def ifs_source(n: int) -> str:
    """``n`` statements in ifs nested ``IF_DEPTH`` deep (each level's share before the
    next ``if``; the conditions hold for ``x[0]`` at least ``IF_DEPTH``)."""
    per = max(1, n // IF_DEPTH)
    lines = ["def kern(out, x):", "    v = x[0]", "    s = 0"]
    k = 0
    for depth in range(IF_DEPTH):
        pad = "    " * (depth + 1)
        lines.append(f"{pad}if v > {depth}:")
        for _ in range(per if depth < IF_DEPTH - 1 else max(1, n - k)):
            lines.append(f"{pad}    {_statement(k)}")
            k += 1
    lines += ["    out[0] = s", ""]
    return "\n".join(lines)


def loops_source(n: int) -> str:
    """``n`` statements in ``for`` loops nested ``LOOP_DEPTH`` deep, each over
    ``range(x[1])`` (a run-time count: 1 keeps the plain-Python reference quick)."""
    per = max(1, n // LOOP_DEPTH)
    lines = ["def kern(out, x):", "    v = x[0]", "    s = 0"]
    k = 0
    for depth in range(LOOP_DEPTH):
        pad = "    " * (depth + 1)
        lines.append(f"{pad}for i{depth} in range(x[1]):")
        for _ in range(per if depth < LOOP_DEPTH - 1 else max(1, n - k)):
            lines.append(f"{pad}    {_statement(k)} + i{depth}")
            k += 1
    lines += ["    out[0] = s", ""]
    return "\n".join(lines)


def elif_source(n: int) -> str:
    """An ``if``/``elif`` chain of ``n // 2`` tests, each with one assignment: ``n``
    statements, the chain nested ``n // 2`` deep in Python's syntax tree; where this
    Python's own compiler refuses that depth (CPython 3.12 and later have a fixed C
    recursion limit), chains of 500 tests one after another."""
    m = max(1, n // 2)
    for run in (m, 500):
        lines = ["def kern(out, x):", "    v = x[0]", "    s = -1"]
        for k in range(m):
            word = "if" if k % run == 0 else "elif"
            lines += [f"    {word} v == {k}:", f"        s = {k * 3 % 11 if k else 7}"]
        lines += ["    out[0] = s", ""]
        source = "\n".join(lines)
        if _compiles(source):
            break
    return source


def _compiles(source: str) -> bool:
    """Whether this Python's own compiler takes ``source`` (at the raised limit)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, SOURCE_RECURSION_LIMIT))
    try:
        compile(source, "<deep>", "exec")
        return True
    except RecursionError:
        return False
    finally:
        sys.setrecursionlimit(limit)


def sum_source(n: int) -> str:
    """One expression: a sum of ``n`` terms, flat where this Python's own compiler takes
    it (a flat sum nests ``n`` deep in the syntax tree), else in groups of 100 terms."""
    terms = [f"v * {k % 9 + 1}" if k % 2 else f"{k % 13}" for k in range(n)]
    flat = " + ".join(terms)
    source = "\n".join(["def kern(out, x):", "    v = x[0]", f"    out[0] = {flat}", ""])
    if _compiles(source):
        return source
    groups = (" + ".join(terms[i : i + 100]) for i in range(0, n, 100))
    grouped = " + ".join(f"({g})" for g in groups)
    return "\n".join(["def kern(out, x):", "    v = x[0]", f"    out[0] = {grouped}", ""])


def and_source(n: int) -> str:
    """One condition: ``n`` comparisons joined by ``and`` (``n`` branches)."""
    cond = " and ".join(f"v > {k % 50 - 60}" for k in range(n))
    lines = ["def kern(out, x):", "    v = x[0]", "    s = 0", f"    if {cond}:", "        s = 1"]
    lines += ["    out[0] = s", ""]
    return "\n".join(lines)


SHAPES = {
    "ifs": ifs_source,
    "loops": loops_source,
    "elif": elif_source,
    "sum": sum_source,
    "and": and_source,
}


def load(source: str, stem: str = "deep"):
    """The module of ``source``, imported from a new file (its functions' lines are
    there for cujit's messages)."""
    name = f"_cujit_{stem}_{os.getpid()}_{next(_names)}"
    folder = tempfile.mkdtemp(prefix="cujit-deep-")
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, SOURCE_RECURSION_LIMIT))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.setrecursionlimit(limit)
    return module


def arguments(shape: str) -> tuple[np.ndarray, np.ndarray]:
    """``(out, x)`` for a kernel: ``x[0]`` takes every ``if`` and one ``elif``; ``x[1]``
    runs each loop once."""
    x = np.array([IF_DEPTH + 3 if shape != "elif" else 5, 1], dtype=np.int64)
    return np.zeros(1, dtype=np.int64), x


def expected(module, shape: str) -> int:
    """What ``module.kern`` stores, run as plain Python (a chain's device functions
    called through their ``py_func``)."""
    out, x = arguments(shape)
    if shape == "chain":
        n = sum(1 for k in dir(module) if k.startswith("f") and k[1:].isdigit())
        v = int(x[0])
        return v + 1 + sum(k % 7 for k in range(1, n))
    module.kern(out, x)
    return int(out[0])
