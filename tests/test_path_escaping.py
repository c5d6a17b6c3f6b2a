"""A kernel whose source folder's name holds ``"``, ``\\`` and a non-ASCII character
compiles with line tables and debug information to a cubin (ptxas reads no ``\\"`` in a
``.file`` string), and the report still finds and escapes its lines."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

from cujit import cuda
from cujit.codegen.debuginfo import debug_path
from cujit.report import stages
from cujit.report.html import render_html
from cujit.report.model import build_report
from cujit.types import float32

FOLDER = 'we"ird\\dir é'
SOURCE = """\
from cujit import cuda


def k(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i * 2.0
"""
SIG = "void(float32[:])"


@pytest.fixture
def kern(tmp_path):
    folder = tmp_path / FOLDER
    folder.mkdir()
    path = folder / "kern.py"
    path.write_text(SOURCE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("kern_in_odd_folder", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module.k, str(path)
    sys.modules.pop("kern_in_odd_folder", None)


def _ptx_file(ptx: str) -> str:
    (text,) = re.findall(r'^\s*\.file\s+\d+\s+"((?:[^"\\]|\\.)*)"', ptx, re.M)
    return text


def test_debug_path_writes_a_quote_as_percent_22():
    assert debug_path('/a"b/c\\d é.py') == "/a%22b/c\\d é.py"
    assert debug_path("<string>") == "<string>"


@pytest.mark.parametrize(
    "options", [{"lineinfo": True}, {"debug": True, "opt": False}], ids=["lineinfo", "debug"]
)
def test_kernel_compiles_to_a_cubin(kern, options):
    fn, path = kern
    spec = cuda.jit(fn, **options).compile(SIG)
    assert spec.result.cubin[:4] == b"\x7fELF"
    text = _ptx_file(spec.result.ptx)
    assert '"' not in text.replace('\\"', "")  # no bare quote: the string ends at the close
    assert stages._c_string(text) == debug_path(path)
    assert "%22" in text and "\\303\\251" in text  # libNVVM's octal for é's bytes


@pytest.mark.parametrize(
    "options", [{"lineinfo": True}, {"debug": True, "opt": False}], ids=["lineinfo", "debug"]
)
def test_compile_api_and_lto_reach_a_cubin(kern, options):
    fn, _ = kern
    cubin, _ = cuda.compile(fn, SIG, output="cubin", **options)
    assert cubin[:4] == b"\x7fELF"
    lto = cuda.jit(fn, lto=True, **options).compile(SIG)
    assert lto.result.cubin[:4] == b"\x7fELF"


def test_llvm_debug_info_names_the_file_escaped(kern):
    fn, path = kern
    spec = cuda.jit(fn, lineinfo=True).compile(SIG)
    llvm = str(spec.result.outputs["llvm"])
    (directory,) = re.findall(r'!DIFile\(.*directory: "((?:[^"\\]|\\.)*)"', llvm)
    assert '"' not in directory and "\\5c" in directory and "\\c3\\a9" in directory
    assert stages._llvm_string(directory) + "/kern.py" == debug_path(path)


def test_report_maps_lines_and_escapes_the_path(kern):
    fn, path = kern
    rep = build_report(fn, (float32[::1],), disassemble=False)
    views = {v.name: v for v in rep.stages}
    for name in ("llvm", "ptx"):
        lines = {n for _, n in views[name].lines if n is not None}
        assert {6, 7} <= lines, name  # the kernel's lines found through the odd path
    page = render_html(rep)
    assert path not in page  # the raw path would carry a bare quote into the HTML
    assert "we&quot;ird\\dir é" in page
