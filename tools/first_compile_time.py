"""A fresh process's import and first compile, without a GPU: the medians (and minima)
over N new processes of `import numpy`, `from cujit import cuda`, the host API's
lookup (``cuda.to_device``, ``device_array_like``, ``synchronize``: what a fresh
process imports on its main thread before the driver starts), and the first kernel's
compile to a cubin (a saxpy through ``pipeline.compile_kernel``, sm_90: every stage and
libNVVM's and nvJitLink's first use, no driver).

    PYTHONPATH=src python3 tools/first_compile_time.py [-n 9] [--other OTHER_SRC] [--warmup]

``--warmup`` runs the compiler's warm-up to its end first (``cujit.warmup``, for sm_90,
as beside a driver's start) and compiles the saxpy through the dispatcher
(``Kernel.compile``, whose variant analysis a real first launch runs too): ``compile``
is then what the first launch's compile costs after the warm-up, and
``outside_toolchain`` its part outside libNVVM and nvJitLink.

``--other`` also runs another cujit tree's ``src`` folder (for example ``git archive REV
src | tar -x -C .base``), round by round with this one (which goes first alternates),
and prints both trees' medians and the median of the rounds' paired differences.

Each child runs with PYTHONDONTWRITEBYTECODE cleared, as an installed package has its
bytecode (the first child writes what is missing; its figures are left out).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
from cujit import cuda
t2 = time.perf_counter()
cuda.to_device, cuda.device_array_like, cuda.synchronize
t_host = time.perf_counter()
from cujit.options import Options
from cujit.pipeline import compile_kernel

def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

name = "saxpy_" + os.urandom(4).hex()  # a new name: nvJitLink's cache never answers
saxpy.__code__ = saxpy.__code__.replace(co_name=name, co_qualname=name)
sig = (cuda.float32,) + (cuda.float32[::1],) * 3
warmup = None
if WARMUP:
    from cujit import warmup as w
    tw = time.perf_counter()
    w.note_kernel()
    w.start((9, 0))
    w.wait()
    warmup = time.perf_counter() - tw
    assert w._state.outcome == "compiled for sm_90", w._state.outcome
    kernel = cuda.jit(saxpy)
    kernel._options = lambda: Options(arch=(9, 0))  # no device to read the arch from
    first_compile = lambda: kernel.compile(sig).result
else:
    first_compile = lambda: compile_kernel(saxpy, sig, Options(arch=(9, 0)))
before = set(sys.modules)
t3 = time.perf_counter()
result = first_compile()
t4 = time.perf_counter()
modules = sum(1 for m in sys.modules if m.startswith("cujit"))
loaded = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("cujit", "llvmlite"))
toolchain = result.times["ptx"] + result.times["cubin"]
print(json.dumps({"numpy": t1 - t0, "cujit": t2 - t1, "host_api": t_host - t2,
                  "warmup": warmup, "compile": t4 - t3, "outside_toolchain": t4 - t3 - toolchain,
                  "total": t4 - t0, "modules": modules, "loaded_by_compile": loaded,
                  "stages": result.times}))
"""
KEYS = ("numpy", "cujit", "host_api", "warmup", "compile", "outside_toolchain", "total")


def run_child(src: str | None = None, warmup: bool = False) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = os.path.abspath(src)
    out = subprocess.run(
        [sys.executable, "-c", f"WARMUP = {warmup}\n" + CHILD],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=9, help="processes measured (default 9)")
    parser.add_argument("--other", help="another tree's src folder, run alternately")
    parser.add_argument("--warmup", action="store_true", help="the warm-up first (see above)")
    ns = parser.parse_args(argv)
    if ns.other:
        compare(ns.other, ns.n, ns.warmup)
        return
    run_child(warmup=ns.warmup)  # writes the bytecode still missing
    runs = [run_child(warmup=ns.warmup) for _ in range(ns.n)]
    print(f"{ns.n} fresh processes; cujit modules after the compile: {runs[0]['modules']}")
    for key in _keys(ns.warmup):
        values = [1e3 * r[key] for r in runs]
        print(f"  {key:17} median {statistics.median(values):7.2f} ms   min {min(values):7.2f} ms")
    stages = runs[0]["stages"]
    for stage in stages:
        values = [1e3 * r["stages"][stage] for r in runs]
        print(f"    {stage:9} median {statistics.median(values):6.1f} ms")


def _keys(warmup: bool) -> tuple:
    return KEYS if warmup else tuple(k for k in KEYS if k != "warmup")


def compare(other: str, n: int, warmup: bool = False) -> None:
    """This tree ("this") and ``other`` in alternating fresh processes."""
    this = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    trees = {"this": this, "other": other}
    for src in trees.values():
        run_child(src, warmup)  # bytecode
    runs: dict[str, list[dict]] = {k: [] for k in trees}
    for i in range(n):
        for k in trees if i % 2 == 0 else reversed(trees):
            runs[k].append(run_child(trees[k], warmup))
    print(f"{n} rounds of fresh processes; this tree: {this}; other: {other}")
    print(f"  {'':17} {'this':>9} {'other':>9} {'this-other (paired median)':>28}")
    for key in _keys(warmup):
        a = [1e3 * r[key] for r in runs["this"]]
        b = [1e3 * r[key] for r in runs["other"]]
        diff = statistics.median(x - y for x, y in zip(a, b, strict=True))
        print(
            f"  {key:17} {statistics.median(a):7.2f}ms {statistics.median(b):7.2f}ms "
            f"{diff:+26.2f}ms"
        )
    print(
        f"  cujit modules after the compile: this {runs['this'][0]['modules']}, "
        f"other {runs['other'][0]['modules']}"
    )


if __name__ == "__main__":
    main()
