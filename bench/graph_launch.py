"""Host time of 1,000 small launches: direct, and replayed from a captured CUDA graph.

    PYTHONPATH=src python3 bench/graph_launch.py [--launches N] [--repeat R] [--no-save]

A one-block kernel adds 1 to 256 floats.  "direct" issues N launches through
``kernel[1, 256, s](x)`` (the dispatcher's whole launch path: typing the
arguments, finding the specialisation, packing, ``cuLaunchKernel``); "graph"
captures those N launches once (``with cuda.graph(s) as g``) and issues them
with one ``g.launch()``.  Each is timed R times; the median host time to
*issue* the work (the loop, before synchronizing) and the median wall time
to *finish* it (issue + ``s.synchronize()``) are printed and saved as JSON to
``bench/results/``.  The result array is checked after every repetition, so
a graph that replays nothing cannot look fast.  Needs a GPU.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from cujit import cuda


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.shape[0]:
        x[i] = x[i] + 1.0


def measure(issue, s, x, expect_step: int, repeat: int) -> dict:
    issue_ms, total_ms = [], []
    for _ in range(repeat):
        before = x.copy_to_host()
        s.synchronize()
        t0 = time.perf_counter()
        issue()
        t1 = time.perf_counter()
        s.synchronize()
        t2 = time.perf_counter()
        after = x.copy_to_host()
        if not np.array_equal(after, before + expect_step):  # every launch must have run
            raise AssertionError(f"expected +{expect_step}, got +{(after - before)[:4]}")
        issue_ms.append((t1 - t0) * 1e3)
        total_ms.append((t2 - t0) * 1e3)
    return {
        "issue_ms_median": statistics.median(issue_ms),
        "issue_ms_min": min(issue_ms),
        "total_ms_median": statistics.median(total_ms),
        "total_ms_min": min(total_ms),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--no-save", action="store_true")
    opts = ap.parse_args()
    n = opts.launches

    s = cuda.stream()
    x = cuda.to_device(np.zeros(256, np.float32))
    add_one[1, 256, s](x)  # compile and load outside the timing and the capture
    s.synchronize()

    def direct():
        for _ in range(n):
            add_one[1, 256, s](x)

    t0 = time.perf_counter()
    with cuda.graph(s) as g:
        direct()
    capture_ms = (time.perf_counter() - t0) * 1e3
    g.keep(x)

    results = {
        "direct": measure(direct, s, x, n, opts.repeat),
        "graph": measure(g.launch, s, x, n, opts.repeat),
    }
    d, gr = results["direct"], results["graph"]
    dev = cuda.get_current_device()
    print(f"device: {dev.name}; {n} launches of a 1x256 kernel, median of {opts.repeat}")
    print(f"{'':8} {'issue (host) ms':>16} {'issue+sync ms':>14}")
    for name, r in results.items():
        print(f"{name:8} {r['issue_ms_median']:16.3f} {r['total_ms_median']:14.3f}")
    print(f"graph capture (once): {capture_ms:.3f} ms, {g.node_count} nodes")
    print(
        f"host time per launch: direct {d['issue_ms_median'] / n * 1e3:.2f} us, "
        f"graph {gr['issue_ms_median'] / n * 1e3:.3f} us "
        f"({d['issue_ms_median'] / gr['issue_ms_median']:.0f}x less host time)"
    )
    if opts.no_save:
        return
    record = {
        "benchmark": "graph_launch",
        "date": dt.datetime.now(dt.UTC).isoformat(),
        "machine": platform.node(),
        "device": dev.name,
        "python": platform.python_version(),
        "launches": n,
        "repeat": opts.repeat,
        "capture_ms": capture_ms,
        "graph_nodes": g.node_count,
        **results,
    }
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"graph_launch-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(f"saved {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
