"""The frame of a debug build (``debug=True``, codegen/debugvars.py), as numba lays out
its -O0 code: an entry block of zeroed slots with no line, then the code; a slot per
temporary and per ``return``; blocks in source order; an edge's store into a merged
variable at its definition's location.  Checked on the LLVM text of small kernels,
then compiled by libNVVM and linked by nvJitLink (no GPU needed)."""

from __future__ import annotations

import inspect
import re

from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import float64, int32, int64

DEBUG = Options(debug=True, opt=0, verify=True)


def arithmetic(a):
    b = a + 1.25
    c = b * 2.5
    a = b / c


def branches(dest, n):
    if n:
        c = 5
    else:
        c = 1
    dest[0] = c


def kernel_text(llvm: str, name: str) -> list[str]:
    """The lines of kernel ``name``'s definition, ``define`` to its closing brace."""
    lines = llvm.splitlines()
    start = next(k for k, ln in enumerate(lines) if ln.startswith(f'define void @"{name}"'))
    end = lines.index("}", start)
    return lines[start + 2 : end]  # after "define ... {" and "{"


def blocks(body: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = None
    for ln in body:
        if re.match(r"^[\w.$\"-]+:$", ln):
            current = ln[:-1].strip('"')
            out[current] = []
        else:
            out[current].append(ln.strip())
    return out


def source_line(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, ln in enumerate(lines) if text in ln)


def dilocation_line(llvm: str, ref: str) -> int:
    m = re.search(rf"^{ref} = !DILocation\([^\n]*line: (\d+)", llvm, re.M)
    assert m, ref
    return int(m.group(1))


def compile_llvm(fn, types) -> str:
    result = compile_kernel(fn, types, DEBUG)  # all the way to the cubin: libNVVM takes it
    assert result.cubin
    return result.outputs["llvm"]


def test_the_entry_block_holds_only_zeroed_slots_and_no_line():
    llvm = compile_llvm(arithmetic, (float64,))
    entry = blocks(kernel_text(llvm, "arithmetic"))["entry"]
    *slots, branch = entry
    assert re.fullmatch(r'br label %"start"', branch), branch
    assert not any("!dbg" in ln for ln in entry)
    allocas = [ln for ln in slots if " = alloca " in ln]
    others = [ln for ln in slots if " = alloca " not in ln]
    assert all(ln.startswith("store ") for ln in others), others
    names = [re.match(r'%"([^"]+)" = alloca', ln).group(1) for ln in allocas]
    # The parameter's slot, the two constants' (temporaries), b, c, the new a; the
    # parameters' record (opt=0); the return's None and its value.
    assert names[:6] == ["a.1", "$v1", "b", "$v3", "c", "a.2"], names
    assert "$const.none" in names and "$return_value" in names
    doubles = [n for n, ln in zip(names, allocas, strict=True) if "alloca double" in ln]
    assert len(doubles) == 6
    for name in names:  # every slot but the parameter record starts zeroed
        if name != "params":
            assert any(
                re.match(rf'store \S+ (0\.0|0|null), \S+ %"{re.escape(name)}"$', ln)
                for ln in others
            ), name


def test_temporaries_are_stored_where_computed_and_described_by_no_variable():
    llvm = compile_llvm(arithmetic, (float64,))
    code = "\n".join(kernel_text(llvm, "arithmetic"))
    # 1.25 and 2.5, exactly (binary fractions), into their slots, at their lines.
    for value, text in ((0x3FF4000000000000, "1.25"), (0x4004000000000000, "2.5")):
        m = re.search(rf'store double 0x{value:x}, double\* %"\$v\d+", !dbg (!\d+)', code)
        assert m, text
        assert dilocation_line(llvm, m.group(1)) == source_line(arithmetic, text)
    assert not re.search(r'DILocalVariable\([^\n]*name: "\$', llvm)
    assert re.findall(r'DILocalVariable\([^\n]*name: "(\w+)"', llvm).count("b") == 1


def test_blocks_follow_the_source_and_edge_stores_share_the_definition():
    llvm = compile_llvm(branches, (int32[::1], int64))
    body = kernel_text(llvm, "branches")
    stores = {v: [ln for ln in body if f"store i64 {v}," in ln] for v in (1, 5)}
    # The if body (c = 5) before the else (c = 1), as the source reads.
    first5 = next(k for k, ln in enumerate(body) if "store i64 5," in ln)
    first1 = next(k for k, ln in enumerate(body) if "store i64 1," in ln)
    assert first5 < first1
    for value, lines in stores.items():
        assert len(lines) == 2, lines  # c's own slot, and the merged c's slot on the edge
        refs = {ln.split("!dbg ")[1] for ln in lines}
        assert len(refs) == 1, lines  # one location for the one assignment
        assert dilocation_line(llvm, refs.pop()) == source_line(branches, f"c = {value}")
    # Each edge describes the merged variable right after its store.
    for k, ln in enumerate(body):
        if re.search(r'store i64 [15], i64\* %"c\.2"', ln):
            assert body[k + 1].strip().startswith('call void @"llvm.dbg.value"(metadata i64')
    branches_ = [ln for ln in body if ln.strip().startswith("br i1")]
    assert len(branches_) == 1  # no bounds check: debug mode alone does not ask for one
    ref = branches_[0].split("!dbg ")[1]
    assert dilocation_line(llvm, ref) == source_line(branches, "if n:")


def test_a_merged_value_is_read_at_its_blocks_line_not_the_def_line():
    llvm = compile_llvm(branches, (int32[::1], int64))
    body = kernel_text(llvm, "branches")
    load = next(ln for ln in body if re.search(r'= load i64, i64\* %"c\.2"', ln))
    assert dilocation_line(llvm, load.split("!dbg ")[1]) == source_line(branches, "dest[0] = c")
    defline = source_line(branches, "def branches")
    after_start = body[body.index("start:") + 1 :]
    code = [ln for ln in after_start if "!dbg" in ln and "llvm.dbg.declare" not in ln]
    lines = [dilocation_line(llvm, ln.split("!dbg ")[1].split(",")[0]) for ln in code]
    first_body = lines.index(source_line(branches, "if n:"))
    assert defline not in lines[first_body:]  # the def line only in the prologue
