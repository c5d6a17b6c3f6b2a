"""Splits the test suite's files into shards of about equal running time, for .ci/run.

    python tools/ci_shards.py N I      the files of shard I (1..N), one a line
    python tools/ci_shards.py N        every shard: its expected seconds and files
    python tools/ci_shards.py --totals LOG...   the counts of pytest's last lines, summed
    python tools/ci_shards.py --record LOG...   rewrite .ci/durations.txt from the output
                                                of pytest --durations=0 --durations-min=0

Every file pytest collects from ``tests/`` (pytest's default file names, ``test_*.py``
and ``*_test.py``, in every folder below it) is in exactly one shard, so the shards
together run the whole suite; the suite's files are found here as pytest finds them,
and a file the durations list does not know still gets a shard.  The shards are made
longest file first, each into the shard with the least time so far, from the seconds
per file in ``.ci/durations.txt`` (``SECONDS PATH`` lines: a whole-suite run's
``--durations=0`` summed per file; a file not listed counts as ``DEFAULT_S``).  Stale
seconds make the shards less even, never less complete.
"""

from __future__ import annotations

import collections
import fnmatch
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = "tests"
DURATIONS = os.path.join(ROOT, ".ci", "durations.txt")
PATTERNS = ("test_*.py", "*_test.py")  # pytest's python_files (pyproject sets none)
DEFAULT_S = 2.0


def test_files(root: str = ROOT) -> list[str]:
    """The suite's files, as paths relative to ``root``, sorted."""
    found = []
    for folder, dirs, files in os.walk(os.path.join(root, TESTS)):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        for name in files:
            if any(fnmatch.fnmatch(name, p) for p in PATTERNS):
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(p.replace(os.sep, "/") for p in found)


def read_durations(path: str = DURATIONS) -> dict[str, float]:
    seconds: dict[str, float] = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                value, _, name = line.strip().partition(" ")
                if name and not line.startswith("#"):
                    seconds[name.strip()] = float(value)
    return seconds


def shards(files: list[str], seconds: dict[str, float], n: int) -> list[tuple[float, list]]:
    """``files`` in ``n`` shards of about equal time: (seconds, files) each, files sorted."""
    load = [(0.0, k, []) for k in range(n)]
    for name in sorted(files, key=lambda f: (-seconds.get(f, DEFAULT_S), f)):
        total, k, names = min(load)
        names.append(name)
        load[k] = (total + seconds.get(name, DEFAULT_S), k, names)
    return [(total, sorted(names)) for total, _, names in sorted(load, key=lambda s: s[1])]


def totals(logs: list[str]) -> str:
    """The counts (passed, skipped...) and seconds of pytest's summary line in each log
    (its last line that ends "in N.NNs", whatever the interpreter printed after it at
    exit), summed: one version's suite over its shards."""
    counts: collections.Counter = collections.Counter()
    seconds = 0.0
    summary = re.compile(r" in ([\d.]+)s\b")
    for path in logs:
        with open(path) as f:
            lines = f.read().strip().splitlines()
        last = next((line for line in reversed(lines) if summary.search(line)), "")
        for number, what in re.findall(r"(\d+) ([a-z]+)", last):
            counts[what] += int(number)
        seconds += sum(float(s) for s in summary.findall(last))
    parts = ", ".join(f"{n} {what}" for what, n in counts.items())
    return f"{parts} in {seconds:.0f} s over {len(logs)} shards"


def record(logs: list[str], path: str = DURATIONS) -> int:
    """Each file's seconds (setup, call and teardown of its tests) from pytest's
    ``--durations=0`` tables in ``logs``, written to ``path``; the number of files."""
    seconds: collections.Counter = collections.Counter()
    row = re.compile(r"^([\d.]+)s (?:setup|call|teardown) +([^:\s]+)::")
    for log in logs:
        with open(log) as f:
            for line in f:
                m = row.match(line)
                if m:
                    seconds[m.group(2)] += float(m.group(1))
    with open(path, "w") as f:
        f.write(
            "# Seconds per test file (setup, call, teardown) of a whole-suite run, for\n"
            "# tools/ci_shards.py. Written by python tools/ci_shards.py --record LOG...\n"
        )
        f.writelines(f"{seconds[name]:.2f} {name}\n" for name in sorted(seconds))
    return len(seconds)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--totals"]:
        print(totals(argv[1:]))
        return 0
    if argv[:1] == ["--record"]:
        print(f"{record(argv[1:])} files: wrote {os.path.relpath(DURATIONS)}")
        return 0
    if len(argv) not in (1, 2):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    n = int(argv[0])
    parts = shards(test_files(), read_durations(), n)
    if len(argv) == 2:
        names = parts[int(argv[1]) - 1][1]
        if not names:  # pytest given no file would run the whole suite
            print(f"shard {argv[1]} of {n} has no file: fewer shards", file=sys.stderr)
            return 1
        print("\n".join(names))
        return 0
    for k, (total, names) in enumerate(parts, 1):
        print(f"shard {k}: {total:.0f} s, {len(names)} files: {' '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
