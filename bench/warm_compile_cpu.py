"""The warm-compile target's ratio without a GPU: per kernel of
``launch_bench.WARM_KERNELS``, a new renamed function each round compiled to a cubin
through the dispatcher (``Kernel.compile``: every stage, libNVVM, nvJitLink, the
variant analyses), and right after it the toolchain floor (libNVVM + nvJitLink alone,
``launch_bench.toolchain_floor``) on that round's LLVM IR, as ``launch_bench.py``'s
``warm_compile`` pairs them.  It leaves out what only a GPU has: the first launch's
own path (the module's load, the launch, the synchronize; 0.7-1.0 ms a round on the
H200 host, bench/NOTES.md "ninth look"), so its ratios sit a little above that bench's.

    PYTHONPATH=src python3 bench/warm_compile_cpu.py [ROUNDS]

Prints per kernel the medians of the compile, of its part outside libNVVM and
nvJitLink, of stages 1-6 within that part (the front end, to the LLVM text), of the
floor, and the median of the rounds' floor / compile (the target: at least 0.87);
writes them to ``bench/results/warm-compile-cpu-<time>.json``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "tests"), os.path.join(HERE, "..", "src")]

import numpy as np  # noqa: E402
from kernels import CASES  # noqa: E402
from launch_bench import WARM_KERNELS, renamed, toolchain_floor  # noqa: E402

from cujit import cuda, warmup  # noqa: E402
from cujit.options import Options  # noqa: E402
from cujit.types import typeof  # noqa: E402

ARCH = (9, 0)


def rounds_of(case, rounds: int) -> list[dict]:
    """``rounds`` timed rounds after one discarded one: a new renamed function each."""
    host_args, *_ = case.setup(np.random.default_rng(0))
    types = tuple(typeof(a) for a in host_args)
    out = []
    for _ in range(rounds + 1):
        kernel = cuda.jit(renamed(case.kernel.py_func, "cpu"))
        kernel._options = lambda: Options(arch=ARCH)  # no device to read the arch from
        start = time.perf_counter()
        spec = kernel.compile(types)
        compile_s = time.perf_counter() - start
        times = spec.result.times
        out.append(
            {
                "compile": compile_s,
                "outside_toolchain": compile_s - times["ptx"] - times["cubin"],
                "stages_1_6": sum(t for stage, t in times.items() if stage not in ("ptx", "cubin")),
                "floor": toolchain_floor(spec, ARCH, reps=1),
            }
        )
    return out[1:]


def main(rounds: int) -> dict:
    warmup.note_kernel()
    warmup.start(ARCH)  # as beside a driver's start: the process is warm after it
    warmup.wait()
    by_name = {c.name: c for c in CASES}
    result: dict = {
        "when": time.strftime("%Y%m%d-%H%M%S"),
        "python": platform.python_version(),
        "machine": platform.node(),
        "rounds": rounds,
        "kernels": {},
    }
    print(f"{rounds} rounds per kernel (Python {result['python']}); ms, medians")
    print(
        f"  {'kernel':22} {'compile':>8} {'outside':>8} {'stages':>8} {'floor':>8} "
        f"{'floor/compile':>14}"
    )
    for name in WARM_KERNELS:
        runs = rounds_of(by_name[name], rounds)
        row = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        row["floor_over_compile_by_round"] = statistics.median(
            r["floor"] / r["compile"] for r in runs
        )
        row["rounds"] = runs
        result["kernels"][name] = row
        print(
            f"  {name:22} {1e3 * row['compile']:8.2f} {1e3 * row['outside_toolchain']:8.2f} "
            f"{1e3 * row['stages_1_6']:8.2f} {1e3 * row['floor']:8.2f} "
            f"{row['floor_over_compile_by_round']:14.3f}"
        )
    path = os.path.join(HERE, "results", f"warm-compile-cpu-{result['when']}.json")
    with open(path, "w") as fh:
        json.dump(result, fh, indent=1)
    print(f"written: {os.path.relpath(path)}")
    return result


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
