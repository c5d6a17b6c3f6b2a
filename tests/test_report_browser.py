"""The report in a real browser: headless Chromium opens the stencil kernel's report
at ``#L<line>``, the page's own script turns that into a real click on the Python
line, and the DOM Chromium dumps afterwards must hold every stage with that line's
PTX highlighted.  A screenshot of the same page is kept as an artifact.

Chromium comes from Debian's ``chromium`` package (``.ci/run`` installs it); where
it is absent the tests skip and say so.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
from kernels import CASES

from cujit import float32
from cujit.report import report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARTIFACTS = os.path.join(ROOT, "artifacts", "report")
STAGES = ["bytecode", "cfg", "ir", "typed", "passes", "llvm", "ptx", "sass"]


def chromium() -> str:
    exe = next(
        (
            shutil.which(n)
            for n in ("chromium", "chromium-browser", "google-chrome")
            if shutil.which(n)
        ),
        None,
    )
    if exe is None:
        pytest.skip(
            "Chromium is not installed (Debian: apt-get install -y chromium): "
            "the browser test of the HTML report is skipped"
        )
    return exe


def run_browser(exe: str, tmp_path, *args: str) -> subprocess.CompletedProcess:
    argv = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--hide-scrollbars",
        *args,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


class Collect(HTMLParser):
    """Each element's attributes, in document order."""

    def __init__(self):
        super().__init__()
        self.elements: list[dict[str, str]] = []
        self.stage: str | None = None

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "section" and "data-stage" in a:
            self.stage = a["data-stage"]
        a["_tag"], a["_stage"] = tag, self.stage or ""
        self.elements.append(a)


@pytest.fixture(scope="module")
def stencil_page(tmp_path_factory):
    case = next(c for c in CASES if c.name == "stencil_boundaries")
    out = tmp_path_factory.mktemp("report") / "stencil.html"
    # float32, as the README's picture: 0.25 * (...) is then a float64 warning.
    report(case.kernel, (float32[:, ::1], float32[:, ::1]), str(out))
    lines, first = inspect.getsourcelines(case.kernel.py_func)
    # The interior update: its loads, adds and multiply are all in the PTX.
    line = next(first + k for k, ln in enumerate(lines) if "0.25 *" in ln)
    return out, line


def test_click_highlights_the_line_in_every_stage(stencil_page, tmp_path):
    exe = chromium()
    page, line = stencil_page
    proc = run_browser(exe, tmp_path, "--dump-dom", f"file://{page}#L{line}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = Collect()
    dom.feed(proc.stdout)
    body = next(e for e in dom.elements if e["_tag"] == "body")
    assert body.get("data-selected") == str(line), "the page's script did not select the line"
    stages = [e["data-stage"] for e in dom.elements if e["_tag"] == "section" and "data-stage" in e]
    assert stages == STAGES
    lit = [e for e in dom.elements if "hl" in e.get("class", "").split()]
    assert all(e.get("data-line") == str(line) or e["_tag"] == "g" for e in lit)
    ptx = [e for e in lit if e["_stage"] == "ptx"]
    assert ptx, "no PTX line highlighted"
    # Exactly the PTX lines of this Python line are lit.
    expected = sum(
        1 for e in dom.elements if e["_stage"] == "ptx" and e.get("data-line") == str(line)
    )
    assert len(ptx) == expected
    for name in ("bytecode", "ir", "typed", "passes", "llvm"):
        assert any(e["_stage"] == name for e in lit), name
    assert any(e["_tag"] == "g" for e in lit), "no CFG block highlighted"
    src = [e for e in lit if e.get("id") == f"src-L{line}"]
    assert src, "the Python line itself is not highlighted"


def test_screenshot_artifact(stencil_page, tmp_path):
    exe = chromium()
    page, line = stencil_page
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, "stencil_report.png")
    if os.path.exists(shot):
        os.remove(shot)
    proc = run_browser(
        exe, tmp_path, "--window-size=1600,1300", f"--screenshot={shot}", f"file://{page}#L{line}"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    with open(shot, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    assert (width, height) == (1600, 1300)
    assert os.path.getsize(shot) > 20_000  # a rendered page, not a blank one
    print(f"\nreport screenshot: {shot}")
    assert re.search(r"\.png$", shot)


# Run after the page's own script: each source line whose text is wider than its box
# (cut off) is named in <body data-cut>, and the source pane's own overflow in
# <body data-pane-cut>; the page allows inline scripts (its CSP).
MEASURE = """<script>
(function () {
  var cut = [];
  document.querySelectorAll(".src code").forEach(function (c) {
    if (c.scrollWidth > c.clientWidth + 1) { cut.push(c.parentNode.id); }
  });
  var pane = document.querySelector(".source");
  document.body.setAttribute("data-cut", cut.join(" ") || "none");
  document.body.setAttribute("data-pane-cut", String(pane.scrollWidth > pane.clientWidth + 1));
})();
</script></body>"""


def test_source_lines_are_never_cut_at_1280_px(stencil_page, tmp_path):
    exe = chromium()
    page, _ = stencil_page
    # A line far longer than the column, beside the kernel's own.
    measured = tmp_path / "measured.html"
    text = page.read_text(encoding="utf-8")
    long_row = (
        '<div class="src" id="src-L9999" data-line="9999"><span class="no">9999</span>'
        '<span class="mark"></span><code style="--ind: 4ch">    out[i, j] = '
        + " + ".join(f"u[i + {k}, j]" for k in range(30))
        + '</code><span class="chips"></span></div></aside>'
    )
    text = text.replace("</aside>", long_row, 1).replace("</body>", MEASURE, 1)
    measured.write_text(text, encoding="utf-8")
    proc = run_browser(exe, tmp_path, "--window-size=1280,1000", "--dump-dom", f"file://{measured}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = Collect()
    dom.feed(proc.stdout)
    body = next(e for e in dom.elements if e["_tag"] == "body")
    assert body.get("data-cut") == "none", body.get("data-cut")
    assert body.get("data-pane-cut") == "false"
