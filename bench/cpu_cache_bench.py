"""First-launch time of CPU-target kernels in a fresh process: compiled, or loaded from
the disk cache.

    PYTHONPATH=$PWD/src python bench/cpu_cache_bench.py [--repeat 3] [--json out.json]

For each kernel a new interpreter imports cujit, then times its first launch (type the
arguments, compile or load, run the grid) with ``time.perf_counter``; three ways:
``uncached`` (no cache), ``miss`` (``CUJIT_CACHE=1``, an empty cache folder: every
stage, then the entry written) and ``hit`` (the same folder again: the entry's object
code loaded, no stage run; the child checks that no compile event came).  The number
is the median over ``--repeat`` fresh processes (a miss gets a fresh folder each
time); the process's whole wall time is given too.  A second launch is timed as well,
to show the code itself runs alike either way.  The children may write cujit's
``.pyc`` files (``PYTHONDONTWRITEBYTECODE`` is dropped), as an installed cujit has them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")

KERNELS = """
import math
import numpy as np
from cujit import cuda


@cuda.jit(target="cpu")
def saxpy(out, a, x, y):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit(target="cpu")
def block_sum(x, out):
    buf = cuda.shared.array(256, np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    step = 128
    while step > 0:
        if t < step:
            buf[t] += buf[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]


@cuda.jit(target="cpu")
def stencil(a, out):
    i, j = cuda.grid(2)
    if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
        out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


@cuda.jit(target="cpu")
def mathy(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.exp(-v * v) * math.sin(3.0 * v) + math.log1p(abs(v)) / (1.0 + v * v)
"""

CHILD = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from cujit import events
sys.path.insert(0, sys.argv[1])
import kernels as k
t1 = time.perf_counter()
compiled = []
events.subscribe(lambda kind, name, target: compiled.append(name) if kind == "compile" else None)
n = 1 << 16
x = np.linspace(-2.0, 2.0, n).astype(np.float32)
runs = {
    "saxpy": lambda: k.saxpy[n // 256, 256](np.empty_like(x), np.float32(2.0), x, x),
    "block_sum": lambda: k.block_sum[n // 256, 256](x, np.empty(n // 256, np.float32)),
    "stencil": lambda: k.stencil[(16, 16), (16, 16)](
        x.reshape(256, 256), np.zeros((256, 256), np.float32)),
    "mathy": lambda: k.mathy[n // 256, 256](x.astype(np.float64), np.empty(n)),
}
run = runs[sys.argv[2]]
t2 = time.perf_counter()
run()
t3 = time.perf_counter()
run()
t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_s": t3 - t2, "second_s": t4 - t3,
                  "compiled": compiled}))
"""

NAMES = ("saxpy", "block_sum", "stencil", "mathy")


def child(folder: Path, name: str, cache_dir: Path | None) -> dict:
    env = dict(os.environ, PYTHONPATH=SRC)
    # As an installed package runs: from its .pyc files (where a module's own source
    # is compiled at every import, that costs each way alike, ~0.2-0.5 s).
    for var in ("CUJIT_TARGET", "CUJIT_CACHE", "CUJIT_CACHE_DIR", "PYTHONDONTWRITEBYTECODE"):
        env.pop(var, None)
    if cache_dir is not None:
        env.update(CUJIT_CACHE="1", CUJIT_CACHE_DIR=str(cache_dir))
    import time

    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), name],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = time.perf_counter() - start
    return out


def measure(folder: Path, name: str, repeat: int) -> dict:
    ways: dict[str, list[dict]] = {"uncached": [], "miss": [], "hit": []}
    for r in range(repeat):
        ways["uncached"].append(child(folder, name, None))
        fresh = folder / f"cache-{name}-{r}"
        ways["miss"].append(child(folder, name, fresh))
        hit = child(folder, name, fresh)
        if hit["compiled"]:
            raise RuntimeError(f"{name}: the hit compiled {hit['compiled']}")
        ways["hit"].append(hit)
    return {
        way: {
            key: statistics.median(run[key] for run in runs)
            for key in ("import_s", "first_s", "second_s", "wall_s")
        }
        for way, runs in ways.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="write the medians here")
    parser.add_argument("--kernels", nargs="*", default=list(NAMES), choices=NAMES)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="cujit-cpu-cache-bench-") as tmp:
        folder = Path(tmp)
        (folder / "kernels.py").write_text(KERNELS)
        print(
            f"{'kernel':10} {'way':9} {'import ms':>10} {'1st launch ms':>14} "
            f"{'2nd launch ms':>14} {'process ms':>11}"
        )
        for name in args.kernels:
            results[name] = measure(folder, name, args.repeat)
            for way, m in results[name].items():
                print(
                    f"{name:10} {way:9} {m['import_s'] * 1e3:10.1f} {m['first_s'] * 1e3:14.1f} "
                    f"{m['second_s'] * 1e3:14.2f} {m['wall_s'] * 1e3:11.0f}"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
