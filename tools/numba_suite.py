"""numba-cuda's own test suite (tests/cudapy and tests/doc_examples of the installed
numba-cuda, 0.30.4: ``pip install -e '.[conformance]'``) run with ``numba.cuda`` served
by cujit.

    python tools/numba_suite.py                      CPU target, check conformance/expected_pass.txt
    python tools/numba_suite.py --target cuda        on a GPU
    python tools/numba_suite.py --update             rewrite the expected list from this run
    python tools/numba_suite.py -k test_laplace -k test_idiv     only these files

The routing, the counting of cujit's compilations and the harness shims are described
in tools/numba_suite_worker.py.  Test files run in parallel worker processes
(``--jobs``); each test has a timeout (``--test-timeout``) after which its worker ends
and a new one carries on with the tests left, so a hang costs one test.  Files and tests
left out, each with its reason, are listed in conformance/excluded.txt.

Outcomes: passed (cujit compiled or launched a kernel); host (passed with no kernel, and
the host-API audit of tools/numba_suite_audit.py saw the test's code call cujit and
nothing of numba-cuda's implementation: a pass of cujit's host API, counted beside the
kernel passes and apart from them); numba-served (passed with no kernel, but the test's
code called numba-cuda's implementation: no pass); no-kernel (passed, but cujit neither
compiled nor launched anything and the audit did not run, before Python 3.12, or saw no
cujit call: no pass); numba-compiled (passed, but numba-cuda compiled or simulated a
kernel: no pass), failed, error
(setup, teardown or the file's import), skipped, timeout, crashed.  On the CPU target
the harness runs as on a GPU (``--harness device``, the default): its device queries are
answered by cujit's CPU device, so the tests it marks as needing a GPU run too, their
kernels on cujit's CPU target (whose inspection shows the kernels' CUDA code, PTX and
NVVM IR compiled without a GPU, as on a GPU).  ``--harness simulator`` runs it in numba's
simulator mode (``NUMBA_ENABLE_CUDASIM=1``) instead, as the drop-in does: those tests are
then skipped.

Per-test outcomes go to ``--json`` (default conformance/results-TARGET.json); totals
and the most common failure messages are printed.  With the expected list (the default
unless ``--no-check``), the exit status is 1 when a test on the list did not pass; new
passes are printed so that the list can grow (``--update``).
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFORMANCE = os.path.join(ROOT, "conformance")
WORKER = os.path.join(ROOT, "tools", "numba_suite_worker.py")
FOLDERS = ("cudapy", "doc_examples")
PASS = "passed"
LEFT_OUT = "left-out"  # an excluded.txt test or class: not run, not in the totals
HOST = "host"
OUTCOMES = (
    "passed",
    "host",
    "numba-served",
    "no-kernel",
    "numba-compiled",
    "failed",
    "error",
    "skipped",
    "timeout",
    "crashed",
)


def tests_dir() -> str:
    spec = importlib.util.find_spec("numba_cuda")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("numba-cuda is not installed: pip install -e '.[conformance]'")
    return os.path.join(spec.submodule_search_locations[0], "numba", "cuda", "tests")


def read_excluded(path: str) -> dict[str, str]:
    """conformance/excluded.txt: ``ID: reason`` lines (ID a file, ``FILE::Class`` or
    ``FILE::Class::test``), # comments."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line
            line = line.strip()
            if line:
                key, _, reason = line.partition(": ")
                out[key.strip()] = reason.strip()
    return out


def read_ids(path: str) -> set[str]:
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}


def tests_in_file(path: str, rel: str) -> list[str]:
    """The test ids a file defines (for files that fail to import): TestCase methods."""
    try:
        with open(path) as f:
            tree = ast.parse(f.read())
    except SyntaxError:
        return [rel]
    ids = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            ids += [
                f"{rel}::{node.name}::{f.name}"
                for f in node.body
                if isinstance(f, ast.FunctionDef) and f.name.startswith("test")
            ]
        elif isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            ids.append(f"{rel}::{node.name}")
    return ids or [rel]


def select_files(root: str, excluded: dict[str, str], keys: list[str]) -> list[str]:
    files = []
    for folder in FOLDERS:
        for name in sorted(os.listdir(os.path.join(root, folder))):
            rel = f"{folder}/{name}"
            if not (name.startswith("test_") and name.endswith(".py")) or rel in excluded:
                continue
            if keys and not any(k in rel for k in keys):
                continue
            files.append(rel)
    return files


def _ending(stderr: str, args) -> str:
    """Why a worker ended early: faulthandler's timeout with the innermost frame, or the
    last lines it wrote."""
    if "Timeout (" in stderr:
        frames = [ln.strip() for ln in stderr.splitlines() if ln.strip().startswith("File ")]
        where = frames[0] if frames else ""
        return f"Timeout: no result within {args.test_timeout:g} s; innermost frame: {where}"
    return stderr[-400:].strip()


def _run_worker(root: str, chunk: list[str], done: set[str], args, env: dict):
    """One worker process over ``chunk`` (less the tests ``done``): its exit status, why
    it ended, and the events it wrote."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as ev:
        events = ev.name
    cmd = [
        sys.executable,
        WORKER,
        events,
        str(args.test_timeout),
        *[os.path.join(root, f) for f in chunk],
        "--skip",
        *sorted(done),
        "--leave-out",
        *sorted(args.leave_out),
    ]
    try:
        proc = subprocess.run(
            cmd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=max(args.test_timeout * 4, 300) + 60 * len(chunk),
        )
        code, tail = proc.returncode, _ending(proc.stderr or proc.stdout, args)
    except subprocess.TimeoutExpired:
        code, tail = -9, "Timeout: the worker ran past its own bound"
    with open(events) as f:
        records = [json.loads(line) for line in f]
    os.unlink(events)
    return code, tail, records


def _outcomes(root: str, records: list[dict], code: int, tail: str) -> dict:
    """Each test's record; a test started but not finished gets the worker's end."""
    running, recorded = None, {}
    for rec in records:
        if "start" in rec:
            running = rec["start"]
        elif "left_out" in rec:
            recorded[rec["left_out"]] = {"id": rec["left_out"], "outcome": LEFT_OUT}
        elif "collect_error" in rec:
            rel = rec["collect_error"].split("::")[0]
            for tid in tests_in_file(os.path.join(root, rel), rel):
                recorded[tid] = {
                    "id": tid,
                    "outcome": "error",
                    "message": "import: " + rec["message"],
                }
        else:
            recorded[rec["id"]] = rec
    if running is not None and running not in recorded:
        # faulthandler's report opens with "Timeout": the timer fired, whatever the exit
        # status its exit left (the process may be tearing down threads as it ends).
        kind = "timeout" if tail.startswith("Timeout") else "crashed"
        recorded[running] = {"id": running, "outcome": kind, "message": tail.strip()}
    return recorded


def run_chunk(root: str, chunk: list[str], args, env: dict, results: dict, lock) -> None:
    """Run some files in worker processes until every test in them has an outcome."""
    done: set[str] = set()
    for _ in range(200):  # each pass records one test at least: this bounds the loop
        code, tail, records = _run_worker(root, chunk, done, args, env)
        recorded = _outcomes(root, records, code, tail)
        with lock:
            results.update(recorded)
        done |= set(recorded)
        if code == 0:
            return
        if not recorded:  # it ended before any test: one file at a time, to find which
            if len(chunk) > 1 and not done:
                for rel in chunk:
                    run_chunk(root, [rel], args, env, results, lock)
                return
            _record_unrun(root, chunk, done, code, tail, results, lock)
            return


def _record_unrun(root, chunk, done, code, tail, results, lock) -> None:
    kind = "timeout" if tail.startswith("Timeout") else "crashed"
    left = {}
    for rel in chunk:
        for tid in tests_in_file(os.path.join(root, rel), rel):
            if tid not in done:
                left[tid] = {
                    "id": tid,
                    "outcome": kind,
                    "message": f"the worker ended (status {code}) before this test: {tail}",
                }
    with lock:
        results.update(left)


def run_suite(root: str, files: list[str], args, env: dict) -> dict:
    chunks = [files[i :: args.chunks] for i in range(args.chunks) if files[i :: args.chunks]]
    results: dict = {}
    lock = threading.Lock()
    queue = list(chunks)

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                chunk = queue.pop(0)
            run_chunk(root, chunk, args, env, results, lock)

    threads = [threading.Thread(target=worker) for _ in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def cause(message: str) -> str:
    """A failure message with its specifics (numbers, names in quotes) blanked, so that
    messages of one cause group together."""
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    first = re.sub(r"/\S+?\.py:\d+:\d+:", "FILE:", first)
    first = re.sub(r"0x[0-9a-f]+", "0x_", first)
    first = re.sub(r"\b\d+\b", "N", first)
    return first[:110]


# Test files with issues of their own: the library-facing API and the GPU ufuncs.  The
# conformance measure is taken without them (core_share).
OWN_ISSUE_FILES = (
    "test_extending",
    "test_overload",
    "test_compiler",
    "test_linker",
    "test_cffi",
    "test_ffi",
    "test_cpointer",
    "vectoriz",
    "gufunc",
    "ufunc",
    "reduction",
)


def share(rows: list[dict], label: str) -> str:
    """Of ``rows`` not skipped: the kernel passes, the audited host-API passes, and both."""
    ran = [r for r in rows if r["outcome"] != "skipped"]
    passed = sum(r["outcome"] == PASS for r in ran)
    host = sum(r["outcome"] == HOST for r in ran)
    n = max(len(ran), 1)
    return (
        f"  {label}: of {len(ran)} not skipped, passed {passed} with a kernel "
        f"({100 * passed / n:.1f}%) and {host} more of the host API (audited), "
        f"together {passed + host} ({100 * (passed + host) / n:.1f}%)"
    )


def core_share(results: dict) -> str:
    """The tests not in OWN_ISSUE_FILES (see ``share``)."""
    core = [
        r for tid, r in results.items() if not any(f in tid.split("::")[0] for f in OWN_ISSUE_FILES)
    ]
    return share(core, "without the library and ufunc files")


def summarize(results: dict, excluded_tests: int) -> str:
    counts = collections.Counter(r["outcome"] for r in results.values())
    total = len(results)
    lines = [
        f"{total} tests ({excluded_tests} more left out: conformance/excluded.txt)",
        "  " + "  ".join(f"{o} {counts[o]}" for o in OUTCOMES),
        share(list(results.values()), "all files"),
        core_share(results),
        "largest causes (failed, error, timeout, crashed):",
    ]
    causes = collections.Counter(
        cause(r["message"])
        for r in results.values()
        if r["outcome"] in ("failed", "error", "timeout", "crashed")
    )
    lines += [f"  {n:5d}  {c}" for c, n in causes.most_common(25)]
    return "\n".join(lines)


def check(results: dict, expected: set[str], files: list[str]) -> tuple[list, list]:
    """Expected passes that did not pass (in the files run), and new passes."""
    ran = tuple(f + "::" for f in files)
    lost = sorted(
        t for t in expected if t.startswith(ran) and results.get(t, {}).get("outcome") != PASS
    )
    new = sorted(t for t, r in results.items() if r["outcome"] == PASS and t not in expected)
    return lost, new


def known_reasons(path: str = os.path.join(CONFORMANCE, "reasons.txt")) -> dict[str, str]:
    """conformance/reasons.txt: ``ID: why`` for failures cujit keeps on purpose or that
    need more than the failure's first line to explain."""
    reasons = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                tid, sep, why = line.strip().partition(": ")
                if sep and not tid.startswith("#"):
                    reasons[tid] = why
    return reasons


def write_failures(path: str, results: dict, target: str, reasons: str | None = None) -> None:
    """Every test of this run that did not pass, with its outcome and its reason (the
    failure's first line, its file paths blanked, and where conformance/reasons.txt has
    one, why): ``ID: outcome: reason[ -- why: ...]``."""
    why = known_reasons() if reasons is None else known_reasons(reasons)
    lines = []
    for tid in sorted(results):
        r = results[tid]
        if r["outcome"] in (PASS, HOST, "skipped"):
            continue
        first = r.get("message", "").strip().splitlines()
        reason = re.sub(r"/\S+?\.py:(\d+):\d+:", r"FILE:\1:", first[0] if first else "")
        if r["outcome"] == "no-kernel":
            reason = "passed, but cujit compiled and launched nothing (no audit saw cujit serve it)"
        note = f" -- why: {why[tid]}" if tid in why else ""
        lines.append(f"{tid}: {r['outcome']}: {reason[:200] or '(no message)'}{note}\n")
    with open(path, "w") as f:
        f.write(
            f"# numba-cuda tests that do not pass under cujit on the {target} target, each "
            "with its outcome and reason\n# (the failure's first line).  Written by "
            f"python tools/numba_suite.py --target {target} --failures PATH\n"
        )
        f.write("".join(lines))


def write_expected(path: str, results: dict, expected: set[str], files: list[str]) -> None:
    ran = tuple(f + "::" for f in files)
    keep = {t for t in expected if not t.startswith(ran)}  # files this run left alone
    ids = sorted(keep | {t for t, r in results.items() if r["outcome"] == PASS})
    with open(path, "w") as f:
        f.write(
            "# numba-cuda tests that pass under cujit on the CPU target: CI fails when "
            "one stops passing.\n# Written by python tools/numba_suite.py --update\n"
        )
        f.write("".join(t + "\n" for t in ids))


# The harness mode of CPU-target runs (and of CI's expected list).
HARNESS_ON_CPU = "device"


def environment(target: str, harness: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "src")] + [p for p in [env.get("PYTHONPATH")] if p]
    )
    env["CUJIT_TARGET"] = target
    if harness == "simulator":
        env["NUMBA_ENABLE_CUDASIM"] = "1"  # the harness's device queries: numba's simulator
    else:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.setdefault("CUJIT_WARMUP", "0")
    return env


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    p.add_argument(
        "--harness",
        choices=("device", "simulator"),
        help="how numba-cuda's harness sees the machine: 'device' (a GPU: on the CPU target, "
        "cujit's CPU device answers the harness's device queries) or 'simulator' "
        f"(NUMBA_ENABLE_CUDASIM=1: its GPU-only tests skip). Default: device on cuda, "
        f"{HARNESS_ON_CPU} on cpu",
    )
    p.add_argument(
        "-k",
        dest="keys",
        action="append",
        default=[],
        help="run only the files whose path contains this (repeatable)",
    )
    p.add_argument("--jobs", type=int, default=2, help="worker processes at once")
    p.add_argument("--chunks", type=int, default=16, help="groups of files, one worker each")
    p.add_argument("--test-timeout", type=float, default=60.0, help="seconds per test")
    p.add_argument("--json", help="per-test outcomes (default conformance/results-TARGET.json)")
    p.add_argument("--expected", default=os.path.join(CONFORMANCE, "expected_pass.txt"))
    p.add_argument("--no-check", action="store_true", help="do not compare with --expected")
    p.add_argument(
        "--failures",
        help="write every test that did not pass, with its reason, here "
        "(conformance/failing-TARGET.txt)",
    )
    p.add_argument("--update", action="store_true", help="rewrite --expected from this run")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    root = tests_dir()
    excluded = read_excluded(os.path.join(CONFORMANCE, "excluded.txt"))
    files = select_files(root, excluded, args.keys)
    excluded_tests = sum(
        len(tests_in_file(os.path.join(root, f), f))
        for f in excluded
        if "::" not in f and os.path.exists(os.path.join(root, f))
    )
    args.leave_out = sorted(t for t in excluded if "::" in t)  # tests and classes
    start = time.perf_counter()
    harness = args.harness or ("device" if args.target == "cuda" else HARNESS_ON_CPU)
    results = run_suite(root, files, args, environment(args.target, harness))
    for tid in [t for t, r in results.items() if r["outcome"] == LEFT_OUT]:
        del results[tid]
        excluded_tests += 1
    took = time.perf_counter() - start
    out = args.json or os.path.join(CONFORMANCE, f"results-{args.target}.json")
    with open(out, "w") as f:
        json.dump(
            {
                "target": args.target,
                "seconds": round(took, 1),
                "files": files,
                "tests": [results[t] for t in sorted(results)],
            },
            f,
            indent=1,
        )
    print(summarize(results, excluded_tests))
    print(f"{len(files)} files in {took:.0f} s; per-test outcomes in {os.path.relpath(out)}")
    if args.failures:
        write_failures(args.failures, results, args.target)
        print(f"wrote {os.path.relpath(args.failures)}")
    expected = read_ids(args.expected)
    if args.update:
        write_expected(args.expected, results, expected, files)
        print(f"wrote {os.path.relpath(args.expected)}")
        return 0
    if args.no_check:
        return 0
    lost, new = check(results, expected, files)
    for t in new:
        print(f"new pass (add it: --update): {t}")
    for t in lost:
        print(f"EXPECTED PASS NOT PASSING: {t}: {results.get(t, {}).get('outcome', 'not run')}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
