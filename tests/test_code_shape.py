"""The code's shape rules that ruff alone does not keep.

ruff (pyproject.toml) limits complexity to 10; a function above it carries
``# noqa: C901 -- <reason>``.  This file checks that every such exception states its reason
and is listed in docs/architecture.md ("Lint exceptions"), and that no function of
src/cujit is over 80 lines unless ``LONG_FUNCTIONS`` below says why.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINTED = ("src", "tests", "bench", "tools")
MAX_LINES = 80

# Functions of src/cujit over MAX_LINES lines, by (path under src/cujit, qualified name),
# with the reason each stays whole.
LONG_FUNCTIONS = {
    ("targets/cpu/guard.py", "_support_module"): "emits the CPU support module's four functions",
    ("ir/analysis.py", "_proved_adds"): "one range analysis whose sweeps share one map",
    ("targets/cpu/grid_scheduler.py", "run_grid"): "emits the grid scheduler's LLVM loop",
    ("targets/cpu/warp_scheduler.py", "run_warp_block"): "emits one block's warp scheduler loop",
    (
        "bytecode/decode.py",
        "_translate",
    ): "one branch per CPython opcode family; stage 1 keeps every version difference here",
    (
        "targets/cpu/runner.py",
        "build_runner",
    ): "one IR builder emits the block runner of every CPU scheduler",
    (
        "targets/cpu/warp_scheduler.py",
        "run_warp_grid",
    ): "emits the whole-grid warp scheduler loop as one LLVM function body",
    (
        "targets/cpu/warp_settle.py",
        "settle_function",
    ): "emits one LLVM function with one IRBuilder; its blocks read as the settle algorithm",
}

_NOQA_C901 = re.compile(r"#\s*noqa:[^#]*\bC901\b(?P<rest>.*)")
_REASON = re.compile(r"^\s*--\s*(?P<reason>\S.*)$")


def noqa_c901(source: str) -> list[tuple[int, str | None]]:
    """(line, reason or None) of every ``# noqa: C901`` comment in ``source``."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT:
            continue
        m = _NOQA_C901.search(tok.string)
        if m:
            r = _REASON.match(m.group("rest"))
            reason = r.group("reason").strip() if r else None
            # A reason is words, not a marker: at least three of them.
            found.append((tok.start[0], reason if reason and len(reason.split()) >= 3 else None))
    return found


def functions(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length in lines) of every function in ``source``."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def c901_exceptions() -> list[tuple[str, str, str | None]]:
    """(path, function, reason) of every complexity exception of the linted tree."""
    out = []
    for top in LINTED:
        for path in sorted((ROOT / top).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            if "C901" not in source:
                continue
            starts = {line: name for name, line, _ in functions(source)}
            for line, reason in noqa_c901(source):
                rel = path.relative_to(ROOT).as_posix()
                out.append((rel, starts.get(line, f"<line {line}: not a def>"), reason))
    return out


def long_functions(limit: int = MAX_LINES) -> dict[tuple[str, str], int]:
    """Functions of src/cujit over ``limit`` lines, with their length."""
    base = ROOT / "src" / "cujit"
    out = {}
    for path in sorted(base.rglob("*.py")):
        for name, _, n in functions(path.read_text(encoding="utf-8")):
            if n > limit:
                out[(path.relative_to(base).as_posix(), name)] = n
    return out


def lint_exceptions_section() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    m = re.search(r"^## Lint exceptions\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, "docs/architecture.md has no '## Lint exceptions' section"
    return m.group(1)


def test_the_checkers_see_what_they_check():
    src = (
        "def a():  # noqa: C901\n    pass\n"
        "def b():  # noqa: C901 -- one branch per op family\n    pass\n"
        "def c():  # noqa: C901 -- x\n    pass\n"
        "s = '# noqa: C901'\n"
    )
    assert noqa_c901(src) == [(1, None), (3, "one branch per op family"), (5, None)]
    nested = "class K:\n    def m(self):\n        def inner():\n            return 1\n"
    assert functions(nested) == [("K.m", 2, 3), ("K.m.inner", 3, 2)]


def test_every_complexity_exception_states_its_reason():
    found = c901_exceptions()
    assert found, "no '# noqa: C901' found: the scan is broken or the list is stale"
    missing = [f"{p}: {fn}" for p, fn, reason in found if reason is None]
    assert not missing, "'# noqa: C901' needs '-- <reason>' (3 words or more):\n" + "\n".join(
        missing
    )
    not_on_def = [f"{p}: {fn}" for p, fn, _ in found if fn.startswith("<line")]
    assert not not_on_def, "'# noqa: C901' belongs on a def line:\n" + "\n".join(not_on_def)


def test_every_complexity_exception_is_listed_in_the_architecture_doc():
    section = lint_exceptions_section()
    unlisted = [
        f"{p}: {fn}"
        for p, fn, _ in c901_exceptions()
        if f"`{p}` `{fn.rsplit('.', 1)[-1]}`" not in section
    ]
    assert not unlisted, "docs/architecture.md, 'Lint exceptions', lacks:\n" + "\n".join(unlisted)


def test_no_function_of_cujit_is_over_80_lines_without_a_reason():
    found = long_functions()
    unlisted = {k: n for k, n in found.items() if k not in LONG_FUNCTIONS}
    assert not unlisted, (
        f"functions over {MAX_LINES} lines without an entry in LONG_FUNCTIONS: {unlisted}"
    )
    stale = [k for k in LONG_FUNCTIONS if k not in found]
    assert not stale, f"LONG_FUNCTIONS entries no longer over {MAX_LINES} lines: {stale}"
    assert all(len(reason.split()) >= 3 for reason in LONG_FUNCTIONS.values())
