"""The import layering of ``src/cujit``: no cycle between packages, and every import
allowed by the table in ``docs/architecture.md`` ("Import layering").

The graph is built from the source with ``ast``: every ``import`` and ``from ...
import`` statement counts, at module level or inside a function, relative forms
included.  Modules collapse to their package under ``cujit`` (``cujit.infer.calls``
is ``infer``); a top-level module (``dispatcher.py``) is a node of its own, and so
is ``cujit/__init__.py`` (``cujit``).  Importing a submodule imports its parent
packages too, but every module of cujit implies ``cujit/__init__``: only what
names it explicitly (``from cujit import __version__``) counts as an edge to it.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
DOC = ROOT / "docs" / "architecture.md"


def _modules() -> dict[str, Path]:
    out = {}
    for path in (SRC / "cujit").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def node(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "cujit"


def _imported(module: str, path: Path, modules) -> list[str]:
    """The cujit modules one module's import statements name."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for stmt in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(stmt, ast.Import):
            found += [a.name for a in stmt.names]
        elif isinstance(stmt, ast.ImportFrom):
            if stmt.level:
                base = package.split(".")[: len(package.split(".")) - stmt.level + 1]
                origin = ".".join(base + ([stmt.module] if stmt.module else []))
            else:
                origin = stmt.module or ""
            subs = [f"{origin}.{a.name}" for a in stmt.names]
            found += [s for s in subs if s in modules]
            if any(s not in modules for s in subs):  # a name from the module itself
                found.append(origin)
    return [m for m in found if m in modules]


def import_graph() -> dict[str, dict[str, list[str]]]:
    """node -> {imported node: ["module imports module", ...]}, between distinct nodes."""
    modules = _modules()
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module, path in sorted(modules.items()):
        graph[node(module)]  # every node appears, importing something or not
        for target in _imported(module, path, modules):
            a, b = node(module), node(target)
            if a != b:
                graph[a][b].append(f"{module} imports {target}")
    return graph


def find_cycle(graph) -> list[str] | None:
    """A cycle of nodes (first node repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m) :] + [m]
            if m not in state and (found := visit(m)):
                return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def layering_table() -> dict[str, set[str]]:
    """The table of docs/architecture.md's "Import layering" section: node -> may import."""
    text = DOC.read_text()
    section = text.split("## Import layering", 1)[1].split("\n## ", 1)[0]
    table = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*`([\w]+)`\s*\|(.*)\|\s*$", line)
        if m:
            table[m.group(1)] = set(re.findall(r"`(\w+)`", m.group(2)))
    return table


def test_the_graph_sees_every_kind_of_import(tmp_path):
    # The builder's own check: a function-level import, a relative one, a package's.
    graph = import_graph()
    assert "pipeline" in graph["warmup"]  # imported inside warmup._run only
    assert "startup" in graph["runtime"]
    assert "types" in graph["cujit"]  # cujit/__init__.py
    assert find_cycle({"a": {"b": []}, "b": {"c": []}, "c": {"a": []}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": []}, "b": {}}) is None


def test_no_cycle_between_packages():
    graph = import_graph()
    cycle = find_cycle(graph)
    if cycle:
        why = [f"  {a} -> {b}: {graph[a][b][0]}" for a, b in zip(cycle, cycle[1:], strict=False)]
        pytest.fail("import cycle " + " -> ".join(cycle) + "\n" + "\n".join(why))


def test_every_import_is_allowed_by_the_layering_table():
    table = layering_table()
    graph = import_graph()
    missing = sorted(set(graph) - set(table))
    assert not missing, f"packages missing from docs/architecture.md's layering table: {missing}"
    unknown = sorted(set(table) - set(graph))
    assert not unknown, f"the layering table names packages that do not exist: {unknown}"
    bad = [
        f"{a} -> {b} ({why[0]})"
        for a, edges in sorted(graph.items())
        for b, why in sorted(edges.items())
        if b not in table[a]
    ]
    assert not bad, "imports the layering table does not allow:\n" + "\n".join(bad)


def test_the_layering_table_itself_has_no_cycle():
    table = layering_table()
    assert find_cycle({a: dict.fromkeys(bs) for a, bs in table.items()}) is None


def test_the_runtime_imports_nothing_of_the_compiler():
    compiler = {
        "bytecode",
        "cfg",
        "irgen",
        "ir",
        "infer",
        "passes",
        "codegen",
        "targets",
        "ptx",
        "pipeline",
        "warmup",
        "cache",
        "dispatcher",
        "device_function",
    }
    assert not set(import_graph()["runtime"]) & compiler
