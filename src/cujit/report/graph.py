"""The kernel's control-flow graph (its optimised typed IR's blocks) as inline SVG.

Layout is Graphviz's ``dot`` (Debian's ``graphviz`` package): a maintained
layered (Sugiyama) layout with edge routing that a CFG needs.  When ``dot`` is
not on PATH the report says so and shows no graph; nothing else depends on it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

from cujit import ir


@dataclass
class Graph:
    svg: str  # "" when there is none
    note: str
    block_lines: dict[int, list[int]]  # block id -> the Python lines of its ops


def _lines(block: ir.Block, path: str) -> list[int]:
    return sorted(
        {op.loc.line for op in (*block.ops, block.term) if op.loc.file == path and op.loc.line > 0}
    )


def _label(block: ir.Block, lines: list[int]) -> str:
    span = (
        f"line {lines[0]}"
        if len(lines) == 1
        else f"lines {lines[0]}-{lines[-1]}"
        if lines
        else "no line"
    )
    return f"block{block.id}\\n{span}\\n{len(block.ops)} ops"


def to_dot(fn: ir.Function, path: str) -> tuple[str, dict[int, list[int]]]:
    block_lines = {b.id: _lines(b, path) for b in fn.blocks}
    out = [
        "digraph cfg {",
        '  graph [rankdir=TB, bgcolor="transparent"];',
        (
            '  node [shape=box, style="rounded,filled", fillcolor="#f4f6fa", '
            'fontname="Helvetica", fontsize=10];'
        ),
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for b in fn.blocks:
        out.append(f'  b{b.id} [id="cfg-b{b.id}", label="{_label(b, block_lines[b.id])}"];')
    for b in fn.blocks:
        term = b.term
        if isinstance(term, ir.Branch) and term.then_target != term.else_target:
            out.append(f'  b{b.id} -> b{term.then_target} [label="T"];')
            out.append(f'  b{b.id} -> b{term.else_target} [label="F"];')
        else:
            for t in dict.fromkeys(t for t, _ in term.successors()):
                out.append(f"  b{b.id} -> b{t};")
    out.append("}")
    return "\n".join(out) + "\n", block_lines


def render(fn: ir.Function, path: str, timeout: float = 30.0) -> Graph:
    dot_text, block_lines = to_dot(fn, path)
    exe = shutil.which("dot")
    if exe is None:
        return Graph(
            "",
            "the control-flow graph needs Graphviz's dot, which is not on PATH "
            "(Debian: apt-get install graphviz)",
            block_lines,
        )
    try:
        proc = subprocess.run(
            [exe, "-Tsvg"],
            input=dot_text,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Graph("", f"dot failed: {exc}", block_lines)
    if proc.returncode != 0:
        return Graph("", f"dot failed: {proc.stderr[:300]}", block_lines)
    svg = proc.stdout[proc.stdout.find("<svg") :]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.DOTALL)
    return Graph(svg, f"{len(fn.blocks)} blocks, laid out by Graphviz dot", block_lines)
