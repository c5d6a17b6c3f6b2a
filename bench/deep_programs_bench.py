"""Compile time of deep programs, at doubling depths: does it stay about linear?

Programs (``tests/deep_programs.py``): ``chain``, n device functions each calling the one
before (125, 250, 500, 1000); ``ifs``, ``loops``, ``elif``, ``sum``, ``and``, kernels of n
statements nested as deep as Python allows, an ``elif`` chain of n / 2 tests, a sum of n
terms, a condition of n ``and``s (1250, 2500, 5000, 10000).  Each program is a new
module, so nothing compiled before is reused.

    PYTHONPATH=src python3 bench/deep_programs_bench.py [--quick] [--shapes chain,sum]

Per program it times, with ``pipeline.compile_kernel`` (no GPU needed): cujit's stages
of the CUDA target up to the LLVM text (stages 1-6, ``cujit``), libNVVM's compile to PTX
(``nvvm``), and the CPU target's whole compile to native code (``cpu``: cujit's stages,
LLVM's optimiser and MCJIT), then each column's ratio to the depth before (2.0 for a
doubling is linear).  Writes ``bench/results/deep_programs-<time>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "tests"), os.path.join(HERE, "..", "src")]

import deep_programs  # noqa: E402

from cujit.options import Options  # noqa: E402
from cujit.pipeline import compile_kernel  # noqa: E402
from cujit.types import typeof  # noqa: E402

ARCH = (9, 0)
CHAIN_DEPTHS = (125, 250, 500, 1000)
NESTED_SIZES = (1250, 2500, 5000, 10000)
QUICK_CHAIN = (60, 120, 240)
QUICK_NESTED = (600, 1200, 2400)


def source(shape: str, n: int) -> str:
    if shape == "chain":
        return deep_programs.chain_source(n)
    return deep_programs.SHAPES[shape](n)


def measure(shape: str, n: int) -> dict:
    """One program of ``shape`` and size ``n``, compiled for each target."""
    types = tuple(typeof(a) for a in deep_programs.arguments(shape))
    kern = deep_programs.load(source(shape, n), shape).kern
    start = time.perf_counter()
    cuda = compile_kernel(kern, types, Options(arch=ARCH), stop_after="ptx")
    cuda_s = time.perf_counter() - start
    kern = deep_programs.load(source(shape, n), shape).kern  # fresh device functions
    start = time.perf_counter()
    compile_kernel(kern, types, Options(target="cpu"), stop_after="native")
    cpu_s = time.perf_counter() - start
    nvvm_s = cuda.times["ptx"]
    return {"shape": shape, "n": n, "cujit": cuda_s - nvvm_s, "nvvm": nvvm_s, "cpu": cpu_s}


COLUMNS = ("cujit", "nvvm", "cpu")


def print_header() -> None:
    print(f"{'shape':<7}{'n':>7}" + "".join(f"{c + ' s':>10}{'x':>6}" for c in COLUMNS))


def print_row(row: dict, before: dict | None) -> None:
    """``row``'s times, each with its ratio to ``before`` (the same shape, half the size)."""
    cells = f"{row['shape']:<7}{row['n']:>7}"
    for c in COLUMNS:
        ratio = f"{row[c] / before[c]:.2f}" if before is not None and before[c] > 0 else ""
        cells += f"{row[c]:>10.3f}{ratio:>6}"
    print(cells, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller programs (a smoke run)")
    parser.add_argument("--shapes", default="chain," + ",".join(deep_programs.SHAPES))
    args = parser.parse_args()
    chain, nested = (QUICK_CHAIN, QUICK_NESTED) if args.quick else (CHAIN_DEPTHS, NESTED_SIZES)
    rows = []
    print_header()
    for shape in args.shapes.split(","):
        before = None
        for n in chain if shape == "chain" else nested:
            rows.append(measure(shape, n))
            print_row(rows[-1], before)
            before = rows[-1]
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.join(HERE, "results", f"deep_programs-{stamp}.json")
    record = {
        "bench": "deep_programs",
        "time": stamp,
        "host": platform.node(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "arch": ARCH,
        "rows": rows,
    }
    with open(out, "w") as f:
        json.dump(record, f, indent=1)
    print(f"wrote {os.path.relpath(out)}")


if __name__ == "__main__":
    main()
