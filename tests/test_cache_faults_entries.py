"""Cache faults, damaged state: entries damaged every way we could think of, a
folder in the way, leftovers of a crashed writer, a damaged toolchain stamp, and
concurrent writer processes.  Whatever the damage, a compile through the cache
gives the same code as a compile without it, and the next one is a hit again."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import struct

import numpy as np
import pytest

from cujit import cuda, float32, int32
from cujit.cache import compile_cached, key, store
from cujit.options import Options

TYPES = (float32, float32[::1], float32[::1])


def scale(a, x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + 0.5


def shift(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + 7


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture(scope="module")
def reference():
    """The code a compile without the cache gives."""
    from cujit.pipeline import compile_kernel

    return compile_kernel(scale, TYPES, Options())


def entries(folder):
    return sorted(p for p in folder.iterdir() if p.suffix == store.SUFFIX)


def _reencode(data: bytes, change) -> bytes:
    """The entry with ``change(header, sections)`` applied, checksum made right again: a
    well-formed file with a wrong inside."""
    header, sections = store.decode(data)
    header.pop("sections")
    header, sections = change(header, sections) or (header, sections)
    return store.encode(header, sections)


def _raw_body(header_bytes: bytes, rest: bytes = b"") -> bytes:
    body = struct.pack("<I", len(header_bytes)) + header_bytes + rest
    return store.MAGIC + store.hasher(body).digest() + body


def _drop(name):
    def change(header, sections):
        header.pop(name, None)
        sections.pop(name, None)

    return change


def _set(name, value):
    def change(header, sections):
        header[name] = value

    return change


def _drop_record(name):  # a field of the launch record (abi.LaunchRecord.to_json)
    def change(header, sections):
        header["record"].pop(name)

    return change


def _set_record(name, value):
    def change(header, sections):
        header["record"][name] = value

    return change


def _bad_utf8(header, sections):
    sections["ptx"] = b"\xff\xfe" + sections["ptx"]


rng = np.random.default_rng(5)
DAMAGES = {
    "truncated to half": lambda d: d[: len(d) // 2],
    "truncated to one byte": lambda d: d[:1],
    "truncated inside the header": lambda d: d[: len(store.MAGIC) + 40],
    "one byte short": lambda d: d[:-1],
    "one byte more": lambda d: d + b"\0",
    "empty": lambda d: b"",
    "zeroed": lambda d: bytes(len(d)),
    "random bytes": lambda d: rng.integers(0, 256, len(d), dtype=np.uint8).tobytes(),
    "bit flipped in the header": lambda d: d[:60] + bytes([d[60] ^ 1]) + d[61:],
    "bit flipped in the cubin": lambda d: d[:-10] + bytes([d[-10] ^ 0x80]) + d[-9:],
    "older magic": lambda d: b"CUJITC01" + d[8:],
    "checksum zeroed": lambda d: d[:8] + bytes(32) + d[40:],
    "another key": lambda d: _reencode(d, _set("key", "0" * 64)),
    "no record": lambda d: _reencode(d, _drop("record")),
    "record is a list": lambda d: _reencode(d, _set("record", [1])),
    "no symbol": lambda d: _reencode(d, _drop_record("symbol")),
    "empty symbol": lambda d: _reencode(d, _set_record("symbol", "")),
    "cooperative is not a bool": lambda d: _reencode(d, _set_record("cooperative", "no")),
    "no cubin section": lambda d: _reencode(d, _drop("cubin")),
    "no ptx section": lambda d: _reencode(d, _drop("ptx")),
    "written is not a list": lambda d: _reencode(d, _set_record("written", 5)),
    "written of the wrong length": lambda d: _reencode(d, _set_record("written", [True])),
    "passed of the wrong length": lambda d: _reencode(d, _set_record("passed", [True])),
    "no passed mask": lambda d: _reencode(d, _drop_record("passed")),
    "ptx not utf-8": lambda d: _reencode(d, _bad_utf8),
    "header is a list": lambda d: _raw_body(b"[1, 2]"),
    "header is not json": lambda d: _raw_body(b"{not json"),
    "header length past the end": lambda d: _raw_body(b"{}")[:-2] + b"\xff\xff",
    "negative section size": lambda d: _raw_body(
        json.dumps({"key": "k", "sections": [["cubin", -5]]}).encode(), b"abc"
    ),
    "sections not a list": lambda d: _raw_body(json.dumps({"key": "k", "sections": 3}).encode()),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_entry(cache, reference, damage):
    compile_cached(scale, TYPES, Options())
    (path,) = entries(cache)
    path.write_bytes(DAMAGES[damage](path.read_bytes()))
    again = compile_cached(scale, TYPES, Options())  # never raises, never wrong code
    assert again.cubin == reference.cubin and again.ptx == reference.ptx
    assert again.symbol == reference.symbol and again.written == reference.written
    assert again.kept == reference.kept
    hit = compile_cached(scale, TYPES, Options())
    assert list(hit.times) == ["cache"] and hit.cubin == reference.cubin


def test_folder_in_place_of_the_entry(cache, reference):
    compile_cached(scale, TYPES, Options())
    (path,) = entries(cache)
    path.unlink()
    path.mkdir()
    with pytest.warns(RuntimeWarning, match="could not write"):
        again = compile_cached(scale, TYPES, Options())
    assert again.cubin == reference.cubin and path.is_dir()


def test_dangling_symlink_in_place_of_the_entry(cache, reference):
    compile_cached(scale, TYPES, Options())
    (path,) = entries(cache)
    path.unlink()
    path.symlink_to(cache / "nowhere")
    assert compile_cached(scale, TYPES, Options()).cubin == reference.cubin
    assert list(compile_cached(scale, TYPES, Options()).times) == ["cache"]


def test_cache_folder_is_a_file(tmp_path, monkeypatch, reference):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(blocker))
    with pytest.warns(RuntimeWarning):
        result = compile_cached(scale, TYPES, Options())
    assert result.cubin == reference.cubin and blocker.read_text() == "x"


def test_leftovers_of_a_crashed_writer_are_ignored_then_cleared(cache, reference):
    (cache / f"{store.TEMP_PREFIX}crashed").write_bytes(b"half an entry")
    first = compile_cached(scale, TYPES, Options())
    assert first.cubin == reference.cubin
    assert list(compile_cached(scale, TYPES, Options()).times) == ["cache"]
    assert store.clear(cache) >= 2 and not list(cache.glob(f"{store.TEMP_PREFIX}*"))


@pytest.mark.parametrize(
    "stamp",
    [
        b"",
        b"{",
        b"[]",
        b'{"identity": 5, "files": []}',
        b'{"identity": "x", "files": [["/nonexistent", 1, 2]]}',
    ],
)
def test_damaged_toolchain_stamp(cache, reference, monkeypatch, stamp):
    monkeypatch.setattr(key, "_env", None)  # as a new process: find (or write) the stamp
    compile_cached(scale, TYPES, Options())
    (found,) = cache.glob("toolchain-*")
    found.write_bytes(stamp)
    monkeypatch.setattr(key, "_env", None)  # as a new process: read the stamp again
    result = compile_cached(scale, TYPES, Options())
    assert result.cubin == reference.cubin
    assert list(compile_cached(scale, TYPES, Options()).times) == ["cache"]


def _writer(folder, barrier, queue, which):
    os.environ["CUJIT_CACHE_DIR"] = folder
    barrier.wait()  # every writer starts at once
    out = []
    for fn, types in ((scale, TYPES), (shift, (int32[::1], int32[::1])))[::which]:
        r = compile_cached(fn, types, Options())
        out.append((fn.__name__, r.cubin))
    queue.put(out)


def test_concurrent_writers_of_several_kernels(tmp_path):
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(3), ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(str(tmp_path), barrier, queue, w)) for w in (1, -1, 1)
    ]  # two orders: writers cross on both entries
    for p in procs:
        p.start()
    results = [queue.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    cubins: dict = {}
    for out in results:
        for name, cubin in out:
            cubins.setdefault(name, set()).add(cubin)
    assert {k: len(v) for k, v in cubins.items()} == {"scale": 1, "shift": 1}
    found = store.entries(tmp_path)
    assert len(found) == 2 and all(isinstance(e, store.Entry) for e in found)
    assert not list(tmp_path.glob(f"{store.TEMP_PREFIX}*"))
    os.environ["CUJIT_CACHE_DIR"] = str(tmp_path)
    try:
        hit = compile_cached(scale, TYPES, Options())
    finally:
        del os.environ["CUJIT_CACHE_DIR"]
    assert list(hit.times) == ["cache"] and hit.cubin in cubins["scale"]
