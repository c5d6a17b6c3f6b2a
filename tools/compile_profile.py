"""Where a new kernel's time goes in a warm process, stage by stage: tests/kernels.py's
cases, each round a new renamed copy (nothing cached), compiled, loaded, launched once
and synchronised; per kernel the median of each stage's ``CompileResult.times``, the
rest outside the stages (the dispatcher, the load, the launch, the synchronisation), and
beside them the toolchain floor (libNVVM + nvJitLink alone on the same LLVM IR, as
bench/launch_bench.py's ``warm_compile`` measures it).

    PYTHONPATH=src python3 tools/compile_profile.py [-n 7] [--kernels saxpy,stencil_boundaries]
        [--no-launch] [--json out.json]

``--no-launch`` (needed without a GPU) compiles for sm_90 and launches nothing: the
rest outside the stages is then the dispatcher's alone.  The environment's knobs apply
(``CUJIT_COARSEN=0 CUJIT_INDEX32=0``: no launch-selected variant).  A profile, not a
bench: launch_bench.py is the measure the targets are read from.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
for _sub in ("bench", "tests"):
    _path = os.path.join(HERE, "..", _sub)
    if _path not in sys.path:
        sys.path.insert(0, _path)

DEFAULT_KERNELS = "saxpy,stencil_boundaries,matmul_shared_tiles,math_functions"


def profile(name: str, rounds: int, launch: bool) -> dict:
    """One kernel's row: stage medians (ms), the rest, the whole, and the floor."""
    import numpy as np
    from kernels import CASES
    from launch_bench import renamed, toolchain_floor

    from cujit import cuda
    from cujit.options import Options
    from cujit.types import typeof

    case = {c.name: c for c in CASES}[name]
    host_args, grid, block, shmem = case.setup(np.random.default_rng(0))
    if launch:
        args = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host_args]
        cuda.synchronize()
    types = tuple(typeof(a) for a in host_args)
    totals, stages, kernel = [], [], None
    for r in range(rounds + 1):  # the first round warms up and is not counted
        kernel = cuda.jit(renamed(case.kernel.py_func, "profile"))
        if not launch:
            kernel._options = lambda: Options(arch=(9, 0))  # noqa: B023 -- this round's
        start = time.perf_counter()
        if launch:
            kernel[grid, block, 0, shmem](*args)
            cuda.synchronize()
        else:
            kernel.compile(types)
        elapsed = time.perf_counter() - start
        if r:
            totals.append(elapsed)
            stages.append(dict(next(iter(kernel.overloads.values())).result.times))
    spec = next(iter(kernel.overloads.values()))
    row = {k: 1e3 * statistics.median(s.get(k, 0.0) for s in stages) for k in stages[-1]}
    out = {"stages_ms": row, "total_ms": 1e3 * statistics.median(totals)}
    out["outside_ms"] = out["total_ms"] - sum(row.values())
    out["floor_ms"] = 1e3 * toolchain_floor(spec, kernel._options().arch)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=7, help="rounds per kernel (after one warm-up)")
    ap.add_argument("--kernels", default=DEFAULT_KERNELS)
    ap.add_argument("--no-launch", action="store_true", help="compile only (no GPU needed)")
    ap.add_argument("--json")
    opts = ap.parse_args(argv)
    launch = not opts.no_launch
    rows = {}
    for name in opts.kernels.split(","):
        row = rows[name] = profile(name, opts.n, launch)
        parts = " ".join(f"{k}={v:.2f}" for k, v in row["stages_ms"].items())
        print(
            f"{name:22} total {row['total_ms']:7.2f}  floor {row['floor_ms']:7.2f}  "
            f"outside the stages {row['outside_ms']:6.2f}  | {parts}",
            flush=True,
        )
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump({"launch": launch, "rounds": opts.n, "kernels": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
