"""The coarsening verdict in a disk-cache entry: a hit analyses nothing and runs no
stage, the verdict it reads is the one the analysis gives, and a damaged one falls
back to the analysis.  Also: each compile event names a real compilation, the
coarsened variant's by its width."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, events, float32, int32
from cujit import pipeline as pipeline_module
from cujit.cache import compile_cached, store, verdict
from cujit.coarsen import verdict_of
from cujit.ir.independence import analyse
from cujit.options import Options
from cujit.pipeline import compile_kernel

SAXPY_TYPES = (float32, float32[::1], float32[::1], float32[::1])
SHIFTED_TYPES = (float32[::1], float32[::1])
SHARED_TYPES = (int32[::1],)


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def shifted(x, out):
    i = cuda.grid(1)
    if i < out.size - 2:
        out[i] = x[i + 2] - x[i]


def with_shared(x):
    tile = cuda.shared.array(32, int32)
    i = cuda.grid(1)
    if i < x.size:
        tile[cuda.threadIdx.x % 32] = x[i]
        x[i] = tile[cuda.threadIdx.x % 32] + 1


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    return tmp_path


def launch_fields(v):
    return (v.ok, v.rule, v.width, v.bounds, v.arrays, v.reach)


class NoStages:
    """Makes any run of the compiler's stages fail the test, and counts compile events."""

    def __init__(self, monkeypatch):
        self.compiles = []

        def refuse(*args, **kwargs):
            raise AssertionError("a stage ran")

        monkeypatch.setattr(pipeline_module, "front_end", refuse)
        monkeypatch.setattr(pipeline_module, "compile_kernel", refuse)
        self.callback = events.subscribe(lambda kind, name, target: self.compiles.append(name))

    def close(self):
        events.unsubscribe(self.callback)


@pytest.mark.parametrize(
    "fn, types, ok",
    [
        (saxpy, SAXPY_TYPES, True),
        (shifted, SHIFTED_TYPES, True),
        (with_shared, SHARED_TYPES, False),
    ],
)
def test_a_hit_keeps_the_verdict_and_runs_no_stage(cache_dir, monkeypatch, fn, types, ok):
    options = Options()
    miss = compile_cached(fn, types, options)
    want = analyse(miss.outputs["passes"])
    assert want.ok is ok
    assert launch_fields(miss.outputs["independence"]) == launch_fields(want)
    guard = NoStages(monkeypatch)
    try:
        hit = compile_cached(fn, types, options)
        assert "passes" not in hit.outputs and "cache" in hit.times  # a hit, not a compile
        got = verdict_of(hit, fn, types, options)
    finally:
        guard.close()
    assert guard.compiles == []
    assert launch_fields(got) == launch_fields(want)
    assert got.describe() == want.describe()  # the refusal keeps its rule and line


def test_the_entry_header_holds_the_verdict_as_json(cache_dir):
    compile_cached(shifted, SHIFTED_TYPES, Options())
    (entry_path,) = [p for p in cache_dir.iterdir() if p.suffix == ".cujit"]
    from cujit.cache.key import kernel_key

    entry = store.load(entry_path, kernel_key(shifted, SHIFTED_TYPES, Options()))
    stored = entry.header["coarsen"]
    assert stored["ok"] is True and stored["width"] == 4
    assert stored["arrays"] == [0, 1]
    assert stored["reach"] == [[0, 0, 2], [1, 0, 0]]  # x at i and i + 2, out at i


@pytest.mark.parametrize(
    "damaged",
    [
        None,
        {},
        {"ok": True},
        {"ok": True, "rule": "", "loc": None, "width": 0, "bounds": [], "arrays": [], "reach": []},
        "text",
        [1, 2],
    ],
)
def test_a_damaged_stored_verdict_is_not_used(damaged):
    assert verdict.from_json(damaged) is None


def test_a_damaged_stored_verdict_falls_back_to_the_analysis(cache_dir, monkeypatch):
    from cujit.cache.key import kernel_key

    options = Options()
    compile_cached(saxpy, SAXPY_TYPES, options)
    (path,) = [p for p in cache_dir.iterdir() if p.suffix == ".cujit"]
    key = kernel_key(saxpy, SAXPY_TYPES, options)
    entry = store.load(path, key)
    header = dict(entry.header, coarsen={"ok": "maybe"})
    store.save(path, header, entry.sections)
    hit = compile_cached(saxpy, SAXPY_TYPES, options)
    assert "independence" not in hit.outputs
    got = verdict_of(hit, saxpy, SAXPY_TYPES, options)  # compiled again to stage 5
    assert got.ok and got.width == 4 and got.arrays == (1, 2, 3)


def test_the_round_trip_keeps_every_launch_field():
    fn = compile_kernel(shifted, SHIFTED_TYPES, Options(), stop_after="passes").outputs["passes"]
    v = analyse(fn)
    back = verdict.from_json(verdict.to_json(v))
    assert launch_fields(back) == launch_fields(v) and back.ok


# -- compile events --------------------------------------------------------------


def in_place(x, s):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * s + 1


def test_each_compile_event_is_one_compilation_named_for_its_variant():
    seen = []
    record = events.subscribe(lambda kind, name, target: seen.append((kind, name)))
    try:
        k = cuda.jit(target="cpu")(in_place)
        x = np.arange(64, dtype=np.int32)
        k[1, 64](x, 2)  # the kernel as written, then the variant (the launch's facts hold)
        k[1, 64](x, 2)  # both compiled: no event
    finally:
        events.unsubscribe(record)
    np.testing.assert_array_equal(x, (np.arange(64) * 2 + 1) * 2 + 1)
    compiles = [name for kind, name in seen if kind == "compile"]
    assert compiles == ["in_place", "in_place (coarsened x4)"]
    assert [kind for kind, _ in seen].count("launch") == 2


def test_an_uncoarsened_kernel_compiles_once():
    seen = []
    record = events.subscribe(lambda kind, name, target: seen.append((kind, name)))
    try:
        k = cuda.jit(target="cpu", coarsen=False)(in_place)
        x = np.arange(64, dtype=np.int32)
        k[1, 64](x, 3)
        k[1, 64](x, 3)
    finally:
        events.unsubscribe(record)
    np.testing.assert_array_equal(x, (np.arange(64) * 3 + 1) * 3 + 1)
    assert [name for kind, name in seen if kind == "compile"] == ["in_place"]
