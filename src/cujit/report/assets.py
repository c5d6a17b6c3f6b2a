"""The report page's stylesheet and script, inlined into every page (no asset is
ever fetched)."""

CSS = r"""
:root { --hl: #ffe38a; --hl-edge: #e0a800; --fg: #1d2330; --dim: #7a8394; --bg: #fbfcfe; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif;
       color: var(--fg); background: var(--bg); }
header { padding: 10px 18px; background: #1f2a44; color: #fff; }
header h1 { margin: 0; font-size: 20px; }
header p { margin: 2px 0; }
header code { color: #cfe0ff; }
h2 { font-size: 15px; margin: 6px 0; }
h3 { font-size: 13px; margin: 0; padding: 4px 8px; background: #e8ecf4; }
main { display: grid; grid-template-columns: minmax(400px, 46%) minmax(0, 1fr); gap: 10px;
       padding: 10px; }
.source { background: #fff; border: 1px solid #d5dbe6; border-radius: 6px; padding: 6px;
          overflow: auto; max-height: 720px; }
.src { display: flex; gap: 6px; align-items: baseline; cursor: pointer;
       font: 12.5px/1.5 ui-monospace, "DejaVu Sans Mono", monospace; }
.src:hover { background: #eef3ff; }
.src .no { color: var(--dim); min-width: 3.2em; text-align: right; }
/* The user's own lines are never cut off: a long line wraps, its continuation
   indented past the line's own indentation (--ind, set per line). */
.src code { flex: 1 1 auto; min-width: 0; white-space: pre-wrap; overflow-wrap: anywhere;
            padding-left: calc(var(--ind, 0ch) + 4ch);
            text-indent: calc(-1 * (var(--ind, 0ch) + 4ch)); }
.chips { display: flex; gap: 1px; flex: 0 0 auto; min-width: 8em; justify-content: flex-end; }
.mark { flex: 0 0 1em; }
.chip { font-size: 9px; min-width: 1.5em; text-align: center; border-radius: 3px;
        background: #dfe7f7; color: #3a4a6b; }
.warn { color: #c0392b; font-weight: bold; }
.stages { display: grid; grid-template-columns: repeat(auto-fill, minmax(430px, 1fr)); gap: 8px; }
.stage { background: #fff; border: 1px solid #d5dbe6; border-radius: 6px; overflow: hidden; }
.stage .code { max-height: 250px; overflow: auto; padding: 2px 0;
               font: 11.5px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
.ln { white-space: pre; padding: 0 8px; }
.ln[data-line] { cursor: pointer; }
.hl { background: var(--hl) !important; box-shadow: inset 3px 0 0 var(--hl-edge); }
.count { color: var(--dim); font-weight: normal; }
.note { padding: 10px; color: var(--dim); font-style: italic; }
.panels { display: grid; grid-template-columns: repeat(auto-fill, minmax(460px, 1fr)); gap: 10px;
          padding: 0 10px 20px; }
.panel { background: #fff; border: 1px solid #d5dbe6; border-radius: 6px; padding: 8px 12px; }
.timebar { display: flex; height: 26px; border-radius: 4px; overflow: hidden; }
.seg { min-width: 3px; overflow: hidden; color: #fff; font-size: 10px; padding: 5px 3px;
       white-space: nowrap; }
.s-bytecode { background: #6c7ae0; } .s-cfg { background: #4f9bd9; } .s-ir { background: #3bb0a6; }
.s-typed { background: #5fb55f; } .s-passes { background: #a3b83a; }
.s-llvm { background: #e0a234; }
.s-ptx { background: #e06a3b; } .s-cubin { background: #c2457c; }
table { border-collapse: collapse; font-size: 12.5px; }
td, th { border-bottom: 1px solid #e3e7ef; padding: 2px 10px 2px 0; text-align: left; }
.small { font-size: 12px; color: var(--dim); }
.dim { color: var(--dim); }
.ok { color: #2e7d32; }
.cfg { overflow: auto; max-height: 520px; }
.cfg svg { max-width: 100%; height: auto; }
.cfg g.node.hl polygon, .cfg g.node.hl path { fill: var(--hl); stroke: var(--hl-edge); }
.cfg g.node { cursor: pointer; }
.warnings { margin: 10px 10px 0; padding: 4px 12px; background: #fff7e6;
            border: 1px solid #f0c36d; border-radius: 6px; }
.warnings ul, .notes ul { margin: 2px 0; padding-left: 18px; }
.warnings h2, .notes h2 { margin: 2px 0; }
.notes { margin: 6px 10px 0; padding: 4px 12px; background: #f1f5fb;
         border: 1px solid #c9d5e8; border-radius: 6px; }
.finding { margin: 2px 0; cursor: pointer; } .finding.hl { background: var(--hl); }
pre { font-size: 11px; white-space: pre-wrap; }
"""

SCRIPT = r"""
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("report-data").textContent);
  function blocksOf(line) {
    var out = [];
    Object.keys(data.blocks).forEach(function (b) {
      if (data.blocks[b].indexOf(line) >= 0) { out.push(b); }
    });
    return out;
  }
  function select(line) {
    var n = parseInt(line, 10);
    document.querySelectorAll(".hl").forEach(function (e) { e.classList.remove("hl"); });
    document.querySelectorAll('[data-line="' + n + '"]').forEach(function (e) {
      e.classList.add("hl");
    });
    blocksOf(n).forEach(function (b) {
      var g = document.getElementById("cfg-b" + b);
      if (g) { g.classList.add("hl"); }
    });
    document.querySelectorAll(".stage").forEach(function (s) {
      var hits = s.querySelectorAll(".ln.hl");
      s.querySelector(".count").textContent = hits.length ? "(" + hits.length + " lines)" : "";
      var box = s.querySelector(".code");
      if (hits.length) { box.scrollTop = hits[0].offsetTop - box.offsetTop - 30; }
    });
    var cfg = document.querySelector(".cfg"), node = cfg && cfg.querySelector("g.node.hl");
    if (node) {
      var r = node.getBoundingClientRect(), c = cfg.getBoundingClientRect();
      cfg.scrollTop += r.top - c.top - 40;
    }
    var src = document.getElementById("src-L" + n), pane = document.querySelector(".source");
    if (src && pane) { pane.scrollTop = src.offsetTop - pane.offsetTop - 60; }
    document.body.setAttribute("data-selected", String(n));
    if (history.replaceState) { history.replaceState(null, "", "#L" + n); }
  }
  document.addEventListener("click", function (ev) {
    var a = ev.target.closest('a[href^="#L"]');
    if (a) { ev.preventDefault(); select(a.getAttribute("href").slice(2)); return; }
    var el = ev.target.closest("[data-line]");
    if (el) { select(el.getAttribute("data-line")); return; }
    var g = ev.target.closest("g.node");
    if (g && g.id.indexOf("cfg-b") === 0) {
      var lines = data.blocks[g.id.slice(5)] || [];
      if (lines.length) { select(lines[0]); }
    }
  });
  function fromHash() {
    var m = /^#L(\d+)$/.exec(location.hash);
    var el = m && document.getElementById("src-L" + m[1]);
    if (el) { el.click(); }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
"""
