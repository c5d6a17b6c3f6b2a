"""tools/numba_suite.py's harness: on the CPU target (device harness) a test's child process
asks cujit's CPU device for the compute capability, as the worker does.  A spawned
``multiprocessing`` worker imports the test file to unpickle what it runs, and the file's
``skip_unless_cc_*`` decorators query the device at import: with numba-cuda's driver (no
GPU) that import failed, the pool started worker after worker, and the test hung until its
timeout (test_caching's TestMultiprocessCache)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import numba_suite_routing as routing  # noqa: E402

# What test_caching's decorators do at import, and which object answered.
QUERY = """\
from numba.cuda import testing
print(testing.cc_X_or_above(6, 0), testing.cc_X_or_above(99, 0))
print(type(testing.devices).__name__, getattr(testing.devices, "__name__", ""))
"""


def _child(tmp_path, **env_extra) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUJIT_TARGET="cpu")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env["PYTHONPATH"] = os.pathsep.join(
        [routing.CHILD_DIR, os.path.join(ROOT, "src")]
        + [p for p in [os.environ.get("PYTHONPATH")] if p]
    )
    env[routing.CHILD_EVENTS] = str(tmp_path / "events")
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-c", QUERY],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_a_child_on_the_cpu_target_asks_cujits_device(tmp_path):
    pytest.importorskip("numba_cuda")
    pytest.importorskip("filecheck")
    proc = _child(tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    first, second = proc.stdout.splitlines()
    # cujit's CPU device describes itself as compute capability 9.0: at least 6.0, below 99.
    assert first == "True False", proc.stdout
    assert second.startswith("type "), second  # the stand-in class, not numba-cuda's module


def test_the_simulators_harness_keeps_numba_cudas_devices(tmp_path):
    pytest.importorskip("numba_cuda")
    pytest.importorskip("filecheck")
    proc = _child(tmp_path, NUMBA_ENABLE_CUDASIM="1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    second = proc.stdout.splitlines()[1]
    assert second.startswith("module "), second


def test_the_shim_applies_only_in_the_cpu_targets_device_mode(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    assert routing.cpu_device_mode()
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert not routing.cpu_device_mode()
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM")
    monkeypatch.setenv("CUJIT_TARGET", "cuda")
    assert not routing.cpu_device_mode()
