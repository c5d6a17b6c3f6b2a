"""tools/numba_suite_worker.py's NRT-statistics shim: on the CPU target (device harness),
numba-cuda's MemoryLeakMixin reads the counters of a heap nothing allocates from, so the
tests built on it (test_array_reductions) run their kernels on cujit instead of failing in
setUp on numba-cuda's driver."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections import namedtuple

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
worker = importlib.import_module("numba_suite_worker")  # tools/ is no package

Stats = namedtuple("Stats", ["alloc", "free", "mi_alloc", "mi_free"])


def test_the_stand_in_counts_nothing_and_refuses_when_disabled():
    stats = worker._UnusedNRTStatistics(Stats)
    with pytest.raises(RuntimeError, match="NRT stats are disabled"):
        stats.get_allocation_stats()
    stats.memsys_enable_stats()
    assert stats.memsys_stats_enabled()
    assert stats.get_allocation_stats() == Stats(0, 0, 0, 0)
    stats.memsys_disable_stats()
    assert not stats.memsys_stats_enabled()


def test_the_shim_applies_only_to_the_cpu_targets_device_harness(monkeypatch):
    called = []
    monkeypatch.setattr(worker.importlib, "import_module", called.append)
    monkeypatch.setenv("CUJIT_TARGET", "cuda")
    worker._nrt_statistics_without_a_gpu()
    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    worker._nrt_statistics_without_a_gpu()
    assert called == []  # a GPU's harness, or the simulator's, keeps numba-cuda's NRT


def test_memory_leak_mixin_tests_run_their_kernels_on_cujit(tmp_path):
    pytest.importorskip("numba_cuda")
    pytest.importorskip("filecheck")
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "tools", "numba_suite.py"),
            "--target",
            "cpu",
            "-k",
            "cudapy/test_array_reductions",
            "--no-check",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src")),
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    tests = json.loads(out.read_text())["tests"]
    assert len(tests) >= 10
    sums = [t for t in tests if t["id"].endswith("::test_sum_basic")]
    assert sums and sums[0]["outcome"] == "passed", sums
    for t in tests:
        assert t["compiles"] >= 1 and t["numba_compiles"] == 0, t
        assert "ctx_devnum" not in (t["message"] or ""), t
