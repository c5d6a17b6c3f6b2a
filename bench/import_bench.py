"""Import time of ``cujit`` in fresh interpreters, beside numba-cuda's.

    PYTHONPATH=src python3 bench/import_bench.py [--runs N] [--no-save]

Two measures, medians over ``--runs`` fresh processes:

- ``importtime``: the cumulative microseconds ``python -X importtime`` gives the
  top-level imports the statement triggers (cujit's own cost, interpreter
  start-up and ``site`` excluded);
- ``wall``: the wall time of ``python -c STATEMENT`` minus that of ``python -c pass``,
  the fastest run of each (the least disturbed by other load on the machine).

Byte-code caching matters (a module compiled from source costs several times
its cached import): when ``PYTHONDONTWRITEBYTECODE`` is set, the runs use a
``PYTHONPYCACHEPREFIX`` under /tmp so that every run after the first is cached.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATEMENTS = {
    "cujit": ("import cujit", ("cujit",)),
    "cujit.cuda": ("from cujit import cuda", ("cujit",)),
    "numba.cuda": ("from numba import cuda", ("numba",)),
}


def env() -> dict:
    e = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    if e.pop("PYTHONDONTWRITEBYTECODE", None):
        e["PYTHONPYCACHEPREFIX"] = "/tmp/cujit-bench-pycache"
    return e


def importtime_us(statement: str, roots: tuple[str, ...]) -> int:
    """Sum of the cumulative times of the top-level imports of ``roots``'s packages."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        env=env(),
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    total = 0
    for line in err.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if (
            name.startswith(" ")
            and not name.startswith("  ")
            and name.strip().split(".")[0] in roots
        ):
            total += int(cumulative)
    return total


def wall_ms(statement: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], env=env(), check=True)
    return (time.perf_counter() - start) * 1e3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args(argv)
    for statement, roots in STATEMENTS.values():  # warm the byte-code and file caches
        importtime_us(statement, roots)
    rows = {}
    for label, (statement, roots) in STATEMENTS.items():
        it = [importtime_us(statement, roots) / 1e3 for _ in range(args.runs)]
        base, wall = [], []
        for _ in range(args.runs):  # interleaved, so that load spikes hit both alike
            base.append(wall_ms("pass"))
            wall.append(wall_ms(statement))
        rows[label] = {
            "importtime_ms": statistics.median(it),
            "wall_ms": min(wall) - min(base),
            "python_startup_ms": min(base),
        }
        print(
            f"{statement:<26} importtime {rows[label]['importtime_ms']:7.1f} ms   "
            f"wall minus 'pass' {rows[label]['wall_ms']:7.1f} ms   "
            f"(python -c pass {rows[label]['python_startup_ms']:.1f} ms)"
        )
    if not args.no_save:
        out = ROOT / "bench" / "results"
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"import_bench-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
        path.write_text(
            json.dumps(
                {
                    "bench": "import_bench",
                    "date": dt.datetime.now().isoformat(),
                    "python": sys.version,
                    "runs": args.runs,
                    "node": os.uname().nodename,
                    "rows": rows,
                },
                indent=1,
            )
        )
        print(f"saved {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
