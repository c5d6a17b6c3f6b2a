"""``python -m cujit demo`` and ``explain`` run as a user would run them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from cujit.pipeline import STAGES

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

KERNEL_FILE = textwrap.dedent("""
    from cujit import cuda

    @cuda.jit
    def scale(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * 3
""")


def run_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "cujit", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "kern.py"
    path.write_text(KERNEL_FILE)
    return path


def test_explain_prints_every_stage_in_order_with_times(kernel_file):
    proc = run_cli("explain", f"{kernel_file}:scale", "--sig", "void(float32[:], float32[:])")
    assert proc.returncode == 0, proc.stderr
    heads = [line for line in proc.stdout.splitlines() if line.startswith("== ")]
    assert [h.split()[1] for h in heads[:-3]] == list(STAGES)
    assert all(h.endswith("ms) ==") for h in heads[:-3])
    assert heads[-3:-1] == ["== times ==", "== parameters (5 of 6 passed at launch) =="]
    assert heads[-1] == "== coarsening =="  # docs/coarsening.md (layout 'A': not coarsened)
    assert "total" in proc.stdout and ".entry scale" in proc.stdout
    # layout 'A' arrays: pointer, extent, byte stride; out's extent is never read
    table = proc.stdout.split("== parameters")[1].split("== coarsening")[0].splitlines()[1:]
    assert [line.split() for line in table] == [
        ["x.data", "ptr"],
        ["x.shape0", "int64"],
        ["x.stride0", "int64"],
        ["out.data", "ptr"],
        ["out.shape0", "int64", "(never", "read:", "not", "passed)"],
        ["out.stride0", "int64"],
    ]


def test_explain_emit_one_stage(kernel_file):
    proc = run_cli(
        "explain",
        f"{kernel_file}:scale",
        "--sig",
        "void(float64[:], float64[:])",
        "--emit",
        "typed",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("func scale(")
    assert "float64 = binop *" in proc.stdout and "== " not in proc.stdout
    ptx = run_cli(
        "explain",
        f"{kernel_file}:scale",
        "--sig",
        "void(float32[:], float32[:])",
        "--emit",
        "ptx",
        "--arch",
        "8.0",
    )
    assert ".target sm_80" in ptx.stdout


def test_explain_reports_user_errors(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("def bad(x):\n    x[0] = 'text'\n")
    proc = run_cli("explain", f"{path}:bad", "--sig", "void(float32[:])")
    assert proc.returncode == 1
    assert f"{path}:2:" in proc.stderr and "^" in proc.stderr


def test_demo_runs(tmp_path):
    proc = run_cli("demo", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "== cubin" in proc.stdout
    result = next(line for line in proc.stdout.splitlines() if "relative error" in line)
    assert result.endswith("OK")
    from cujit.cli import NEXT_STEPS

    assert proc.stdout.rstrip().endswith(NEXT_STEPS.strip())  # it ends saying what to try
    from cujit import cuda

    if not cuda.is_available():
        assert "No CUDA GPU was found" in proc.stdout and "on the CPU target" in proc.stdout
