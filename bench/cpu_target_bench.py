"""The CPU target beside numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1), one run.

    PYTHONPATH=src python3 bench/cpu_target_bench.py [--scale S] [--no-simulator]

The CPU target checks array bounds by default; every kernel also runs compiled with
``boundscheck=False``, and the table gives what the checks cost (checked / unchecked
time per launch), and once more with ``coarsen=False``: what running the kernels cujit
proves independent k indices per thread gains there (docs/coarsening.md).
``--no-simulator`` measures those alone.

Each kernel runs on the same inputs, the same grid, under both; the simulator runs in a
subprocess (its switch must be set before numba is imported).  Prints seconds per launch
(cujit: median of repeats after a warm-up; the compile time separately) and the speed
ratio, checks both results against NumPy, and saves a JSON file to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

KERNELS = """
import math
import numpy as np

@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

@cuda.jit
def block_reduce(x, total):
    buf = cuda.shared.array(256, np.float64)
    t = cuda.threadIdx.x
    acc = 0.0
    i = cuda.grid(1)
    while i < x.size:
        acc += x[i]
        i += cuda.gridsize(1)
    buf[t] = acc
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(total, 0, buf[0])

@cuda.jit
def histogram(x, hist):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(hist, x[i] % hist.size, 1)

@cuda.jit
def matmul_tiled(a, b, c):
    sa = cuda.shared.array((16, 16), np.float64)
    sb = cuda.shared.array((16, 16), np.float64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * 16 + ty
    col = cuda.blockIdx.x * 16 + tx
    acc = 0.0
    for t in range(a.shape[1] // 16):
        sa[ty, tx] = a[row, t * 16 + tx]
        sb[ty, tx] = b[t * 16 + ty, col]
        cuda.syncthreads()
        for k in range(16):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[row, col] = acc

@cuda.jit
def stencil(u, out):
    i, j = cuda.grid(2)
    if 0 < i < u.shape[0] - 1 and 0 < j < u.shape[1] - 1:
        out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])

@cuda.jit
def black_scholes(s, k, t, out):
    i = cuda.grid(1)
    if i < s.size:
        v = 0.3
        r = 0.02
        d1 = (math.log(s[i] / k[i]) + (r + 0.5 * v * v) * t[i]) / (v * math.sqrt(t[i]))
        d2 = d1 - v * math.sqrt(t[i])
        n1 = 0.5 * math.erfc(-d1 / math.sqrt(2.0))
        n2 = 0.5 * math.erfc(-d2 / math.sqrt(2.0))
        out[i] = s[i] * n1 - k[i] * math.exp(-r * t[i]) * n2
"""


def problems(scale: int):
    """name -> (setup(rng) -> (args, grid, block), outputs to check, reference(args))."""
    n = 16384 * scale
    m = 64 * scale

    def saxpy(rng):
        x, y = rng.random(n), rng.random(n)
        return [2.0, x, y, np.zeros(n)], (n + 255) // 256, 256

    def reduce(rng):
        return [rng.random(n), np.zeros(1)], 32, 256

    def hist(rng):
        return [rng.integers(0, 1000, n), np.zeros(64, np.int64)], (n + 255) // 256, 256

    def matmul(rng):
        a, b = rng.random((m, m)), rng.random((m, m))
        return [a, b, np.zeros((m, m))], (m // 16, m // 16), (16, 16)

    def stencil(rng):
        u = rng.random((m * 2, m * 2))
        return [u, np.zeros_like(u)], (m * 2 // 16, m * 2 // 16), (16, 16)

    def bs(rng):
        return (
            [rng.uniform(50, 150, n), rng.uniform(50, 150, n), rng.uniform(0.1, 2, n), np.zeros(n)],
            (n + 255) // 256,
            256,
        )

    return {
        "saxpy": (saxpy, lambda a: {3: a[0] * a[1] + a[2]}),
        "block_reduce": (reduce, lambda a: {1: [a[0].sum()]}),
        "histogram": (hist, lambda a: {1: np.bincount(a[0] % 64, minlength=64)}),
        "matmul_tiled": (matmul, lambda a: {2: a[0] @ a[1]}),
        "stencil": (stencil, None),
        "black_scholes": (bs, None),
    }


def run_all(cuda_module, scale: int, repeats: int, seed: int = 7) -> dict:
    ns = {"cuda": cuda_module}
    exec(KERNELS, ns)
    out = {}
    for name, (setup, ref) in problems(scale).items():
        kernel = ns[name]
        args, grid, block = setup(np.random.default_rng(seed))
        fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        start = time.perf_counter()
        kernel[grid, block](*fresh)  # the first launch compiles
        first = time.perf_counter() - start
        times = []
        for _ in range(repeats):
            fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            start = time.perf_counter()
            kernel[grid, block](*fresh)
            times.append(time.perf_counter() - start)
        ok = None
        if ref is not None:
            expected = ref(args)
            ok = all(np.allclose(fresh[i], e, rtol=1e-9, atol=1e-9) for i, e in expected.items())
        launch_s = statistics.median(times) if times else first
        out[name] = {
            "first_launch_s": first,
            "launch_s": launch_s,
            "ok": ok,
            "checksum": float(np.sum([np.sum(a) for a in fresh if isinstance(a, np.ndarray)])),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--simulator-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--no-simulator",
        action="store_true",
        help="skip numba's simulator; measure the bounds checks' cost only",
    )
    args = ap.parse_args()
    if args.simulator_only:
        from numba import cuda

        print(json.dumps(run_all(cuda, args.scale, repeats=0)))
        return
    ours = run_all(_cpu_namespace(), args.scale, repeats=7)
    unchecked = run_all(_cpu_namespace(boundscheck=False), args.scale, repeats=7)
    checks = _check_cost(ours, unchecked)
    as_written = run_all(_cpu_namespace(coarsen=False), args.scale, repeats=7)
    coarsening = _coarsen_gain(ours, as_written)
    if args.no_simulator:
        fields = {"scale": args.scale, "bounds_checks": checks, "coarsening": coarsening}
        _save(fields, "cpu-boundscheck")
        return
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run(
        [sys.executable, __file__, "--simulator-only", "--scale", str(args.scale)],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit("simulator run failed:\n" + proc.stderr[-2000:])
    sim = json.loads(proc.stdout.strip().splitlines()[-1])
    print(
        f"{'kernel':14} {'cujit cpu':>12} {'compile+1st':>12} {'simulator':>12} {'ratio':>10}"
        f" {'ratio incl. compile':>20}  checks"
    )
    rows = {}
    for name, mine in ours.items():
        s = sim[name]["first_launch_s"]
        ratio = s / mine["launch_s"]
        ratio_c = s / mine["first_launch_s"]
        mine_sum = mine["checksum"]
        agree = abs(mine_sum - sim[name]["checksum"]) <= 1e-6 * max(1, abs(mine_sum))
        rows[name] = {
            "cujit_cpu_s": mine["launch_s"],
            "cujit_first_s": mine["first_launch_s"],
            "simulator_s": s,
            "ratio": ratio,
            "ratio_incl_compile": ratio_c,
            "cujit_ok": mine["ok"],
            "simulator_ok": sim[name]["ok"],
            "outputs_agree": agree,
        }
        print(
            f"{name:14} {mine['launch_s'] * 1e3:9.3f} ms {mine['first_launch_s']:10.3f} s "
            f"{s:10.3f} s {ratio:10.0f} {ratio_c:20.1f}  numpy={mine['ok']} "
            f"sim={sim[name]['ok']} agree={agree}"
        )
    fields = {"kernels": rows, "bounds_checks": checks, "coarsening": coarsening}
    _save({"scale": args.scale, **fields}, "cpu-target")


def _check_cost(checked: dict, unchecked: dict) -> dict:
    """Per kernel: launch time with the default bounds checks and without, and the ratio."""
    print(f"{'kernel':14} {'checked':>12} {'unchecked':>12} {'cost':>8}  results equal")
    rows = {}
    for name, mine in checked.items():
        off = unchecked[name]
        cost = mine["launch_s"] / off["launch_s"]
        same = mine["checksum"] == off["checksum"]
        rows[name] = {
            "checked_s": mine["launch_s"],
            "unchecked_s": off["launch_s"],
            "checked_over_unchecked": cost,
            "results_equal": same,
        }
        print(
            f"{name:14} {mine['launch_s'] * 1e3:9.3f} ms {off['launch_s'] * 1e3:9.3f} ms "
            f"{cost:7.2f}x  {same}"
        )
    return rows


def _coarsen_gain(coarsened: dict, as_written: dict) -> dict:
    """Per kernel: launch time as shipped (coarsened where the rule and the launch allow)
    and with ``coarsen=False``."""
    print(f"{'kernel':14} {'shipped':>12} {'coarsen=0':>12} {'gain':>8}  results equal")
    rows = {}
    for name, mine in coarsened.items():
        off = as_written[name]
        gain = off["launch_s"] / mine["launch_s"]
        same = mine["checksum"] == off["checksum"]
        rows[name] = {"shipped_s": mine["launch_s"], "coarsen_off_s": off["launch_s"]}
        rows[name].update(gain=gain, results_equal=same)
        print(
            f"{name:14} {mine['launch_s'] * 1e3:9.3f} ms {off['launch_s'] * 1e3:9.3f} ms "
            f"{gain:7.2f}x  {same}"
        )
    return rows


def _save(fields: dict, prefix: str) -> None:
    result = {
        "date": datetime.now(timezone.utc).isoformat(),
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        **fields,
    }
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    path = os.path.join(HERE, "results", f"{prefix}-{stamp}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(result, fh, indent=1)
    print("saved", path)


def _cpu_namespace(boundscheck: bool | None = None, coarsen: bool = True):
    """A ``cuda`` stand-in whose ``jit`` compiles for the CPU target (with the target's
    default bounds checks, or ``boundscheck=False``; ``coarsen=False``: as written)."""
    import types

    from cujit import cuda

    ns = types.SimpleNamespace(**{k: getattr(cuda, k) for k in dir(cuda) if not k.startswith("__")})
    ns.jit = lambda fn=None, **kw: cuda.jit(
        fn, target="cpu", boundscheck=boundscheck, coarsen=coarsen, **kw
    )
    return ns


if __name__ == "__main__":
    main()
