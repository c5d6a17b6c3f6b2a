"""The disk cache on the CPU target: an entry keeps the host object code MCJIT made and
the launch metadata, and a later process launches from it without running a stage.

In-process tests go through ``compile_cached`` (every call reads the entry file, as a
new process does); the two-process tests run a module twice in fresh interpreters.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from cujit import cuda, events, float32, int64
from cujit.cache import compile_cached, key, store
from cujit.diagnostics import CujitError
from cujit.options import Options
from cujit.targets.cpu import engine

SRC = str(Path(__file__).resolve().parents[1] / "src")
CPU = Options(target="cpu")
TYPES = (float32, float32[::1], float32[::1])


def axpb(a, x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + 0.5


def block_sums(x, out):
    # syncthreads: the coroutine runner and its per-block scheduler
    buf = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    step = 32
    while step > 0:
        if t < step:
            buf[t] += buf[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]


def off_the_end(x):
    x[cuda.grid(1) + 1] = 1.0  # the last thread writes past the end


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    return tmp_path


def entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix == store.SUFFIX)


def run_axpb(result, n=300) -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(-3.0, 5.0, n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    result.outputs["native"].launch((2, 1, 1), (256, 1, 1), 0, TYPES, (np.float32(1.5), x, out))
    return out, x * np.float32(1.5) + np.float32(0.5)


def test_miss_then_hit_runs_no_stage_and_gives_the_same_results(cache):
    compiled: list = []
    listener = events.subscribe(lambda kind, name, target: compiled.append(kind))
    try:
        miss = compile_cached(axpb, TYPES, CPU)
        assert "native" in miss.times and compiled.count(events.COMPILE) == 1
        (entry,) = entries(cache)
        hit = compile_cached(axpb, TYPES, CPU)
    finally:
        events.unsubscribe(listener)
    assert list(hit.times) == ["cache"]  # no stage ran
    assert compiled.count(events.COMPILE) == 1
    assert hit.outputs["native"] is not miss.outputs["native"]
    got, want = run_axpb(hit)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert np.array_equal(got, run_axpb(miss)[0])  # the same code: the same bits
    assert hit.record == miss.record
    kernel, fresh = hit.outputs["native"], miss.outputs["native"]
    assert kernel.llvm_ir == fresh.llvm_ir and kernel.optimized_llvm_ir == fresh.optimized_llvm_ir
    assert store.decode(entry.read_bytes())[0]["target"] == "cpu"


def test_barrier_kernel_from_the_cache(cache):
    types = (float32[::1], float32[::1])
    compile_cached(block_sums, types, CPU)
    hit = compile_cached(block_sums, types, CPU)
    assert list(hit.times) == ["cache"]
    x = (np.arange(256, dtype=np.float32) % 7) - 2.5
    out = np.full(4, np.nan, np.float32)
    hit.outputs["native"].launch((4, 1, 1), (64, 1, 1), 0, types, (x, out))
    np.testing.assert_allclose(out, x.reshape(4, 64).sum(axis=1), rtol=1e-5)


def test_a_hit_keeps_the_bounds_checks_and_their_source_lines(cache):
    types = (float32[::1],)
    compile_cached(off_the_end, types, CPU)
    hit = compile_cached(off_the_end, types, CPU)
    assert list(hit.times) == ["cache"] and hit.record.debug_sites
    x = np.zeros(8, np.float32)
    with pytest.raises(IndexError, match="out of bounds") as caught:
        hit.outputs["native"].launch((1, 1, 1), (8, 1, 1), 0, types, (x,))
    line = off_the_end.__code__.co_firstlineno + 1
    assert f"line {line}" in str(caught.value) and __file__ in str(caught.value)


def _truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _flip_a_code_byte(data: bytes) -> bytes:
    middle = len(data) - 40
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


def _rewritten(change):
    def rewrite(data: bytes) -> bytes:
        header, sections = store.decode(data)
        header.pop("sections")
        change(header, sections)
        return store.encode(header, sections)  # a whole file, checksum right again

    return rewrite


def _other_host(header, sections):
    header["host"] = header["host"].replace("cpu=", "cpu=other-")


def _other_llvmlite(header, sections):
    header["host"] = header["host"].replace("llvmlite=", "llvmlite=0.1+")


def _no_object(header, sections):
    sections["object"] = b""


def _object_garbage(header, sections):
    sections["object"] = b"\x7fELF" + b"\x00" * 60


def _object_needing_an_unknown_symbol(header, sections):
    # Well-formed object code that calls a function no library of this process has:
    # MCJIT would abort the process on loading it.
    from llvmlite import binding as llvm

    module = llvm.parse_assembly(
        "declare void @cujit_test_no_such_function()\n"
        "define void @f() {\n  call void @cujit_test_no_such_function()\n  ret void\n}\n"
    )
    module.triple = engine.host_triple()
    sections["object"] = engine.host_machine().emit_object(module)


def _bad_state(header, sections):
    header["cpu"]["static_shared"] = "lots"


def _unknown_exception(header, sections):
    header["sites"] = [[1, None, ["no_such_module_here", "Oops"], "m", False]]


DAMAGES = {
    "truncated": (_truncate, "damaged"),
    "a flipped byte": (_flip_a_code_byte, "damaged"),
    "another CPU": (_rewritten(_other_host), "another host"),
    "another llvmlite": (_rewritten(_other_llvmlite), "another host"),
    "no object code": (_rewritten(_no_object), "lacks a section"),
    "object code that is not an object": (_rewritten(_object_garbage), "does not load"),
    "object code needing an unknown symbol": (
        _rewritten(_object_needing_an_unknown_symbol),
        "cujit_test_no_such_function",
    ),
    "launch metadata of the wrong type": (_rewritten(_bad_state), "metadata"),
    "an exception class this process lacks": (_rewritten(_unknown_exception), "metadata"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_or_foreign_entry_is_refused_with_a_warning(cache, damage):
    change, words = DAMAGES[damage]
    compile_cached(axpb, TYPES, CPU)
    (path,) = entries(cache)
    path.write_bytes(change(path.read_bytes()))
    with pytest.warns(RuntimeWarning, match=f"refused the kernel cache entry.*{words}"):
        again = compile_cached(axpb, TYPES, CPU)
    assert "native" in again.times  # compiled afresh, not loaded
    got, want = run_axpb(again)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hit = compile_cached(axpb, TYPES, CPU)  # the fresh entry replaced the bad one
    assert list(hit.times) == ["cache"]
    np.testing.assert_allclose(run_axpb(hit)[0], want, rtol=1e-6)


def test_another_host_identity_is_another_key(cache, monkeypatch):
    first = key.kernel_key(axpb, TYPES, CPU)
    compile_cached(axpb, TYPES, CPU)
    monkeypatch.setattr(engine, "host_identity", lambda: "x86_64 cpu=elsewhere features=-avx")
    monkeypatch.setattr(key, "_host_env", None)  # as a process on that host
    assert key.kernel_key(axpb, TYPES, CPU) != first
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a plain miss: the entry of this host is elsewhere
        other = compile_cached(axpb, TYPES, CPU)
    assert "native" in other.times and len(entries(cache)) == 2


def test_cpu_and_cuda_keys_differ():
    assert key.kernel_key(axpb, TYPES, CPU) != key.kernel_key(axpb, TYPES, Options())


def test_cpu_keys_cover_lines_the_checks_name():
    def shifted(a, x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + 0.5

    moved = shifted.__code__.replace(co_firstlineno=shifted.__code__.co_firstlineno + 3)
    twin = type(shifted)(moved, shifted.__globals__, "shifted")
    assert key.kernel_key(shifted, TYPES, CPU) != key.kernel_key(twin, TYPES, CPU)
    gpu = Options()
    assert key.kernel_key(shifted, TYPES, gpu) == key.kernel_key(twin, TYPES, gpu)


# -- two processes -----------------------------------------------------------------

MODULE = """
import numpy as np
from cujit import cuda


@cuda.jit(target="cpu", cache=True)
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit(target="cpu", cache=True)
def prefix_pairs(x, out):
    tile = cuda.shared.array(32, np.int64)
    t = cuda.threadIdx.x
    tile[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = tile[t] + tile[(t + 1) % 32]
"""

DRIVER = """
import json, sys
import numpy as np
from cujit import events
sys.path.insert(0, sys.argv[1])
compiled = []
events.subscribe(lambda kind, name, target: compiled.append(name) if kind == "compile" else None)
import cachedmod as m
x = np.linspace(-1.0, 2.0, 1000).astype(np.float32)
y = np.full(1000, 0.25, np.float32)
out = np.full(1000, np.nan, np.float32)
m.saxpy[4, 256](out, np.float32(3.0), x, y)
xi = np.arange(64, dtype=np.int64) * 3 - 20
pairs = np.full(64, -999, np.int64)
m.prefix_pairs[2, 32](xi, pairs)
stats = {k.__name__: [sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values())]
         for k in (m.saxpy, m.prefix_pairs)}
(asm,) = m.saxpy.inspect_asm(target="cpu").values()
print(json.dumps({"compiled": compiled, "stats": stats, "out": out.tolist(),
                  "pairs": pairs.tolist(), "asm": len(asm)}))
"""


def _run_child(folder: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=SRC, XDG_CACHE_HOME=str(folder / "user"))
    env["CUJIT_VARIANTS_LAZY"] = "0"  # the variant a first launch could take compiles too
    for name in ("CUJIT_TARGET", "CUJIT_CACHE", "CUJIT_CACHE_DIR", "CUJIT_NUMBA"):
        env.pop(name, None)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _check_values(report: dict) -> None:
    x = np.linspace(-1.0, 2.0, 1000).astype(np.float32)
    want = np.float32(3.0) * x + np.float32(0.25)
    np.testing.assert_allclose(report["out"], want, rtol=1e-6)
    xi = np.arange(64, dtype=np.int64) * 3 - 20
    tiles = xi.reshape(2, 32)
    np.testing.assert_array_equal(report["pairs"], (tiles + np.roll(tiles, -1, axis=1)).ravel())


def test_a_second_process_launches_from_the_first_ones_entries(tmp_path):
    (tmp_path / "cachedmod.py").write_text(textwrap.dedent(MODULE))
    first = _run_child(tmp_path)
    # The kernels, and the variants a launch compiled (saxpy's coarsened one), each once.
    assert {name.split(" (")[0] for name in first["compiled"]} == {"prefix_pairs", "saxpy"}
    assert first["stats"] == {"saxpy": [0, 1], "prefix_pairs": [0, 1]}
    _check_values(first)
    pycache = tmp_path / "__pycache__"
    written = sorted(p.name for p in pycache.iterdir() if not p.name.endswith(".pyc"))
    # one index per kernel (numba's name), one entry per compile
    assert sum(n.endswith(".nbi") for n in written) == 2, written
    assert sum(n.endswith(store.SUFFIX) for n in written) == 2, written
    # a variant's entries go to the per-user folder, as on the CUDA target
    variants = [n for n in first["compiled"] if " (" in n]
    assert len(entries(tmp_path / "user" / "cujit")) == len(variants)
    mtimes = {p.name: p.stat().st_mtime_ns for p in pycache.iterdir()}

    second = _run_child(tmp_path)
    assert second["compiled"] == []  # no stage ran in the second process
    assert second["stats"] == {"saxpy": [1, 0], "prefix_pairs": [1, 0]}
    assert second["out"] == first["out"] and second["pairs"] == first["pairs"]
    assert second["asm"] > 0 and second["asm"] == first["asm"]  # host assembly on a hit
    assert {p.name: p.stat().st_mtime_ns for p in pycache.iterdir()} == mtimes

    with open(tmp_path / "cachedmod.py", "a") as f:
        f.write("\nEXTRA = 1\n")  # an edit of the source file: its entries are stale
    third = _run_child(tmp_path)
    assert sorted(third["compiled"]) == sorted(first["compiled"])
    assert third["stats"] == {"saxpy": [0, 1], "prefix_pairs": [0, 1]}
    _check_values(third)


def test_cuda_view_of_a_hit(cache):
    # The kernel's CUDA compilation (inspect_llvm/inspect_asm without target="cpu") is
    # made on first use, from the source, whether its host code came from the cache.
    kernel = cuda.jit(axpb, target="cpu", cache=True)
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    kernel[1, 8](np.float32(2.0), x, out)
    again = cuda.jit(axpb, target="cpu", cache=True)
    again[1, 8](np.float32(2.0), x, out)
    assert sum(again.stats.cache_hits.values()) == 1
    np.testing.assert_allclose(out, 2.0 * x + 0.5)
    (ptx,) = again.inspect_asm().values()
    assert ".entry" in ptx and "axpb" in ptx
    (host,) = again.inspect_llvm(target="cpu").values()
    assert "cujit_cpu_" in host


def test_cache_list_names_cpu_entries(cache):
    from cujit.cache import format_listing

    compile_cached(axpb, (float32, float32[::1], float32[::1]), CPU)
    listing = format_listing()
    assert "axpb(float32, array(float32, 1d, C), array(float32, 1d, C))  cpu" in listing
    assert listing.endswith("KiB") and "1 entries" in listing


def test_an_int64_kernel_hit_matches_numpy(cache):
    def cube(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * x[i] * x[i] - 7

    types = (int64[::1], int64[::1])
    compile_cached(cube, types, CPU)
    hit = compile_cached(cube, types, CPU)
    assert list(hit.times) == ["cache"]
    x = np.arange(-50, 50, dtype=np.int64) * 1001
    out = np.full(100, -1, np.int64)
    hit.outputs["native"].launch((1, 1, 1), (128, 1, 1), 0, types, (x, out))
    np.testing.assert_array_equal(out, x**3 - 7)


def test_cache_true_with_link_is_refused_as_numba_refuses_it(tmp_path):
    # On the CPU target a kernel that links foreign CUDA code cannot run at all; with
    # cache=True numba's refusal (a RuntimeError naming the linked files) comes first.
    ptx = tmp_path / "extra.ptx"
    ptx.write_text("// foreign code\n")

    def linked():
        pass

    with pytest.raises(RuntimeError, match="Cannot pickle CUDACodeLibrary with linking files"):
        cuda.jit("void()", target="cpu", cache=True, link=[str(ptx)])(linked)
    with pytest.raises(CujitError, match="cannot run on the CPU target"):
        cuda.jit("void()", target="cpu", link=[str(ptx)])(linked)
