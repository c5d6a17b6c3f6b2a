"""Compile-to-PTX time, cujit beside numba-cuda, in one process (no GPU needed).

    PYTHONPATH=src python3 bench/compile_bench.py [--repeat N] [--all] [--no-save]

Both compilers compile the same kernels of ``tests/kernels.py`` for the same
argument types to PTX for sm_90.  One kernel is compiled first in each and not
counted: it pays libNVVM's own initialisation (~47 ms) and numba's first-use
setup, which are not the cost of "a new kernel in a warm process".  Each kernel
is then compiled ``--repeat`` times and the median is reported, per cujit stage
and in total.  The table and a JSON record (date, machine, versions) are written
to ``bench/results/``.

numba-cuda's ``compile_ptx`` asks NVRTC for the supported architectures and
libdevice's path: it needs ``nvidia-cuda-nvrtc`` (13.x) installed beside
``nvidia-nvvm``; cujit does not.  ``--no-numba`` times cujit alone.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
import types as pytypes
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

# Ordinary kernels: 1-D and 2-D indexing, loops, shared memory, atomics, math, closures.
DEFAULT_KERNELS = (
    "saxpy",
    "python_int_semantics",
    "loops_break_continue",
    "logic_and_chains",
    "grid_2d",
    "layouts_c_f_strided",
    "matmul_shared_tiles",
    "reduce_shared_atomic",
    "histogram_atomics",
    "stencil_boundaries",
    "math_functions",
    "closure_constant",
)
WARMUP = "bool_and_unsigned"  # compiled first in each compiler, not counted
STAGES = ("bytecode", "cfg", "ir", "typed", "passes", "llvm", "ptx")


def host_args(case):
    import numpy as np

    args, *_ = case.setup(np.random.default_rng(0))
    return args


def numba_function(pyfunc, numba_cuda):
    """``pyfunc`` rebound so that its ``cuda`` (and type names) mean numba's, not cujit's."""
    import numba

    env = dict(pyfunc.__globals__)
    env["cuda"] = numba_cuda
    for name in ("float32", "float64", "int32", "int64"):
        env[name] = getattr(numba, name)
    return pytypes.FunctionType(
        pyfunc.__code__, env, pyfunc.__name__, pyfunc.__defaults__, pyfunc.__closure__
    )


def time_cujit(case, repeat: int) -> dict:
    from cujit.options import Options
    from cujit.pipeline import compile_kernel
    from cujit.types import typeof

    arg_types = tuple(typeof(a) for a in host_args(case))
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = compile_kernel(
            case.kernel.py_func, arg_types, Options(arch=(9, 0)), stop_after="ptx"
        )
        total = time.perf_counter() - start
        runs.append((total, result.times))
    return {
        "total_ms": statistics.median(t for t, _ in runs) * 1e3,
        "stages_ms": {s: statistics.median(r[s] for _, r in runs) * 1e3 for s in STAGES},
    }


def time_numba(case, repeat: int) -> dict:
    import numba
    from numba import cuda as numba_cuda

    fn = numba_function(case.kernel.py_func, numba_cuda)
    sig = tuple(numba.typeof(a) for a in host_args(case))
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        numba_cuda.compile_ptx(fn, sig, cc=(9, 0))
        runs.append(time.perf_counter() - start)
    return {"total_ms": statistics.median(runs) * 1e3}


def machine() -> dict:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "node": platform.node(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "system": platform.platform(),
    }


def versions() -> dict:
    from importlib.metadata import version

    import cujit
    from cujit.ptx import toolchain_versions

    tv = toolchain_versions()
    return {
        "python": platform.python_version(),
        "cujit": cujit.__version__,
        "numba": version("numba"),
        "numba-cuda": version("numba-cuda"),
        "llvmlite": version("llvmlite"),
        "libnvvm": tv["libnvvm"],
        "nvjitlink": tv["nvjitlink"],
    }


def render(rows: list[dict]) -> str:
    head = ["kernel"] + list(STAGES) + ["cujit", "numba", "numba/cujit"]
    lines = ["  ".join(f"{h:>11}" if i else f"{h:<22}" for i, h in enumerate(head))]
    for r in rows:
        cells = [f"{r['name']:<22}"]
        cells += [f"{r['cujit']['stages_ms'][s]:>11.2f}" for s in STAGES]
        cells += [
            f"{r['cujit']['total_ms']:>11.2f}",
            f"{r['numba']['total_ms']:>11.2f}",
            f"{r['ratio']:>10.1f}x",
        ]
        lines.append("  ".join(cells))
    ratios = [r["ratio"] for r in rows if r["ratio"] == r["ratio"]]  # nan: numba not run
    geo = statistics.geometric_mean(ratios) if ratios else float("nan")
    ours = statistics.median(r["cujit"]["total_ms"] for r in rows)
    theirs = statistics.median(r["numba"]["total_ms"] for r in rows)
    lines.append(
        f"median total: cujit {ours:.2f} ms, numba-cuda {theirs:.2f} ms; "
        f"geomean numba/cujit {geo:.1f}x  (times in ms, median per kernel)"
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="compiles per kernel (median)")
    parser.add_argument("--all", action="store_true", help="every kernel of tests/kernels.py")
    parser.add_argument("--no-numba", action="store_true", help="time cujit only")
    parser.add_argument("--no-save", action="store_true", help="do not write bench/results/")
    args = parser.parse_args(argv)

    from kernels import CASES

    by_name = {c.name: c for c in CASES}
    names = [c.name for c in CASES] if args.all else list(DEFAULT_KERNELS)
    time_cujit(by_name[WARMUP], 1)
    if not args.no_numba:
        time_numba(by_name[WARMUP], 1)
    rows = []
    for name in names:
        case = by_name[name]
        ours = time_cujit(case, args.repeat)
        theirs = time_numba(case, args.repeat) if not args.no_numba else {"total_ms": 0.0}
        rows.append(
            {
                "name": name,
                "cujit": ours,
                "numba": theirs,
                "ratio": theirs["total_ms"] / ours["total_ms"]
                if theirs["total_ms"]
                else float("nan"),
            }
        )
    table = render(rows)
    print(table)
    if not args.no_save:
        out = ROOT / "bench" / "results"
        out.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        record = {
            "bench": "compile_bench",
            "date": dt.datetime.now().isoformat(),
            "machine": machine(),
            "versions": versions(),
            "repeat": args.repeat,
            "rows": rows,
            "table": table,
        }
        path = out / f"compile_bench-{stamp}.json"
        path.write_text(json.dumps(record, indent=1) + "\n")
        print(f"saved {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
