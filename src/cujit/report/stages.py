"""Each stage's printed output, line by line, with the Python line each line came from.

The IR stages know it exactly (every op carries its ``Loc``); the bytecode and CFG
listings end in ``# line:col``; LLVM IR lines name a ``DILocation`` through
``!dbg``, PTX lines follow ``.loc`` directives, and SASS from ``nvdisasm -g``
follows its ``//## File ..., line N`` comments.  A line that maps to no Python
line of the kernel's file gets None.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

Line = tuple[str, "int | None"]


@dataclass
class StageView:
    """One stage as the report shows it: its lines and a note (why it is empty)."""

    name: str
    lines: list[Line] = field(default_factory=list)
    note: str = ""

    def python_lines(self) -> set[int]:
        return {n for _, n in self.lines if n is not None}


_TRAILING_LOC = re.compile(r"#\s*(\d+):\d+\s*$")


def listing_view(name: str, text: str) -> StageView:
    """Bytecode and CFG listings: each instruction ends in ``# line:col``."""
    lines = []
    for ln in text.rstrip("\n").splitlines():
        m = _TRAILING_LOC.search(ln)
        lines.append((ln, int(m.group(1)) if m else None))
    return StageView(name, lines)


def ir_view(name: str, fn, path: str) -> StageView:
    """The IR printer's text (``ir.format_function``), one op a line, with its loc."""
    from cujit.ir.printer import format_op

    def line_of(loc) -> int | None:
        return loc.line if loc is not None and loc.file == path and loc.line > 0 else None

    args = ", ".join(
        f"{v}: {v.type} {n}" if v.type is not None else f"{v} {n}"
        for v, n in zip(fn.args, fn.arg_names, strict=True)
    )
    lines: list[Line] = [(f"func {fn.name}({args})", line_of(fn.loc))]
    for block in fn.blocks:
        first = block.ops[0].loc if block.ops else block.term.loc
        params = ", ".join(f"{p}: {p.type}" if p.type is not None else str(p) for p in block.params)
        head = f"block{block.id}" + (f"({params})" if params else "") + ":"
        lines.append((head, line_of(first)))
        for op in (*block.ops, block.term):
            lines.append(("  " + format_op(op), line_of(op.loc)))
    return StageView(name, lines)


_DBG_REF = re.compile(r"!dbg !(\d+)")
_MD_DEF = re.compile(r"^!(\d+) = (?:distinct )?!(\w+)\((.*)\)\s*$")
_FIELD = re.compile(r"(\w+): (\"(?:[^\"\\]|\\.)*\"|[^,]+)")


_LLVM_ESCAPE = re.compile(rb"\\([0-9A-Fa-f]{2})")
_C_ESCAPE = re.compile(rb"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))", re.DOTALL)


def _llvm_string(text: str) -> str:
    """An LLVM IR string's value (``\\XX`` escapes: llvmlite's for ``"``, ``\\`` and
    non-ASCII bytes)."""
    raw = _LLVM_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), text.encode())
    return raw.decode(errors="replace")


def debug_path(path: str) -> str:
    """``path`` as the kernel's debug information names it (``codegen.debuginfo``,
    which loads llvmlite: imported when a report reads a stage)."""
    from cujit.codegen.debuginfo import debug_path as named

    return named(path)


def _c_string(text: str) -> str:
    """A PTX (or nvdisasm) string's value: libNVVM writes it with C's escapes."""

    def byte(m: re.Match) -> bytes:
        if m.group(1):
            return bytes([int(m.group(1), 8) & 0xFF])
        return bytes([int(m.group(2), 16)]) if m.group(2) else m.group(3)

    return _C_ESCAPE.sub(byte, text.encode()).decode(errors="replace")


def _metadata(text: str) -> dict[str, tuple[str, dict[str, str]]]:
    table = {}
    for ln in text.splitlines():
        m = _MD_DEF.match(ln)
        if m:
            fields = {
                k: _llvm_string(v.strip()[1:-1]) if v.startswith('"') else v.strip()
                for k, v in _FIELD.findall(m.group(3))
            }
            table[m.group(1)] = (m.group(2), fields)
    return table


def _md_file(table, ref: str, depth: int = 0) -> str | None:
    """The file path of a debug scope (``!N``), following ``scope:`` links."""
    kind, fields = table.get(ref.lstrip("!"), ("", {}))
    if kind == "DIFile":
        return os.path.join(fields.get("directory", ""), fields.get("filename", ""))
    nxt = fields.get("file") or fields.get("scope")
    return _md_file(table, nxt, depth + 1) if nxt and depth < 8 else None


def llvm_view(text: str, path: str) -> StageView:
    """LLVM IR: an instruction's line is its ``!dbg`` location's, when that location (or
    the call site it was inlined at) is in the kernel's file.  The text may hold several
    modules (the kernel's, then its device functions'), each numbering its own metadata."""
    modules = re.split(r"(?m)^(?=; ModuleID = )", text.rstrip("\n"))
    lines = []
    for module in (m for m in modules if m):
        lines += [("", None)] if lines else []  # the blank line between modules
        lines += _module_lines(module, path)
    return StageView("llvm", lines)


def _module_lines(text: str, path: str) -> list[Line]:
    table = _metadata(text)
    target = debug_path(path)

    def line_of(ref: str, depth: int = 0) -> int | None:
        kind, fields = table.get(ref, ("", {}))
        if kind != "DILocation":
            return None
        if _md_file(table, fields.get("scope", "")) == target:
            return int(fields.get("line", 0)) or None
        inlined = fields.get("inlinedAt", "").lstrip("!")
        return line_of(inlined, depth + 1) if inlined and depth < 8 else None

    lines = []
    for ln in text.rstrip("\n").splitlines():
        m = _DBG_REF.search(ln)
        lines.append((ln, line_of(m.group(1)) if m and not ln.startswith("!") else None))
    return lines


_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(.*)$")
_INLINED_AT = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+\d+")


def ptx_view(text: str, path: str) -> StageView:
    """PTX: every line after a ``.loc`` belongs to its line (a location in another file
    counts by the kernel line it was inlined at); line 0 and labels end a run."""
    files = {m.group(1): m.group(2) for m in map(_PTX_FILE.match, text.splitlines()) if m}
    target = debug_path(path)
    kernel_files = {k for k, v in files.items() if _c_string(v) == target}
    current: int | None = None
    lines = []
    for ln in text.rstrip("\n").splitlines():
        m = _PTX_LOC.match(ln)
        if m:
            current = _ptx_loc_line(m, kernel_files)
        elif ln.startswith(("}", ".visible", ".entry", ".func")):
            current = None  # a function ends or begins: no line until its first .loc
        lines.append((ln, current))
    return StageView("ptx", lines)


def _ptx_loc_line(m: re.Match, kernel_files: set[str]) -> int | None:
    line = int(m.group(2))
    if m.group(1) in kernel_files and line > 0:
        return line
    inl = _INLINED_AT.search(m.group(3))
    if inl and inl.group(1) in kernel_files:
        return int(inl.group(2)) or None
    return None


_SASS_LINE = re.compile(r'//## File "([^"]*)", line (\d+)')


def find_disassembler() -> str | None:
    """nvdisasm (it prints line comments), else cuobjdump: from NVIDIA's wheels or the
    CUDA toolkit (``cuda.pathfinder``), else on PATH."""
    for name in ("nvdisasm", "cuobjdump"):
        try:
            from cuda.pathfinder import find_nvidia_binary_utility

            found = find_nvidia_binary_utility(name)
        except Exception:  # noqa: BLE001 - an old pathfinder: PATH still works
            found = None
        found = found or shutil.which(name)
        if found:
            return found
    return None


def sass_view(cubin: bytes | None, path: str, timeout: float = 30.0) -> StageView:
    """SASS from ``nvdisasm -g`` (with its line comments), else ``cuobjdump -sass``;
    an empty view saying why when neither tool is on PATH."""
    if cubin is None:
        return StageView("sass", note="no cubin: the compile stopped before linking")
    tool = find_disassembler()
    if tool is None:
        return StageView(
            "sass",
            note="SASS is absent: neither nvdisasm nor cuobjdump was "
            "found (the nvidia-cuda-nvdisasm wheel or the CUDA "
            "toolkit provides them)",
        )
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "kernel.cubin")
        with open(f, "wb") as out:
            out.write(cubin)
        argv = [tool, "-g", "-c", f] if tool.endswith("nvdisasm") else [tool, "-sass", f]
        try:
            proc = subprocess.run(
                argv, capture_output=True, text=True, timeout=timeout, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return StageView("sass", note=f"{os.path.basename(tool)} failed: {exc}")
    if proc.returncode != 0:
        return StageView("sass", note=f"{os.path.basename(tool)} failed: {proc.stderr[:500]}")
    return _sass_lines(proc.stdout, path)


def _sass_lines(text: str, path: str) -> StageView:
    current, target = None, debug_path(path)
    lines = []
    for ln in text.rstrip("\n").splitlines():
        m = _SASS_LINE.search(ln)
        if m:
            same = _c_string(m.group(1)) == target
            current = int(m.group(2)) if same else None
        lines.append((ln, current))
    return StageView("sass", lines)
