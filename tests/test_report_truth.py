"""What the HTML report states, checked against a second source.

- The parameter table: against the launch record of the dispatcher's own compile
  (what ``explain`` prints and the launcher applies), against the PTX entry's real
  ``.param`` list (count, order and width), against the cubin's parameter table
  (``EIATTR_KPARAM_INFO``), and against the names each kernel visibly never reads.
- Resources: against the cubin's own attributes (register count, frame size, static
  shared memory and constant bank 0 sections), read by the small ELF reader here.
- Occupancy: against a brute-force count of the blocks that fit.
- Stage times: the page shows exactly the compile's stages and times, and the stages
  together took no longer than the whole build.
- Loops that stayed loops: against the backward branches of the raw PTX text.
- Warnings at lines: each float64 warning sits at a line with a Python float literal,
  and grouped findings list each line once.
"""

from __future__ import annotations

import inspect
import re
import struct
from html.parser import HTMLParser

import numpy as np
import pytest

from cujit import abi, cuda, float32, int16, int32
from cujit.pipeline import compile_kernel
from cujit.report.html import render_html
from cujit.report.model import build_report, compile_options
from cujit.report.resources import ARCH_LIMITS, BLOCK_SIZES
from cujit.types import typeof


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def stencil(u, out):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    i, j = cuda.grid(2)
    tile = cuda.shared.array((18, 18), np.float32)
    if i < u.shape[0] and j < u.shape[1]:
        tile[tx + 1, ty + 1] = u[i, j]
    cuda.syncthreads()
    if 0 < i < u.shape[0] - 1 and 0 < j < u.shape[1] - 1:
        out[i, j] = 0.25 * (tile[tx, ty + 1] + tile[tx + 2, ty + 1] + tile[tx + 1, ty])


def middle(out, unused_f, unused_arr, scale, k):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = scale * np.float32(k)


def rec_tuple(out, r, t):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = r.b + t[0]


REC = np.zeros(1, dtype=[("a", np.float64), ("b", np.float32)])[0]
TUP = (np.float32(1.0), np.int16(2))

# kernel, argument types, the flat parameters it visibly never reads.
CASES = {
    "saxpy": (saxpy, (float32, float32[:], float32[:], float32[:]), {"y.shape0", "out.shape0"}),
    "stencil": (
        stencil,
        (float32[:, :], float32[:, :]),
        {"out.shape0", "out.shape1"},  # out[i, j] reads out's strides, never its shape
    ),
    "middle": (
        middle,
        (float32[::1], float32, float32[::1], float32, int16),
        {"unused_f", "unused_arr.data", "unused_arr.shape0"},
    ),
    "rec_tuple": (rec_tuple, (float32[::1], typeof(REC), typeof(TUP)), {"t.1"}),
}
CASE_IDS = list(CASES)

# The PTX parameter types each flat kind may become (same width; pointers are u64).
PTX_TYPES = {
    "ptr": {"u64", "b64", "s64"},
    "int64": {"u64", "b64", "s64"},
    "uint64": {"u64", "b64", "s64"},
    "float32": {"f32", "b32"},
    "float64": {"f64", "b64"},
    "int32": {"u32", "s32", "b32"},
    "int16": {"u16", "s16", "b16"},
    "uint8": {"u8", "s8", "b8"},
}


@pytest.fixture(scope="module", params=CASE_IDS)
def case(request):
    fn, sig, unread = CASES[request.param]
    rep = build_report(fn, sig, disassemble=False)
    result = compile_kernel(fn, sig, compile_options(None))
    return fn, sig, unread, rep, result


def ptx_entry_params(ptx: str, symbol: str) -> list[tuple[str, str]]:
    """(type, name) of each ``.param`` of the entry ``symbol``, in order."""
    head = re.search(r"\.entry\s+" + re.escape(symbol) + r"\s*\((.*?)\)", ptx, re.DOTALL)
    assert head is not None, "no entry in the PTX"
    return re.findall(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+(\w+)", head.group(1))


class Rows(HTMLParser):
    """The cells of the page's parameter table."""

    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []
        self.inside = False

    def handle_starttag(self, tag, attrs):
        if tag == "table" and ("class", "params") in attrs:
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag == "td":
            self.rows[-1].append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False

    def handle_data(self, data):
        if self.inside and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data


def test_parameter_table_is_the_launch_record(case):
    fn, sig, unread, rep, result = case
    launched = cuda.jit(fn).compile(sig).result.record  # the launcher's own compile
    code = fn.__code__
    names = [
        n
        for a, t in zip(code.co_varnames[: len(sig)], sig, strict=True)
        for n in abi.param_names(a, t)
    ]
    assert [p.name for p in rep.params] == names
    assert [p.kind for p in rep.params] == [str(k) for k in abi.flat_param_kinds(sig)]
    assert tuple(p.passed for p in rep.params) == launched.passed == result.record.passed
    assert {p.name for p in rep.params if not p.passed} == unread
    # The page's table says the same, row by row.
    rows = Rows()
    rows.feed(render_html(rep))
    assert [(r[0], r[2]) for r in rows.rows if r] == [
        (p.name, "passed" if p.passed else "never read: not passed") for p in rep.params
    ]


def test_passed_parameters_are_the_ptx_entry_parameters(case):
    _, _, _, rep, result = case
    ptx = result.outputs["ptx"]
    declared = ptx_entry_params(ptx, result.record.symbol)
    passed = [p for p in rep.params if p.passed]
    assert len(declared) == len(passed)
    for (ptx_type, name), p in zip(declared, passed, strict=True):
        assert ptx_type in PTX_TYPES[p.kind], (p.name, p.kind, ptx_type)
        # A parameter the launch passes is one the kernel's code loads.
        assert re.search(r"ld\.param\.\w+\s+[^;]*\[" + name + r"(\+\d+)?\]", ptx), name
    # The cubin's own parameter table (EIATTR_KPARAM_INFO) has as many entries.
    info = nv_info(result.outputs["cubin"], f".nv.info.{result.record.symbol}")
    assert len([v for a, v in info if a == KPARAM_INFO]) == len(passed)


# -- a reader of what the cubin (an ELF file) says of its kernel ---------------------

REGCOUNT, FRAME_SIZE, KPARAM_INFO = 0x2F, 0x11, 0x17


def elf_sections(blob: bytes) -> dict[str, tuple[int, int]]:
    """Section name -> (file offset, size) of a 64-bit little-endian ELF file."""
    (shoff,) = struct.unpack_from("<Q", blob, 0x28)
    size, count, names = struct.unpack_from("<HHH", blob, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * size) for i in range(count)]
    base = heads[names][4]

    def name(off: int) -> str:
        return blob[base + off : blob.index(b"\0", base + off)].decode()

    return {name(h[0]): (h[4], h[5]) for h in heads}


def nv_info(blob: bytes, section: str) -> list[tuple[int, bytes]]:
    """(attribute, value) of each entry of an ``.nv.info`` section."""
    off, size = elf_sections(blob)[section]
    data, i, out = blob[off : off + size], 0, []
    while i < len(data):
        fmt, attr = data[i], data[i + 1]
        if fmt == 4:  # a sized value
            (n,) = struct.unpack_from("<H", data, i + 2)
            out.append((attr, data[i + 4 : i + 4 + n]))
            i += 4 + n
        else:
            out.append((attr, data[i + 2 : i + 4]))
            i += 4
    return out


def test_resources_are_the_cubins(case):
    _, _, _, rep, result = case
    blob, symbol = result.outputs["cubin"], result.record.symbol
    sections = elf_sections(blob)
    res = rep.resources
    (regs,) = [struct.unpack("<II", v)[1] for a, v in nv_info(blob, ".nv.info") if a == REGCOUNT]
    (frame,) = [struct.unpack("<II", v)[1] for a, v in nv_info(blob, ".nv.info") if a == FRAME_SIZE]
    assert (res.registers, res.stack_frame) == (regs, frame)
    assert res.constant == sections[f".nv.constant0.{symbol}"][1]
    shared = sections.get(f".nv.shared.{symbol}", (0, 0))[1]
    reserved = ARCH_LIMITS[rep.arch].shared_reserved
    # The section holds the kernel's static shared memory plus the block's reserve.
    assert res.shared == (shared - reserved if shared else 0)


def test_stencil_shared_memory_is_its_tile():
    rep = build_report(stencil, CASES["stencil"][1], disassemble=False)
    assert rep.resources.shared == 18 * 18 * 4


def blocks_that_fit(res, arch, block: int) -> int:
    """The most blocks of ``block`` threads one SM holds, counted up one at a time."""
    lim = ARCH_LIMITS[arch]
    warps = -(-block // 32)
    per_warp = -(-(res.registers * 32) // lim.reg_unit) * lim.reg_unit
    shared = -(-(res.shared or 0) // lim.shared_unit) * lim.shared_unit + lim.shared_reserved
    n = 0
    while (
        n + 1 <= lim.max_blocks
        and (n + 1) * warps <= lim.max_warps
        and (n + 1) * warps * per_warp <= lim.registers
        and (n + 1) * shared <= lim.shared_per_sm
        and block <= lim.max_threads_per_block
    ):
        n += 1
    return n


def test_occupancy_is_the_blocks_that_fit(case):
    rep = case[3]
    assert [o.block_size for o in rep.occupancy] == list(BLOCK_SIZES)
    lim = ARCH_LIMITS[rep.arch]
    for o in rep.occupancy:
        n = blocks_that_fit(rep.resources, rep.arch, o.block_size)
        assert o.blocks_per_sm == n, o.block_size
        assert o.occupancy == pytest.approx(n * o.block_size / 32 / lim.max_warps)


def test_stage_times_are_the_compiles(monkeypatch):
    # The pipeline's clock is replaced by one that moves k milliseconds at its k-th
    # reading, so each stage's true time is known: the page must show those.
    import types

    from cujit import pipeline

    ticks = iter(range(1, 10_000))
    clock = {"now": 0.0}

    def perf_counter() -> float:
        clock["now"] += next(ticks) * 1e-3
        return clock["now"]

    monkeypatch.setattr(pipeline, "time", types.SimpleNamespace(perf_counter=perf_counter))
    rep = build_report(saxpy, CASES["saxpy"][1], disassemble=False)
    monkeypatch.undo()
    stages = ["bytecode", "cfg", "ir", "typed", "passes", "llvm", "ptx", "cubin"]
    assert list(rep.times) == stages
    # Readings 1, 2 start and end the first stage (2 ms), 3, 4 the next (4 ms), ...
    expected = {name: (2 * k + 2) * 1e-3 for k, name in enumerate(stages)}
    assert rep.times == pytest.approx(expected)
    page = render_html(rep)
    for name, seconds in expected.items():
        assert f"{name} {seconds * 1e3:.1f} ms</span>" in page
    assert f"total {sum(expected.values()) * 1e3:.1f} ms" in page


def loop(x, out, n):
    acc = np.float32(0)
    for k in range(4):
        acc += x[k]
    for j in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[j] = acc + x[j]


def nested(x, out, n, m):
    i = cuda.grid(1)
    acc = np.float32(0)
    for a in range(n):
        for b in range(m):
            acc += x[a * m + b]
    out[i] = acc


def ptx_loop_lines(ptx: str) -> set[int]:
    """The Python lines (``.loc 1 N``, read here from the raw PTX text) between a label
    and a later branch back to it: the lines the PTX's loops hold."""
    labels: dict[str, int] = {}
    lines: list[int | None] = []
    current, inside = None, set()
    for text in ptx.splitlines():
        loc = re.match(r"\s*\.loc\s+1\s+(\d+)", text)
        current = int(loc.group(1)) if loc else current
        label = re.match(r"\s*(\$\w+):", text)
        if label:
            labels[label.group(1)] = len(lines)
        lines.append(current)
        target = re.search(r"\bbra(?:\.uni)?\s+(\$\w+);", text)
        if target and target.group(1) in labels:
            inside.update(n for n in lines[labels[target.group(1)] :] if n)
    return inside


@pytest.mark.parametrize(
    ("fn", "sig", "kept"),
    [
        (loop, (float32[::1], float32[::1], int32), ["for j in range"]),
        (nested, (float32[::1], float32[::1], int32, int32), ["for a in", "for b in"]),
    ],
)
def test_loops_that_stayed_loops_are_the_ptxs(fn, sig, kept):
    rep = build_report(fn, sig, disassemble=False)
    result = compile_kernel(fn, sig, compile_options(None))
    noted = [n for f in rep.remarks if f.kind == "loop" for n in f.all_lines]
    lines, first = inspect.getsourcelines(fn)
    assert noted == [first + k for t in kept for k, ln in enumerate(lines) if t in ln]
    # Every Python loop header the PTX's loops hold is noted, and no other.
    headers = {first + k for k, ln in enumerate(lines) if ln.lstrip().startswith("for ")}
    assert set(noted) == headers & ptx_loop_lines(result.outputs["ptx"])
    assert not [f for f in rep.warnings if f.kind == "loop"]  # a note, not a warning


FLOAT_LITERAL = re.compile(r"(?<![\w.])\d+\.\d*(?:e-?\d+)?")


def test_warnings_sit_at_their_lines_and_repeat_once(case):
    fn, _, _, rep, _ = case
    source = dict(rep.source)
    for f in rep.findings:
        assert list(f.all_lines) == sorted(set(f.all_lines)), f
        assert set(f.all_lines) <= set(source), f
    texts = [(f.kind, f.message) for f in rep.findings]
    assert len(texts) == len(set(texts)), "a repeated finding is not grouped"
    # A float64 warning is where a Python float literal joins float32 values: stencil's
    # 0.25 * (...), and no other line of these kernels.
    wide = [n for f in rep.warnings if f.kind == "wide-type" for n in f.all_lines]
    literal = [n for n, text in rep.source if FLOAT_LITERAL.search(text.split("#")[0])]
    assert wide == literal
    page = render_html(rep)
    for f in rep.findings:
        assert page.count(f'data-lines="{" ".join(map(str, f.all_lines))}"') >= 1


def test_stencil_findings_say_what_numba_users_can_do():
    rep = build_report(stencil, CASES["stencil"][1], disassemble=False)
    (wide,) = [f for f in rep.warnings if f.kind == "wide-type"]
    assert "np.float32(0.25)" in wide.message
    # tile[tx + 1, ty + 1]: int64 index arithmetic, as in numba: one note for its
    # lines, never a warning, and no np.int32 advice.
    (index,) = [f for f in rep.remarks if f.kind == "int64"]
    assert len(index.all_lines) == 2 and "np.int32" not in index.message
    assert {f.kind for f in rep.warnings} == {"wide-type"}
    assert not re.search(r"\ba int", render_html(rep))


def test_readmes_stencil_warning_fires():
    # README: "0.25 * (...) in a float32 kernel is float64 arithmetic ... (the warning
    # above; here LLVM ... narrowed it back)".
    from kernels import stencil_boundaries

    rep = build_report(stencil_boundaries, (float32[:, ::1], float32[:, ::1]), disassemble=False)
    lines, first = inspect.getsourcelines(stencil_boundaries.py_func)
    (line,) = [first + k for k, ln in enumerate(lines) if "0.25 *" in ln]
    (wide,) = [f for f in rep.warnings if f.kind == "wide-type"]
    assert wide.all_lines == (line,) and "narrowed it back to float32" in wide.message


def test_graphviz_missing_is_said_once():
    from cujit.report.graph import Graph

    rep = build_report(saxpy, CASES["saxpy"][1], disassemble=False)
    rep.graph = Graph("", "the control-flow graph needs Graphviz's dot", {})
    assert render_html(rep).count("needs Graphviz") == 1
    rep.graph = Graph("<svg></svg>", "3 blocks, laid out by Graphviz dot", {})
    page = render_html(rep)
    assert page.count("laid out by Graphviz") == 1 and page.count("<svg") == 1


def test_source_lines_wrap_and_are_never_cut():
    from cujit.report.assets import CSS

    rule = re.search(r"\.src code \{([^}]*)\}", CSS).group(1)
    assert "pre-wrap" in rule and "ellipsis" not in rule and "hidden" not in rule
    src = re.search(r"\.src \{([^}]*)\}", CSS).group(1)
    assert "white-space: pre;" not in src and "nowrap" not in src
