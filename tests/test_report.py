"""The HTML report (``cujit report``): its line links, resources, occupancy and warnings.

Kernels here are small enough to reason about: a 32-bit kernel that multiplies by a
Python float (so float64 arithmetic appears at that line), a local array indexed by
data (so it cannot live in registers), a grid-stride loop (its trip count is unknown,
so it stays a loop) beside a constant four-trip loop (unrolled).
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cujit import cuda, float32, float64, int32
from cujit.report import report
from cujit.report.model import build_report
from cujit.report.resources import Resources, occupancy, parse_info_log

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    hits = [first + k for k, ln in enumerate(lines) if text in ln]
    assert len(hits) == 1, text
    return hits[0]


def widen(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * 0.1


def narrow(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * np.float32(0.1)


def iwiden(x, out):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < x.size:
        out[i] = x[i] * 3


def inarrow(x, out):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < x.size:
        out[i] = x[i] * np.int32(3)


def local_scratch(x, idx, out):
    i = cuda.grid(1)
    tmp = cuda.local.array(16, np.float32)
    for k in range(16):
        tmp[k] = x[k]
    out[i] = tmp[idx[i] % 16]


def loops(x, out, n):
    acc = np.float32(0)
    for k in range(4):
        acc += x[k]
    for j in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[j] = acc + x[j]


F32 = (float32[::1], float32[::1])


def test_float64_in_a_32_bit_kernel_is_flagged_at_its_line():
    rep = build_report(widen, F32)
    wide = [f for f in rep.findings if f.kind == "wide-type"]
    assert [f.line for f in wide] == [line_of(widen, "x[i] * 0.1")]
    # 0.1 is not a float32 value: the product must be rounded from float64, so the
    # PTX keeps the 64-bit multiply.
    assert "float64" in wide[0].message and "computes in float64" in wide[0].message
    assert "np.float32(" in wide[0].message and not wide[0].is_note
    assert wide[0] in rep.warnings
    assert not [f for f in build_report(narrow, F32).findings if f.kind == "wide-type"]
    # A float64 kernel is not a 32-bit kernel: nothing to flag.
    assert not [
        f
        for f in build_report(widen, (float64[::1], float64[::1])).findings
        if f.kind == "wide-type"
    ]


def test_int64_from_a_python_int_is_a_note_at_its_line():
    i32 = (int32[::1], int32[::1])
    # 3 is a Python int, an int64: the product is int64, as in numba, where even
    # int32 * int32 is int64: a note (nothing to change), never a warning.  np.int32(3)
    # is not noted, and the index compare against x.size (an int64 extent) is no
    # arithmetic.  (every report also says whether the kernel is coarsened:
    # test_coarsen_explain.py)
    rep = build_report(iwiden, i32)
    found = [(f.kind, f.line) for f in rep.findings]
    assert [f for f in found if f[0] != "coarsening"] == [("int64", line_of(iwiden, "x[i] * 3"))]
    assert rep.warnings == []
    (note,) = [f for f in rep.remarks if f.kind == "int64"]
    assert "np.int32" not in note.message and "an int32 value" in note.message
    assert [f for f in build_report(inarrow, i32).findings if f.kind != "coarsening"] == []


def test_local_array_in_local_memory():
    rep = build_report(local_scratch, (float32[::1], int32[::1], float32[::1]))
    # 16 float32 indexed by data: the array lives in a stack frame of at least 64 bytes.
    assert rep.resources.stack_frame >= 16 * 4
    assert [f.line for f in rep.findings if f.kind == "local-memory"] == [
        line_of(local_scratch, "cuda.local.array")
    ]


def test_loop_not_unrolled_is_flagged_and_unrolled_loop_is_not():
    rep = build_report(loops, (float32[::1], float32[::1], int32))
    flagged = [f.line for f in rep.findings if f.kind == "loop"]
    assert flagged == [line_of(loops, "for j in range")]


def test_stage_lines_link_to_python_lines():
    rep = build_report(widen, F32)
    views = {s.name: s for s in rep.stages}
    assert list(views) == ["bytecode", "cfg", "ir", "typed", "passes", "llvm", "ptx", "sass"]
    store = line_of(widen, "x[i] * 0.1")
    for name in ("bytecode", "ir", "typed", "passes", "llvm", "ptx"):
        assert store in views[name].python_lines(), name
    # The typed IR's float64 multiply and the PTX's f64 multiply sit at the store's line.
    assert any("binop *" in t and "float64" in t for t, n in views["typed"].lines if n == store)
    assert any(re.search(r"mul(\.rn)?\.f64", t) for t, n in views["ptx"].lines if n == store)
    assert any(t.strip().startswith("st.global.f32") for t, n in views["ptx"].lines if n == store)
    # Every mapped line is a line of this kernel.
    src = {n for n, _ in rep.source}
    for v in views.values():
        assert v.python_lines() <= src, v.name


def test_parameters_passed_at_launch():
    rep = build_report(widen, F32)
    names = [p.name for p in rep.params]
    assert names == ["x.data", "x.shape0", "out.data", "out.shape0"]
    passed = {p.name: p.passed for p in rep.params}
    # x.size bounds the index: x's extent is read; out's extent never is.
    assert passed["x.data"] and passed["out.data"] and passed["x.shape0"]
    assert not passed["out.shape0"]


def test_info_log_parsing():
    log = (
        "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
        "ptxas info    : Function properties for k\n"
        "ptxas         .     48 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem, "
        "380 bytes cmem[0]\n"
    )
    res = parse_info_log(log, "k")
    assert (
        res.registers,
        res.stack_frame,
        res.spill_stores,
        res.spill_loads,
        res.shared,
        res.constant,
    ) == (40, 48, 8, 12, 1024, 380)


def test_occupancy_from_resources():
    # sm_90: 65536 registers, 64 warps and 32 blocks per SM; registers per warp in
    # units of 256.  32 registers: 1024 per warp, 64 warps fit: warps bound.
    o = occupancy(Resources(registers=32), (9, 0), 256)
    assert (o.blocks_per_sm, o.occupancy, o.limiter) == (8, 1.0, "warps")
    # 64 registers: 2048 per warp, 32 warps fit, 4 blocks of 8 warps: half occupancy.
    o = occupancy(Resources(registers=64), (9, 0), 256)
    assert (o.blocks_per_sm, o.occupancy, o.limiter) == (4, 0.5, "registers")
    # 40 registers round up to 1280 per warp: 51 warps, 6 blocks of 8 = 48 warps.
    o = occupancy(Resources(registers=40), (9, 0), 256)
    assert (o.blocks_per_sm, o.occupancy) == (6, 48 / 64)
    # 48 KiB static shared + 1 KiB reserved per block: 228 KiB holds 4 blocks.
    o = occupancy(Resources(registers=16, shared=48 * 1024), (9, 0), 128)
    assert (o.blocks_per_sm, o.limiter) == (4, "shared memory")
    # 64 threads: 32 blocks of 2 warps = 64 warps; the block limit and warps agree.
    assert occupancy(Resources(registers=16), (9, 0), 64).blocks_per_sm == 32
    assert occupancy(Resources(registers=16), (9, 0), 2048).blocks_per_sm == 0


def test_html_is_self_contained_and_holds_every_stage(tmp_path):
    path = report(widen, F32, str(tmp_path / "widen.html"))
    page = Path(path).read_text(encoding="utf-8")
    for stage in ("bytecode", "cfg", "ir", "typed", "passes", "llvm", "ptx", "sass"):
        assert f'id="stage-{stage}"' in page
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert "<svg" in page or "dot, which is not on PATH" in page
    store = line_of(widen, "x[i] * 0.1")
    assert f'id="src-L{store}"' in page
    assert page.count(f'data-line="{store}"') > 10
    assert "registers per thread" in page and "occupancy on sm_90" in page


def test_cli_and_kernel_method(tmp_path):
    out = tmp_path / "k.html"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cujit",
            "report",
            f"{os.path.abspath(__file__)}:widen",
            "--sig",
            "void(float32[::1], float32[::1])",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.exists() and 'id="stage-ptx"' in out.read_text()
    k = cuda.jit(narrow)
    path = k.report("void(float32[::1], float32[::1])", str(tmp_path / "n.html"))
    assert 'id="stage-llvm"' in Path(path).read_text()


def test_sass_lines_when_nvdisasm_is_present():
    from cujit.report.stages import find_disassembler

    tool = find_disassembler()
    if tool is None or not tool.endswith("nvdisasm"):
        pytest.skip("nvdisasm not found (pip install nvidia-cuda-nvdisasm): SASS is absent")
    rep = build_report(widen, F32)
    sass = rep.stages[-1]
    store = line_of(widen, "x[i] * 0.1")
    # The float64 multiply of x[i] * 0.1 and the 32-bit global store are the store's.
    assert any("DMUL" in t for t, n in sass.lines if n == store), sass.lines[:40]
    assert any("STG.E" in t for t, n in sass.lines if n == store)
    assert not any("DMUL" in t for t, n in sass.lines if n != store)
