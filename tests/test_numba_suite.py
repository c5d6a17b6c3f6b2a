"""tools/numba_suite.py: numba-cuda's own tests run with numba.cuda served by cujit, on
the CPU target; the outcome of a test follows what cujit compiled during it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import numba_suite_worker as worker


def suite(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "numba_suite.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


@pytest.fixture
def needs_numba_cuda():
    pytest.importorskip("numba_cuda")
    pytest.importorskip("filecheck")


def test_kernels_of_the_suite_are_compiled_by_cujit(needs_numba_cuda, tmp_path):
    out = tmp_path / "r.json"
    proc = suite(
        "-k", "cudapy/test_idiv", "-k", "cudapy/test_laplace", "--no-check", "--json", str(out)
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    tests = {t["id"]: t for t in json.loads(out.read_text())["tests"]}
    assert set(tests) == {
        "cudapy/test_idiv.py::TestCudaIDiv::test_inplace_div",
        "cudapy/test_idiv.py::TestCudaIDiv::test_inplace_div_double",
        "cudapy/test_laplace.py::TestCudaLaplace::test_laplace_small",
    }
    for t in tests.values():
        assert t["outcome"] == "passed", t
        assert t["compiles"] >= 1 and t["numba_compiles"] == 0
    assert "passed 3 " in proc.stdout


def test_an_expected_pass_that_does_not_pass_fails_the_check(needs_numba_cuda, tmp_path):
    expected = tmp_path / "expected.txt"
    expected.write_text(
        "cudapy/test_idiv.py::TestCudaIDiv::test_inplace_div\n"
        "cudapy/test_idiv.py::TestCudaIDiv::test_no_such_test\n"
    )
    proc = suite(
        "-k", "cudapy/test_idiv", "--expected", str(expected), "--json", str(tmp_path / "r.json")
    )
    assert proc.returncode == 1
    assert (
        "EXPECTED PASS NOT PASSING: cudapy/test_idiv.py::TestCudaIDiv::test_no_such_test"
        in proc.stdout
    )
    assert (
        "new pass (add it: --update): cudapy/test_idiv.py::TestCudaIDiv::"
        "test_inplace_div_double" in proc.stdout
    )
    proc = suite(
        "-k",
        "cudapy/test_idiv",
        "--expected",
        str(expected),
        "--update",
        "--json",
        str(tmp_path / "r.json"),
    )
    assert proc.returncode == 0
    ids = [ln for ln in expected.read_text().splitlines() if not ln.startswith("#")]
    assert ids == [
        "cudapy/test_idiv.py::TestCudaIDiv::test_inplace_div",
        "cudapy/test_idiv.py::TestCudaIDiv::test_inplace_div_double",
    ]


def _finish(
    compiles: int,
    launches: int,
    numba: int,
    when="call",
    outcome="passed",
    audit=None,
):
    """The outcome the worker records; ``audit``: (cujit calls, numba-cuda calls) of the
    host-API audit, or None where it did not run (Python 3.11)."""
    records = []
    plugin = worker.Plugin(
        SimpleNamespace(write=lambda s: records.append(json.loads(s)), flush=lambda: None),
        set(),
        set(),
        60,
    )
    plugin.reports = [
        SimpleNamespace(
            when=when, failed=outcome == "failed", skipped=outcome == "skipped", longrepr=None
        )
    ]
    worker.Counts.compiles, worker.Counts.launches = compiles, launches
    worker.Counts.numba_compiles = numba
    worker.Counts.audited = audit is not None
    worker.Counts.audit.cujit_calls, worker.Counts.audit.numba_calls = audit or (0, [])
    plugin.pytest_runtest_logfinish("numba/cuda/tests/cudapy/test_x.py::T::test_y", None)
    assert records[0]["id"] == "cudapy/test_x.py::T::test_y"
    return records[0]["outcome"]


def test_a_pass_counts_only_when_cujit_and_not_numba_cuda_ran_the_kernels():
    assert _finish(1, 0, 0) == "passed"
    assert _finish(0, 3, 0) == "passed"  # kernels compiled by an earlier test, launched here
    assert _finish(0, 0, 0) == "no-kernel"
    assert _finish(2, 2, 1) == "numba-compiled"
    assert _finish(0, 0, 0, outcome="failed") == "failed"
    assert _finish(0, 0, 0, when="setup", outcome="failed") == "error"


def test_a_pass_without_a_kernel_is_a_host_api_pass_only_when_the_audit_says_so():
    assert _finish(0, 0, 0, audit=(2, [])) == "host"  # the test's code called cujit only
    assert _finish(0, 0, 0, audit=(2, ["DeviceNDArray.__init__"])) == "numba-served"
    assert _finish(0, 0, 0, audit=(0, [])) == "no-kernel"  # it called neither
    assert _finish(1, 0, 0, audit=(0, ["f"])) == "passed"  # a cujit kernel ran
    assert _finish(0, 0, 1, audit=(3, [])) == "numba-compiled"
    assert _finish(0, 0, 0, outcome="failed", audit=(3, [])) == "failed"


def test_a_test_past_its_timeout_is_recorded_and_the_rest_still_run(needs_numba_cuda, tmp_path):
    # 0.05 s is less than any of these tests takes (each starts a cold worker): each one's worker
    # is ended and a new
    # one carries on with the tests left, so every test still gets an outcome.
    out = tmp_path / "r.json"
    proc = suite(
        "-k",
        "cudapy/test_idiv",
        "-k",
        "cudapy/test_laplace",
        "--no-check",
        "--test-timeout",
        "0.05",
        "--chunks",
        "1",
        "--json",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    tests = json.loads(out.read_text())["tests"]
    assert len(tests) == 3
    for t in tests:
        assert t["outcome"] == "timeout" and "no result within 0.05 s" in t["message"], t


def test_a_kernel_numba_cuda_runs_is_counted_as_numba_cudas(needs_numba_cuda):
    # Without the routing, numba-cuda's simulator runs the kernel: the worker's counter
    # of numba-cuda's work must see it (that is what makes such a test no pass).
    code = (
        "import sys, numpy as np; sys.path.insert(0, sys.argv[1]); "
        "import numba_suite_worker as w; w._count_numba_cuda(); from numba import cuda\n"
        "@cuda.jit\ndef k(a):\n    a[0] = 7\n"
        "a = np.zeros(1); k[1, 1](a); print(w.Counts.numba_compiles, a[0])"
    )
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=os.path.join(ROOT, "src"))
    proc = subprocess.run(
        [sys.executable, "-c", code, os.path.join(ROOT, "tools")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["1", "7.0"]


def test_the_failures_file_gives_each_failure_its_reason_and_its_known_why(tmp_path):
    import numba_suite

    reasons = tmp_path / "reasons.txt"
    reasons.write_text("# a comment: ignored\ncudapy/test_a.py::T::test_kept: kept on purpose\n")
    results = {
        "cudapy/test_a.py::T::test_kept": {
            "outcome": "failed",
            "message": "AssertionError: /x/y/test_a.py:12:3: no match\nmore",
        },
        "cudapy/test_a.py::T::test_other": {"outcome": "failed", "message": "E: bad"},
        "cudapy/test_a.py::T::test_ok": {"outcome": "passed", "message": ""},
        "cudapy/test_a.py::T::test_host": {"outcome": "host", "message": ""},
    }
    out = tmp_path / "failing.txt"
    numba_suite.write_failures(str(out), results, "cpu", str(reasons))
    lines = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    assert lines == [
        "cudapy/test_a.py::T::test_kept: failed: AssertionError: FILE:12: no match"
        " -- why: kept on purpose",
        "cudapy/test_a.py::T::test_other: failed: E: bad",
    ]
