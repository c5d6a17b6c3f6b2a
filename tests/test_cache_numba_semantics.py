"""The disk cache as numba's: one index file per function shared with numba's CPU cache
(``numba.njit(cache=True)`` of the same function), globals frozen as constants of the
compile while the source file is unchanged, ``kernel.recompile()`` replacing the entries,
and ``cache=True`` refused for a kernel that links files."""

from __future__ import annotations

import importlib
import os
import pickle
import struct
import sys
import textwrap
import time

import numpy as np
import pytest

from cujit import cuda, float32, float64

SOURCE = """
import numpy as np
from cujit import cuda

Z = {z}


def shared(r, x):
    r[0] = x[0] + Z


kern = cuda.jit(cache=True, target="cuda")(shared)
{cpu}
"""
CPU = "import numba\ncpu = numba.njit(cache=True)(shared)\n"


def _mark(value: float) -> str:
    """How LLVM IR spells a double constant (llvmlite writes its bits in hex)."""
    return "0x" + struct.pack(">d", value).hex()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A module beside its own __pycache__; ``load()`` imports it afresh."""
    for name in ("CUJIT_CACHE_DIR", "CUJIT_CACHE", "CUJIT_CACHE_KEY_GLOBALS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))
    monkeypatch.syspath_prepend(str(tmp_path))
    name = f"cache_numba_fodder_{os.getpid()}"
    path = tmp_path / f"{name}.py"

    stamp = [int(time.time())]

    def write(z: float = 1234.5, cpu: bool = False) -> None:
        path.write_text(textwrap.dedent(SOURCE.format(z=repr(z), cpu=CPU if cpu else "")))
        # Python checks a .pyc by the source's size and mtime in whole seconds: two
        # writes of one size within a second would reload the first one's bytecode
        # wherever bytecode is written, so each write gets a later second.
        stamp[0] += 2
        os.utime(path, (stamp[0], stamp[0]))

    def load():
        sys.modules.pop(name, None)
        importlib.invalidate_caches()
        return importlib.import_module(name)

    yield write, load, tmp_path / "__pycache__"
    sys.modules.pop(name, None)


def _files(folder) -> list[str]:
    if not folder.is_dir():
        return []
    return sorted(n for n in os.listdir(folder) if not n.endswith(".pyc"))


def _llvm(kernel, types) -> str:
    return str(kernel.overloads[types].result.outputs["llvm"])


def _hits(kernel) -> tuple[int, int]:
    st = kernel.stats
    return sum(st.cache_hits.values()), sum(st.cache_misses.values())


F64 = (float64[::1], float64[::1])
F32 = (float32[::1], float32[::1])


def _run_cpu(mod, value):
    out = np.zeros(1, dtype=np.asarray(value).dtype)
    mod.cpu(out, np.asarray([value]))
    return out[0]


def test_numba_cpu_cache_and_cujit_share_one_index(project):
    pytest.importorskip("numba")
    write, load, pycache = project
    write(z=2.0, cpu=True)
    mod = load()
    assert _run_cpu(mod, 5.0) == 7.0  # numba's CPU cache: its index and one data file
    assert len(_files(pycache)) == 2
    mod.kern.compile(F64)
    files = _files(pycache)
    assert len(files) == 3 and sum(f.endswith(".nbi") for f in files) == 1
    assert _run_cpu(mod, np.float32(5.5)) == np.float32(7.5)
    mod.kern.compile(F32)
    assert len(_files(pycache)) == 5
    assert _hits(mod.kern) == (0, 2) and sum(mod.cpu.stats.cache_misses.values()) == 2
    mtimes = {f: os.path.getmtime(pycache / f) for f in _files(pycache)}
    again = load()  # a fresh import: both caches hit, and nothing is written
    assert _run_cpu(again, 2.0) == 4.0 and _run_cpu(again, np.float32(2.5)) == 4.5
    assert sum(again.cpu.stats.cache_hits.values()) == 2
    again.kern.compile(F64)
    again.kern.compile(F32)
    assert _hits(again.kern) == (2, 0)
    assert {f: os.path.getmtime(pycache / f) for f in _files(pycache)} == mtimes


def test_numba_reads_an_index_cujit_wrote_first(project):
    pytest.importorskip("numba")
    write, load, pycache = project
    write(z=2.0, cpu=True)
    mod = load()
    mod.kern.compile(F64)
    (index,) = [f for f in _files(pycache) if f.endswith(".nbi")]
    with open(pycache / index, "rb") as f:  # numba's format: version, then (stamp, table)
        pickle.load(f)
        _, table = pickle.loads(f.read())
    assert [k[0] for k in table] == ["cujit"]
    assert _run_cpu(mod, 5.0) == 7.0  # numba's reader loads it and adds its entry
    assert len(_files(pycache)) == 3
    again = load()
    again.kern.compile(F64)
    assert _hits(again.kern) == (1, 0) and _run_cpu(again, 1.0) == 3.0
    assert sum(again.cpu.stats.cache_hits.values()) == 1


def test_a_global_changed_at_run_time_is_not_seen_until_recompile(project):
    write, load, pycache = project
    write(z=1234.5)
    first = load()
    first.kern.compile(F64)
    assert _mark(1234.5) in _llvm(first.kern, F64)
    mod = load()
    mod.Z = 4321.5  # numba: globals are constants of the compile; the entry is reused
    mod.kern.compile(F64)
    assert _hits(mod.kern) == (1, 0) and _mark(1234.5) in _llvm(mod.kern, F64)
    mod.kern.recompile()  # compiled afresh with the value of now, the entry replaced
    assert _mark(4321.5) in _llvm(mod.kern, F64) and _hits(mod.kern) == (1, 1)
    entries = [f for f in _files(pycache) if f.endswith(".cujit")]
    assert len(entries) == 1
    later = load()  # Z is 1234.5 again in the module, but the entry is the recompiled one
    later.kern.compile(F64)
    assert _hits(later.kern) == (1, 0) and _mark(4321.5) in _llvm(later.kern, F64)


def test_an_edited_source_file_misses_and_drops_its_old_entries(project):
    write, load, pycache = project
    write(z=1234.5)
    load().kern.compile(F64)
    (old,) = [f for f in _files(pycache) if f.endswith(".cujit")]
    write(z=4321.5)
    mod = load()
    mod.kern.compile(F64)
    assert _hits(mod.kern) == (0, 1) and _mark(4321.5) in _llvm(mod.kern, F64)
    entries = [f for f in _files(pycache) if f.endswith(".cujit")]
    assert len(entries) == 1 and entries != [old]


def test_key_globals_switch_keys_the_values(project, monkeypatch):
    write, load, _ = project
    monkeypatch.setenv("CUJIT_CACHE_KEY_GLOBALS", "1")
    write(z=1234.5)
    load().kern.compile(F64)
    mod = load()
    mod.Z = 4321.5
    mod.kern.compile(F64)
    assert _hits(mod.kern) == (0, 1) and _mark(4321.5) in _llvm(mod.kern, F64)


def test_cache_true_with_link_is_refused_as_numba_does(tmp_path, monkeypatch):
    ptx = tmp_path / "lib.ptx"
    ptx.write_text("//\n.version 7.0\n.target sm_50\n.address_size 64\n")
    monkeypatch.delenv("CUJIT_CACHE_LINKED", raising=False)
    with pytest.raises(RuntimeError, match="Cannot pickle CUDACodeLibrary with linking files"):

        @cuda.jit("void()", cache=True, link=[str(ptx)], target="cuda")
        def f():
            pass


def test_an_index_numba_wrote_keeps_its_version_stamp_and_entries(project):
    from cujit.cache import layout

    write, load, pycache = project
    write(z=2.0)
    mod = load()
    pycache.mkdir(exist_ok=True)
    index = layout.index_path(pycache, mod.shared)
    other_stamp = (1234567.0, 321)  # another numba's stamp: (mtime, size)
    numba_key = ("(float64,)", ("x86_64", "skylake", ""), ("h1", "h2"))
    index.write_bytes(
        pickle.dumps("0.61.0", protocol=-1)
        + pickle.dumps((other_stamp, {numba_key: "numba.1.nbc"}), protocol=-1)
    )
    mod.kern.compile(F64)
    with open(index, "rb") as f:
        version = pickle.load(f)
        stamp, table = pickle.loads(f.read())
    assert version == "0.61.0" and stamp == other_stamp
    assert table[numba_key] == "numba.1.nbc"
    (ours,) = [k for k in table if k[0] == "cujit"]
    assert (pycache / table[ours]).is_file() and table[ours].endswith(".cujit")


IMPORTING = """
from cujit import cuda
from {consts} import X
import {consts}

N = {consts}.X * 2


def shared(r, x):
    r[0] = x[0] + X + N


kern = cuda.jit(cache=True, target="cuda")(shared)
"""


def test_a_global_imported_or_computed_from_another_file_is_keyed_by_value(project, tmp_path):
    # Only literals the kernel's own file binds are frozen by its digest: an edit of the
    # file a value comes from must miss, never serve the old constant.
    write, load, pycache = project
    consts = f"cache_consts_fodder_{os.getpid()}"
    mod_name = f"cache_importing_fodder_{os.getpid()}"
    (tmp_path / f"{mod_name}.py").write_text(IMPORTING.format(consts=consts))

    def run(x: float):
        (tmp_path / f"{consts}.py").write_text(f"X = {x!r}\n")
        for name in (consts, mod_name):
            sys.modules.pop(name, None)
        importlib.invalidate_caches()
        mod = importlib.import_module(mod_name)
        mod.kern.compile(F64)
        return mod.kern

    try:
        first = run(1000.25)
        assert _hits(first) == (0, 1) and _mark(1000.25) in _llvm(first, F64)
        assert _mark(2000.5) in _llvm(first, F64)  # N = X * 2
        again = run(1000.25)
        assert _hits(again) == (1, 0)  # nothing changed: the entry is used
        edited = run(7.125)
        assert _hits(edited) == (0, 1)
        assert _mark(7.125) in _llvm(edited, F64) and _mark(14.25) in _llvm(edited, F64)
    finally:
        for name in (consts, mod_name):
            sys.modules.pop(name, None)
