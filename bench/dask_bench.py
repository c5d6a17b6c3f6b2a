"""The Dask stencil example (examples/dask_stencil.py) on one worker and on two.

    CUJIT_TARGET=cpu PYTHONPATH=src python3 bench/dask_bench.py [--size N] [--repeats R]

Each run starts a LocalCluster of worker processes (one thread each) and times the
example's compute: a first run (each worker compiles the kernel, once), then
``repeats`` warm runs (median and best).  With ``--pin`` (the default) worker k is
pinned to core k, so that each worker is one core, as each is one GPU on a GPU
cluster (on the CPU target a launch otherwise spreads its blocks over every core the
process may use, and one worker alone would already fill the machine); ``--no-pin``
measures the unpinned cluster as well.  Prints a table and saves a JSON file to
bench/results/.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import sys
from datetime import UTC, datetime

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "src"))


def _example():
    spec = importlib.util.spec_from_file_location(
        "dask_stencil", os.path.join(ROOT, "examples", "dask_stencil.py")
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["dask_stencil"] = module  # workers import it by this name
    spec.loader.exec_module(module)
    return module


def _pin(dask_worker) -> list[int]:
    """Pin this worker process to one core, chosen by its name (0, 1, ...)."""
    cores = sorted(os.sched_getaffinity(0))
    core = cores[int(dask_worker.name) % len(cores)]
    os.sched_setaffinity(0, {core})
    return sorted(os.sched_getaffinity(0))


def measure(example, workers: int, pin: bool, args) -> dict:
    from distributed import Client, LocalCluster, get_task_stream

    env = {
        "CUJIT_TARGET": "cpu",
        "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), os.path.join(ROOT, "examples")]),
    }
    os.environ.update(env)  # the spawned workers inherit it
    if os.path.join(ROOT, "examples") not in sys.path:  # and this process's sys.path
        sys.path.insert(0, os.path.join(ROOT, "examples"))
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            env=env,
            silence_logs=50,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.wait_for_workers(workers, timeout=120)
        cores = client.run(_pin) if pin else {}
        first = example.run(client, args.size, args.chunk, args.steps, False)
        warm, spread = [], []
        for _ in range(args.repeats):
            with get_task_stream(client) as stream:
                warm.append(example.run(client, args.size, args.chunk, args.steps, False))
            spread.append(_per_worker(stream.data))
    return {
        "workers": workers,
        "pinned": pin,
        "cores": sorted(map(list, cores.values())),
        "first_s": round(first, 4),
        "warm_median_s": round(statistics.median(warm), 4),
        "warm_best_s": round(min(warm), 4),
        "warm_s": [round(w, 4) for w in warm],
        "per_worker": spread,
        "load_average": os.getloadavg(),
    }


def _per_worker(tasks: list[dict]) -> dict:
    """Tasks run and seconds spent computing them, per worker: the work's spread."""
    out: dict[str, list] = {}
    for task in tasks:
        busy = sum(s["stop"] - s["start"] for s in task["startstops"] if s["action"] == "compute")
        entry = out.setdefault(task["worker"], [0, 0.0])
        entry[0] += 1
        entry[1] += busy
    return {w: {"tasks": n, "compute_s": round(t, 3)} for w, (n, t) in sorted(out.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--chunk", type=int, default=512)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-pin", action="store_true", help="also measure unpinned workers")
    args = ap.parse_args()
    example = _example()
    runs = [measure(example, n, True, args) for n in (1, 2)]
    if args.no_pin:
        runs += [measure(example, n, False, args) for n in (1, 2)]
    print(
        f"{args.size}x{args.size} float32, chunks {args.chunk}, {args.steps} steps, "
        f"CPU target, {os.cpu_count()} cores"
    )
    print(
        "workers  pinned  first (s)  warm median (s)  warm best (s)  tasks / compute s "
        "per worker (last run)"
    )
    for r in runs:
        spread = ", ".join(
            f"{v['tasks']} / {v['compute_s']:.2f}" for v in r["per_worker"][-1].values()
        )
        print(
            f"{r['workers']:7d}  {r['pinned']!s:6s}  {r['first_s']:9.3f}  "
            f"{r['warm_median_s']:15.3f}  {r['warm_best_s']:13.3f}  {spread}"
        )
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    out = os.path.join(HERE, "results", f"dask_bench-{stamp}.json")
    with open(out, "w") as f:
        json.dump(
            {
                "command": " ".join(["bench/dask_bench.py", *sys.argv[1:]]),
                "args": vars(args),
                "python": platform.python_version(),
                "machine": platform.machine(),
                "cpu_count": os.cpu_count(),
                "load_average": os.getloadavg(),
                "runs": runs,
            },
            f,
            indent=1,
        )
    print(f"saved {out}")


if __name__ == "__main__":
    main()
