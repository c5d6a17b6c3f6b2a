"""A ``Report`` as one self-contained HTML page: inline CSS, script and SVG, no
request to anywhere.

Every line of every stage carries ``data-line`` (its Python line).  Selecting a
Python line (a click, or ``#L<line>`` in the URL, which the page's own script
turns into a real click) gives each element with that ``data-line`` the class
``hl`` and scrolls every stage to its first one; CFG blocks holding the line get
``hl`` too, and ``<body data-selected>`` names the line.
"""

from __future__ import annotations

import json
from html import escape

from cujit.report.assets import CSS, SCRIPT
from cujit.report.model import Report

STAGE_TITLES = {
    "bytecode": "1 · bytecode",
    "cfg": "2 · CFG listing",
    "ir": "3 · IR",
    "typed": "4 · typed IR",
    "passes": "5 · after passes",
    "llvm": "6 · LLVM IR",
    "ptx": "7 · PTX",
    "sass": "8 · SASS",
}


# A source line's chips name the stages holding it by their number (the stage's title
# says which), so that they take little of the source column's width.
CHIPS = {k: v.split(" · ")[0] for k, v in STAGE_TITLES.items()}


def _line_attr(n: int | None) -> str:
    return f' data-line="{n}"' if n is not None else ""


def _source(rep: Report) -> str:
    used = {s.name: s.python_lines() for s in rep.stages}
    warn: dict[int, list[str]] = {}
    for f in rep.warnings:
        for n in f.all_lines:
            warn.setdefault(n, []).append(f.message)
    rows = []
    for n, text in rep.source:
        chips = "".join(
            f'<span class="chip" title="{escape(name)}">{CHIPS.get(name, name)}</span>'
            for name, lines in used.items()
            if n in lines and name != "cfg"
        )
        mark = '<span class="mark"></span>'
        if n in warn:
            mark = f'<span class="mark warn" title="{escape(" / ".join(warn[n]))}">⚠</span>'
        text = text.expandtabs(4)
        indent = len(text) - len(text.lstrip(" "))
        rows.append(
            f'<div class="src" id="src-L{n}" data-line="{n}"><span class="no">{n}</span>'
            f'{mark}<code style="--ind: {indent}ch">{escape(text) or " "}</code>'
            f'<span class="chips">{chips}</span></div>'
        )
    return "\n".join(rows)


def _stage(view) -> str:
    title = STAGE_TITLES.get(view.name, view.name)
    if not view.lines:
        body = f'<div class="note">{escape(view.note or "empty")}</div>'
    else:
        body = "\n".join(
            f'<div class="ln"{_line_attr(n)}>{escape(t) or " "}</div>' for t, n in view.lines
        )
    return (
        f'<section class="stage" id="stage-{view.name}" data-stage="{view.name}">'
        f'<h3>{escape(title)} <span class="count"></span></h3>'
        f'<div class="code">{body}</div></section>'
    )


def _times(rep: Report) -> str:
    total = sum(rep.times.values()) or 1.0
    parts = "".join(
        f'<div class="seg s-{escape(k)}" style="flex-grow:{v / total:.6f}" '
        f'title="{escape(k)}: {v * 1e3:.2f} ms"><span>{escape(k)} {v * 1e3:.1f} ms</span></div>'
        for k, v in rep.times.items()
    )
    return f'<div class="timebar">{parts}</div><p class="small">total {total * 1e3:.1f} ms</p>'


def _table(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _params(rep: Report) -> str:
    passed = sum(p.passed for p in rep.params)
    rows = [
        [
            f"<code>{escape(p.name)}</code>",
            escape(p.kind),
            "passed" if p.passed else '<span class="dim">never read: not passed</span>',
        ]
        for p in rep.params
    ]
    return f"<p>{passed} of {len(rep.params)} flat parameters are passed at launch.</p>" + _table(
        ["parameter", "kind", "at launch"], rows, "params"
    )


def _fmt(v) -> str:
    return "not reported" if v is None else str(v)


def _resources(rep: Report) -> str:
    res = rep.resources
    if res is None:
        return "<p>" + escape("; ".join(rep.notes) or "no resource information") + "</p>"
    rows = [
        ["registers per thread", _fmt(res.registers)],
        ["stack frame (local memory), bytes per thread", _fmt(res.stack_frame)],
        ["spill stores / loads, bytes", f"{_fmt(res.spill_stores)} / {_fmt(res.spill_loads)}"],
        ["static shared memory, bytes per block", _fmt(res.shared)],
        ["local memory, bytes per thread", _fmt(res.local)],
        ["constant bank 0, bytes", _fmt(res.constant)],
    ]
    occ = [
        [str(o.block_size), str(o.blocks_per_sm), f"{o.occupancy:.0%}", escape(o.limiter)]
        for o in rep.occupancy
    ]
    arch = f"sm_{rep.arch[0]}{rep.arch[1]}"
    return (
        _table(
            ["resource (nvJitLink -verbose)", "value"],
            [[escape(a), escape(b)] for a, b in rows],
            "res",
        )
        + f"<h3>occupancy on {arch} (no dynamic shared memory)</h3>"
        + _table(["threads per block", "blocks per SM", "occupancy", "limited by"], occ, "occ")
        + f"<details><summary>linker log</summary><pre>{escape(res.log)}</pre></details>"
    )


def _at_lines(lines: tuple[int, ...]) -> str:
    """``line 7`` or ``lines 7, 9, 12``, each a link that selects its line."""
    links = ", ".join(f'<a href="#L{n}">{n}</a>' for n in lines)
    return f"line {links}" if len(lines) == 1 else f"lines {links}"


def _findings(found, empty: str) -> str:
    """One item per finding (grouped: its lines listed once), or ``empty``."""
    if not found:
        return f'<p class="ok">{escape(empty)}</p>'
    items = "".join(
        f'<li class="finding f-{escape(f.kind)}" data-line="{f.line}" '
        f'data-lines="{" ".join(map(str, f.all_lines))}">'
        f"{_at_lines(f.all_lines)}: {escape(f.message)}</li>"
        for f in found
    )
    return f"<ul>{items}</ul>"


def _cfg(rep: Report) -> str:
    """The graph's SVG, or the one sentence saying why there is none."""
    if rep.graph.svg:
        note = f'<p class="small">{escape(rep.graph.note)}</p>' if rep.graph.note else ""
        return f'{note}<div class="cfg">{rep.graph.svg}</div>'
    return f'<p class="note">{escape(rep.graph.note)}</p>'


def render_html(rep: Report) -> str:
    """The report as one HTML document (a string)."""
    data = {"blocks": {str(k): v for k, v in rep.graph.block_lines.items()}}
    sections = [
        ("stage times", _times(rep)),
        ("control-flow graph", _cfg(rep)),
        ("parameters", _params(rep)),
        ("resources and occupancy", _resources(rep)),
    ]
    extra = "".join(
        f'<section class="panel" id="sec-{i}"><h2>{escape(t)}</h2>{b}</section>'
        for i, (t, b) in enumerate(sections)
    )
    stages = "".join(_stage(v) for v in rep.stages)
    title = f"cujit report: {rep.name}"
    payload = json.dumps(data).replace("</", "<\\/")  # no "</script>" inside the script
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>{escape(title)}</title><style>{CSS}</style></head>
<body data-selected="">
<header><h1>{escape(rep.name)}</h1><p><code>{escape(rep.signature)}</code> ·
sm_{rep.arch[0]}{rep.arch[1]} · <code>{escape(rep.path)}</code></p>
<p class="small">Click a Python line: its code lights up in every stage.</p></header>
<section class="warnings" id="warnings"><h2>warnings</h2>\
{_findings(rep.warnings, "No warnings.")}</section>
<section class="notes" id="notes"><h2>notes</h2>\
{_findings(rep.remarks, "No notes.")}</section>
<main><aside class="source"><h2>Python source</h2>{_source(rep)}</aside>
<div class="stages">{stages}</div></main>
<div class="panels">{extra}</div>
<script id="report-data" type="application/json">{payload}</script>
<script>{SCRIPT}</script></body></html>
"""


def write_report(rep: Report, path: str) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_html(rep))
    return path
