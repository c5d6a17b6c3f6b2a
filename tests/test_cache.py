"""The on-disk kernel cache: what the key covers, hits and misses, damaged entries,
concurrent writers, the dispatcher's ``cache=True`` and ``python -m cujit cache``."""

from __future__ import annotations

import multiprocessing as mp
import os

import numpy as np
import pytest

from cujit import cuda, float32, float64, int32
from cujit.cache import compile_cached, kernel_key, store
from cujit.cli import main as cli_main
from cujit.options import Options

SAXPY_TYPES = (float32, float32[::1], float32[::1], float32[::1])
OFFSET = 1.5


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i] + OFFSET


def saxpy_twice(a, x, y, out):  # saxpy's names and types, other bytecode
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2 * a * x[i] + y[i] + OFFSET


def scaled(factor):
    def scale(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * factor

    return scale


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    return tmp_path


def entry_files(folder):
    return sorted(p for p in folder.iterdir() if p.suffix == ".cujit")


# -- the key --------------------------------------------------------------------


def test_key_is_stable_and_covers_what_changes_the_code(cache_dir, monkeypatch):
    k = kernel_key(saxpy, SAXPY_TYPES, Options())
    assert k == kernel_key(saxpy, SAXPY_TYPES, Options()) and len(k) == 64
    assert k == kernel_key(saxpy, SAXPY_TYPES, Options(verify=True))  # checks, never changes
    others = {
        kernel_key(saxpy_twice, SAXPY_TYPES, Options()),
        kernel_key(saxpy, (float64,) + SAXPY_TYPES[1:], Options()),
        kernel_key(saxpy, (float32, float32[:], float32[:], float32[:]), Options()),
        kernel_key(saxpy, SAXPY_TYPES, Options(arch=(8, 0))),
        kernel_key(saxpy, SAXPY_TYPES, Options(fastmath=True)),
        kernel_key(saxpy, SAXPY_TYPES, Options(opt=0)),
        kernel_key(saxpy, SAXPY_TYPES, Options(debug=True)),
    }
    assert k not in others and len(others) == 7
    # A global's value is frozen into the code: as numba, a value changed at run time
    # keeps the key (the source file keys it); CUJIT_CACHE_KEY_GLOBALS=1 keys the value.
    monkeypatch.setitem(globals(), "OFFSET", 2.5)
    assert kernel_key(saxpy, SAXPY_TYPES, Options()) == k
    monkeypatch.setenv("CUJIT_CACHE_KEY_GLOBALS", "1")
    by_value = kernel_key(saxpy, SAXPY_TYPES, Options())
    monkeypatch.setitem(globals(), "OFFSET", 1.5)
    assert kernel_key(saxpy, SAXPY_TYPES, Options()) not in (k, by_value)


def test_key_follows_closure_values():
    types = (float64[::1], float64[::1])
    a, b, c = (kernel_key(scaled(f), types, Options()) for f in (3.5, 3.5, 2.0))
    assert a == b != c
    assert kernel_key(scaled(np.float32(3.5)), types, Options()) != a  # the type counts too


def test_value_without_a_stable_fingerprint_is_not_cached(cache_dir):
    fn = scaled(object())  # its repr is its address: no key, compiled without the cache
    assert kernel_key(fn, (float64[::1], float64[::1]), Options()) is None


def test_a_global_device_array_is_never_cached(cache_dir):
    # Taken by reference, its address is in the compiled code: no entry may keep it,
    # even where its repr (the contents) would give a stable key.
    from types import SimpleNamespace

    table = SimpleNamespace(
        __cuda_array_interface__={  # a GPU array; its repr is stable
            "shape": (4,),
            "strides": None,
            "typestr": "<f8",
            "data": (0x7F0000001000, False),
            "version": 3,
        }
    )

    def kern(x, out):
        out[0] = table[0] + x[0]

    assert kernel_key(kern, (float64[::1], float64[::1]), Options()) is None
    compile_cached(kern, (float64[::1], float64[::1]), Options())
    assert entry_files(cache_dir) == []


# -- hits, misses, damaged entries ----------------------------------------------


def test_miss_writes_an_entry_and_a_hit_reads_it_back(cache_dir):
    first = compile_cached(saxpy, SAXPY_TYPES, Options())
    assert "ptx" in first.times and "cache" not in first.times
    (path,) = entry_files(cache_dir)
    again = compile_cached(saxpy, SAXPY_TYPES, Options())
    assert list(again.times) == ["cache"]
    assert again.cubin == first.cubin and again.ptx == first.ptx
    assert again.symbol == first.symbol and again.outputs["llvm"] == first.outputs["llvm"]
    # saxpy stores into `out` alone: the launch refuses a read-only buffer there, hit or miss
    assert first.written == again.written == (False, False, False, True)
    # ... and the launch passes the parameters the cubin takes: the mask survives too
    assert first.kept == again.kept and first.kept is not None and not all(first.kept)
    assert entry_files(cache_dir) == [path]


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_damaged_entry_is_recompiled_and_rewritten(cache_dir, damage):
    first = compile_cached(saxpy, SAXPY_TYPES, Options())
    (path,) = entry_files(cache_dir)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        path.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    else:
        path.write_bytes(b"")
    again = compile_cached(saxpy, SAXPY_TYPES, Options())
    assert "ptx" in again.times  # compiled, not loaded
    assert again.cubin == first.cubin
    header, sections = store.decode(path.read_bytes())  # rewritten whole
    assert sections == store.decode(data)[1] and header["record"]["symbol"] == first.symbol
    assert list(compile_cached(saxpy, SAXPY_TYPES, Options()).times) == ["cache"]


def test_entry_format_rejects_mixed_bytes():
    a = store.encode({"key": "k"}, {"cubin": b"A" * 100})
    b = store.encode({"key": "k"}, {"cubin": b"B" * 100})
    assert store.decode(a)[1]["cubin"] == b"A" * 100
    with pytest.raises(ValueError):
        store.decode(a[:60] + b[60:])


# -- concurrent processes ---------------------------------------------------------


def _compile_in_child(folder, barrier, queue):
    os.environ["CUJIT_CACHE_DIR"] = folder
    barrier.wait()  # start compiling at the same moment as the other writer
    result = compile_cached(saxpy, SAXPY_TYPES, Options())
    queue.put((sorted(result.times), result.cubin))


def test_two_processes_compiling_at_once_leave_one_whole_entry(tmp_path):
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    writers = [
        ctx.Process(target=_compile_in_child, args=(str(tmp_path), barrier, queue))
        for _ in range(2)
    ]
    for p in writers:
        p.start()
    results = [queue.get(timeout=120) for _ in writers]
    for p in writers:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert len(entry_files(tmp_path)) == 1
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(store.TEMP_PREFIX)]
    # A third process finds the entry and loads the same cubin.
    alone = ctx.Barrier(1)  # kept referenced until the child has it
    reader = ctx.Process(target=_compile_in_child, args=(str(tmp_path), alone, queue))
    reader.start()
    times, cubin = queue.get(timeout=120)
    reader.join(timeout=60)
    assert times == ["cache"]
    assert cubin == results[0][1] == results[1][1]


def _write_many(path, payload, n):
    for _ in range(n):
        store.save(store.Path(path), {"key": "k"}, {"cubin": payload})


def test_racing_writers_never_show_a_reader_a_mixed_entry(tmp_path):
    path = tmp_path / "k.cujit"
    payloads = [bytes([i]) * 200_000 for i in (1, 2)]
    ctx = mp.get_context("spawn")
    writers = [ctx.Process(target=_write_many, args=(str(path), p, 40)) for p in payloads]
    for p in writers:
        p.start()
    seen = set()
    while any(p.is_alive() for p in writers):
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # no writer has finished its first entry yet
            continue
        _, sections = store.decode(data)  # raises on a half-written or mixed entry
        assert sections["cubin"] in payloads
        seen.add(sections["cubin"][:1])
    for p in writers:
        p.join()
        assert p.exitcode == 0
    assert store.load(path, "k").sections["cubin"] in payloads
    assert seen  # the reader did race the writers


# -- the dispatcher and the command line -------------------------------------------


def test_jit_cache_true_goes_through_the_cache(cache_dir):
    kernel = cuda.jit(cache=True)(saxpy)
    assert "ptx" in kernel.compile(SAXPY_TYPES).result.times
    fresh = cuda.jit(cache=True)(saxpy)  # a new process would see the same
    assert list(fresh.compile(SAXPY_TYPES).result.times) == ["cache"]
    assert fresh.inspect_ptx() == kernel.inspect_ptx()


def test_global_switch(cache_dir, monkeypatch):
    assert "ptx" in cuda.jit(saxpy).compile(SAXPY_TYPES).result.times
    assert not entry_files(cache_dir)  # off by default
    monkeypatch.setenv("CUJIT_CACHE", "1")
    cuda.jit(saxpy).compile(SAXPY_TYPES)
    assert list(cuda.jit(saxpy).compile(SAXPY_TYPES).result.times) == ["cache"]


def test_cli_lists_and_clears(cache_dir, capsys):
    compile_cached(saxpy, SAXPY_TYPES, Options())
    compile_cached(scaled(2.0), (int32[::1], int32[::1]), Options())
    assert cli_main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert str(cache_dir) in out and "2 entries" in out
    assert "saxpy(float32, array(float32, 1d, C)" in out and "sm_90" in out
    assert cli_main(["cache", "clear"]) == 0
    assert not entry_files(cache_dir)
    cli_main(["cache", "list"])
    assert "0 entries" in capsys.readouterr().out


HIT_SCRIPT = """
import sys, time
start = time.perf_counter()
from cujit import float32
from cujit.cache import compile_cached
from cujit.options import Options
import kernel_module
r = compile_cached(kernel_module.saxpy, (float32, float32[::1], float32[::1], float32[::1]),
                   Options())
took = time.perf_counter() - start
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("llvmlite", "numpy", "_hashlib")
               or m.startswith(("cuda.bindings", "cuda.pathfinder")))
print(repr((sorted(r.times), heavy, len(r.cubin), took)))
"""

KERNEL_MODULE = """
from cujit import cuda

def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
"""


def test_hit_in_a_fresh_process_loads_no_compiler_or_toolchain(tmp_path):
    import ast
    import subprocess
    import sys

    (tmp_path / "kernel_module.py").write_text(KERNEL_MODULE)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(
        os.environ,
        CUJIT_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONPATH=os.pathsep.join([src, str(tmp_path)]),
    )

    def run():
        out = subprocess.run(
            [sys.executable, "-c", HIT_SCRIPT],
            env=env,
            check=True,
            capture_output=True,
            text=True,
            cwd=tmp_path,
        ).stdout
        return ast.literal_eval(out.strip().splitlines()[-1])

    miss_times, _, size, _ = run()
    assert "ptx" in miss_times
    hit_times, heavy, hit_size, _ = run()
    assert hit_times == ["cache"] and hit_size == size
    # The toolchain's identity came from the stamp, not from loading it; the digests did
    # not load OpenSSL (_hashlib) either.
    assert heavy == []


def test_key_covers_a_device_function_s_own_jit_options():
    # The callee's code is the same; its options (inline, fastmath...) change the
    # kernel's code, so a kernel calling it must not reuse the other's entry.
    def body(x):
        return x * 2.0 + 1.0

    def caller_of(dev):
        def kern(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] = dev(x[i])

        return kern

    types = (float64[::1],)
    plain, again, inlined, fast = (
        kernel_key(caller_of(cuda.jit(device=True, **flags)(body)), types, Options())
        for flags in ({}, {}, {"inline": "always"}, {"fastmath": True})
    )
    assert plain == again
    assert len({plain, inlined, fast}) == 3
