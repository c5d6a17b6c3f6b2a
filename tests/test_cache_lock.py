"""The kernel cache's lock (cujit.cache.lock): processes that miss the same entry at
the same moment compile it once between them, the others loading what it wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from cujit.cache import lock, store

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

RACER = """
import json, os, sys, time
go = sys.argv[1]
import dask_kernels  # imports cujit and defines the kernel before the start line
deadline = time.monotonic() + 120
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.002)
spec = dask_kernels.cached_axpy.compile("void(float32, float32[:], float32[:], float32[:])")
print(json.dumps(sorted(spec.result.times)))
"""


def test_racing_processes_compile_an_entry_once(tmp_path):
    cache, go = tmp_path / "cache", tmp_path / "go"
    env = dict(os.environ, CUJIT_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([SRC, HERE]))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(go)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    try:
        time.sleep(3.0)  # let all three reach the start line
        go.write_text("go")
        outs = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
    times = [json.loads(out) for out, _ in outs]
    assert sum(t != ["cache"] for t in times) == 1, times  # one compiled: every stage ran
    assert sum(t == ["cache"] for t in times) == 2, times  # the others loaded its entry
    assert len([e for e in store.entries(cache) if not isinstance(e, os.PathLike)]) == 1
    assert not [p for p in cache.iterdir() if p.name.startswith(store.TEMP_PREFIX)]


WAITER = """
import sys, time
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from cujit.cache import lock
lock.WAIT = 0.2
t = time.monotonic()
held = lock.held(Path(sys.argv[1]))
print(held.__enter__(), round(time.monotonic() - t, 1))
"""


def test_a_lock_held_elsewhere_is_waited_for_then_given_up(tmp_path, monkeypatch):
    entry = tmp_path / "k-abc.cujit"
    monkeypatch.setattr(lock, "WAIT", 0.2)
    with lock.held(entry) as mine:
        assert mine
        holder = subprocess.run(
            [sys.executable, "-c", WAITER, str(entry), SRC],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert holder.returncode == 0, holder.stderr[-2000:]
    got, waited = holder.stdout.split()
    assert got == "False" and float(waited) >= 0.2  # waited its WAIT, then went on
    with lock.held(entry) as again:  # released: free to take
        assert again
