"""Line tables (``lineinfo=True``) and DWARF debug info (``debug=True``) in the LLVM IR
and PTX: the ``.loc`` directives name the Python lines the instructions came from.

The expected lines are found in this file's own source (the statement's text), and
each check names an instruction only that statement can produce: the float multiply
of ``x[i] * a``, the global store of ``out[i] = ...``, the special-register reads
of ``cuda.grid(1)``.
"""

from __future__ import annotations

import inspect
import os
import re

import pytest

from cujit import cuda, float32, int32
from cujit.options import Options
from cujit.pipeline import compile_kernel


def scale(x, out, a):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * a


def add_one(x):
    x[0] += 1


def line_of(fn, text: str) -> int:
    """The file line of the statement of ``fn`` that contains ``text``."""
    lines, first = inspect.getsourcelines(fn)
    hits = [first + k for k, ln in enumerate(lines) if text in ln]
    assert len(hits) == 1, text
    return hits[0]


SIG = (float32[::1], float32[::1], float32)


def compile_scale(**opts):
    return compile_kernel(scale, SIG, Options(verify=True, **opts))


def ptx_instructions_by_line(ptx: str) -> dict[int, list[str]]:
    """Instructions grouped by the ``.loc`` line in force, for this file's index."""
    files = dict(re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', ptx, re.MULTILINE))
    mine = {k for k, v in files.items() if os.path.samefile(v, __file__)}
    assert mine, f"no .file names {__file__}: {files}"
    current, out = None, {}
    for ln in ptx.splitlines():
        m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)\s+\d+", ln)
        if m:
            current = int(m.group(2)) if m.group(1) in mine else None
        elif current and ln.strip() and not ln.strip().startswith(("//", ".", "$", "{", "}")):
            out.setdefault(current, []).append(ln.strip())
    return out


def test_loc_lines_name_the_statements():
    by_line = ptx_instructions_by_line(compile_scale(lineinfo=True).ptx)
    store = line_of(scale, "out[i] = x[i] * a")
    grid = line_of(scale, "cuda.grid(1)")
    guard = line_of(scale, "if i < x.size")
    assert any(re.match(r"mul(\.rn)?\.f32", ins) for ins in by_line[store]), by_line[store]
    assert any(ins.startswith("st.global.f32") for ins in by_line[store])
    assert any(ins.startswith("ld.global") and "f32" in ins for ins in by_line[store])
    assert any("%tid.x" in ins for ins in by_line[grid]), by_line.get(grid)
    assert any(ins.startswith("setp") for ins in by_line[guard]), by_line.get(guard)
    # No instruction of the kernel is attributed to a line outside it.
    body = set(range(line_of(scale, "def scale"), store + 1))
    assert set(by_line) <= body, sorted(set(by_line) - body)
    # The multiply and the store come from one statement: no other line has them.
    others = [ins for n, ins_list in by_line.items() if n != store for ins in ins_list]
    assert not any(ins.startswith("st.global") for ins in others)


def test_lineinfo_metadata_is_directives_only():
    r = compile_scale(lineinfo=True)
    llvm, ptx = r.outputs["llvm"], r.ptx
    assert re.search(r"!DICompileUnit\(.*emissionKind:\s+DebugDirectivesOnly", llvm)
    assert not re.search(r"emissionKind:\s+FullDebug", llvm)
    assert re.search(r'\.file\s+\d+\s+".*test_lineinfo.py"', ptx)
    assert not re.search(r"\.section\s+\.debug_info", ptx)
    assert ".target sm_90, debug" not in ptx and ".target sm_90" in ptx
    assert r.cubin[:4] == b"\x7fELF"


def test_no_line_tables_by_default():
    r = compile_scale()
    assert "DICompileUnit" not in r.outputs["llvm"] and "!dbg" not in r.outputs["llvm"]
    assert ".loc" not in r.ptx and ".file" not in r.ptx


def test_llvm_locations_follow_the_source_order():
    r = compile_scale(lineinfo=True)
    llvm = r.outputs["llvm"]
    locs = dict(re.findall(r"^!(\d+) = !DILocation\(.*?line: (\d+)", llvm, re.MULTILINE))
    fmul = re.search(r"= fmul float .*!dbg !(\d+)", llvm)
    assert fmul and int(locs[fmul.group(1)]) == line_of(scale, "out[i] = x[i] * a")
    # One subprogram, at the function's first line, in this file.
    assert llvm.count("distinct !DISubprogram") == 1
    assert re.search(r'!DIFile\(.*filename: "test_lineinfo.py"', llvm) or re.search(
        r'!DIFile\(directory: "[^"]*", filename: "test_lineinfo.py"\)', llvm
    )


def test_inlined_device_function_has_inlined_at():
    callee = cuda.jit(device=True)(add_one)

    def caller(x):
        x[0] = 1
        callee(x)

    r = compile_kernel(caller, (int32[::1],), Options(lineinfo=True))
    assert r.outputs["llvm"].count("distinct !DISubprogram") == 2
    inl = [ln for ln in r.ptx.splitlines() if ".loc" in ln and "inlined_at" in ln]
    assert inl, r.ptx
    # The callee's line, inlined at the caller's call line.
    call_line = line_of(caller, "callee(x)")
    body_line = line_of(add_one, "x[0] += 1")
    m = re.search(r"\.loc\s+\d+\s+(\d+)\s+\d+.*inlined_at\s+\d+\s+(\d+)", inl[0])
    assert (int(m.group(1)), int(m.group(2))) == (body_line, call_line)
    assert not re.search(r"^\.weak\s+\.func", r.ptx, re.MULTILINE)


def test_debug_emits_dwarf_with_parameters():
    r = compile_scale(debug=True)
    llvm, ptx = r.outputs["llvm"], r.ptx
    assert re.search(r"!DICompileUnit\(.*emissionKind:\s+FullDebug", llvm)
    assert re.search(r"\.section\s+\.debug_info", ptx)
    for argno, name in enumerate(("x", "out", "a"), start=1):
        md = re.search(
            rf'^!(\d+) = !DILocalVariable\([^)]*arg: {argno}[^)]*name: "{name}"', llvm, re.MULTILINE
        ) or re.search(rf'^!(\d+) = !DILocalVariable\([^)]*name: "{name}"[^)]*', llvm, re.MULTILINE)
        assert md, name
        assert re.search(rf'call void @"llvm\.dbg\.declare"\(.*metadata !{md.group(1)}\b', llvm), (
            name
        )
    # The scalar parameter is a 32-bit float to the debugger.
    var = re.search(r'!DILocalVariable\([^)]*name: "a"[^)]*type: !(\d+)', llvm) or re.search(
        r'!DILocalVariable\([^)]*type: !(\d+)[^)]*name: "a"', llvm
    )
    assert re.search(
        rf"^!{var.group(1)} = !DIBasicType\(.*DW_ATE_float.*size: 32", llvm, re.MULTILINE
    ) or re.search(
        rf"^!{var.group(1)} = !DIBasicType\(.*size: 32.*"
        r"DW_ATE_float",
        llvm,
        re.MULTILINE,
    )
    assert r.cubin[:4] == b"\x7fELF"


def test_jit_lineinfo_option():
    k = cuda.jit(lineinfo=True)(scale)
    assert ".loc" in k.compile(SIG).result.ptx
    assert ".loc" not in cuda.jit(scale).compile(SIG).result.ptx
    with pytest.warns(UserWarning, match="mutually exclusive"):
        cuda.jit(debug=True, lineinfo=True)(scale)


def nested(depth1, depth2, out):
    acc = 0
    for i in range(depth1):
        for j in range(depth2):
            acc += i + j
    out[0] = acc


def test_debug_describes_locals_and_stores_them_at_their_lines():
    r = compile_kernel(nested, (int32, int32, int32[::1]), Options(debug=True, verify=True))
    llvm = r.outputs["llvm"]
    locs = dict(re.findall(r"^!(\d+) = !DILocation\(.*?line: (\d+)", llvm, re.MULTILINE))
    for name in ("acc", "i", "j"):
        # A local (arg: 0), described by llvm.dbg.value where it changes, never declared.
        var = re.search(
            rf'^!(\d+) = !DILocalVariable\(arg: 0,[^)]*name: "{name}"', llvm, re.MULTILINE
        )
        assert var, name
        md = var.group(1)
        assert not re.search(rf'llvm\.dbg\.declare"\([^)]*metadata !{md}\b', llvm), name
        values = re.findall(
            rf'call void @"llvm\.dbg\.value"\(metadata i64 [^,]+, metadata !{md}\b'
            r".*!dbg !(\d+)",
            llvm,
        )
        lines = {int(locs[s]) for s in values}
        expected = {
            "acc": {line_of(nested, "acc = 0"), line_of(nested, "acc += i + j")},
            "i": {line_of(nested, "for i in")},
            "j": {line_of(nested, "for j in")},
        }
        # acc is also merged at the loop headers (its block parameters): those values are
        # described where the header's code starts.
        assert expected[name] <= lines, (name, lines)
        # Each of its values also has a stack slot named after it (LLVM numbers them).
        assert re.search(rf'store i64 [^,]+, i64\* %"{name}(\.\d+)?", !dbg', llvm), name
    assert re.search(r"\.section\s+\.debug_info", r.ptx)
    assert r.cubin[:4] == b"\x7fELF"


@cuda.jit(
    debug=True,
)
def decorated(x):
    # a comment between the def and the body
    x[0] = 1


def test_subprogram_and_prologue_at_the_def_line():
    # Python's first line of the function is its decorator's; the def is 3 lines on.
    assert decorated.py_func.__code__.co_firstlineno == line_of(decorated, "@cuda.jit(")
    decorated.compile((int32[::1],))
    llvm = decorated.inspect_llvm((int32[::1],))
    def_line = line_of(decorated, "def decorated")
    assert re.search(rf"distinct !DISubprogram\(.*line: {def_line},", llvm)
    # The entry block's parameter setup carries the def line's location.
    entry = llvm.split("entry:", 1)[1].split("\n\n", 1)[0]
    first = re.search(r"!dbg !(\d+)", entry).group(1)
    assert re.search(rf"^!{first} = !DILocation\(.*line: {def_line},", llvm, re.MULTILINE)


def cabs(r, a):
    r[0] = abs(a)


def test_debug_describes_complex_as_real_and_imag():
    from cujit.types import complex64

    r = compile_kernel(cabs, (float32[::1], complex64), Options(debug=True, verify=True))
    llvm = r.outputs["llvm"]
    var = re.search(r'!DILocalVariable\(arg: 2,[^)]*name: "a"[^)]*type: !(\d+)', llvm)
    struct = re.search(
        rf"^!{var.group(1)} = distinct !DICompositeType\(.*elements: !(\d+)"
        r".*size: 64.*tag: DW_TAG_structure_type",
        llvm,
        re.MULTILINE,
    )
    assert struct, llvm[-3000:]
    members = re.search(rf"^!{struct.group(1)} = !{{(.*)}}", llvm, re.MULTILINE).group(1)
    ids = re.findall(r"!(\d+)", members)
    got = []
    for i in ids:
        m = re.search(
            rf'^!{i} = !DIDerivedType\(.*name: "(\w+)", offset: (\d+), size: 32', llvm, re.MULTILINE
        )
        got.append((m.group(1), int(m.group(2))))
    # complex64 is two float32 in memory: real at bit 0, imag at bit 32.
    assert got == [("real", 0), ("imag", 32)]
    assert r.cubin[:4] == b"\x7fELF"
