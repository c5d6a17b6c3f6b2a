"""Small things a newcomer meets first: ``--version``, the demo's stages, a hint for
NumPy's linear algebra in a kernel, a None/int conflict that names its variable at its
assignment, and launch errors whose traceback ends at the user's own line."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback

import numpy as np
import pytest

import cujit
from cujit import cli, cuda
from cujit.diagnostics import TypingError, UnsupportedError
from cujit.pipeline import STAGES

CUJIT_SRC = os.path.dirname(os.path.abspath(cujit.__file__))


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"cujit {cujit.__version__}"


def test_demo_shows_every_stage(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CUJIT_TARGET"}
    proc = subprocess.run(
        [sys.executable, "-m", "cujit", "demo", "--lines", "2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    shown = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("== ")]
    stages = [name for name in shown if name in STAGES]
    assert stages == [s for s in STAGES if s != "native"], shown
    assert stages[:3] == ["bytecode", "cfg", "ir"]


def norm_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] / np.linalg.norm(x)


def median_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] / np.median(x)


@pytest.mark.parametrize(
    "fn, name", [(norm_kernel, "np.linalg.norm"), (median_kernel, "np.median")]
)
def test_numpy_array_functions_get_a_hint(fn, name):
    with pytest.raises(UnsupportedError) as info:
        cuda.jit(fn, target="cpu")[1, 4](np.ones(4), np.ones(4))
    assert f"for {name} loop over the elements" in str(info.value)
    assert "guide: docs/guide/first-kernel.md#what-a-kernel-can-call" in str(info.value)


def none_then_int(x, out):
    best = None
    for i in range(x.size):
        if x[i] > 0:
            best = i  # <- the assignment giving the other type
    out[0] = best


def test_none_int_conflict_names_the_variable_at_its_assignment():
    with pytest.raises(TypingError) as info:
        cuda.jit(none_then_int, target="cpu")[1, 1](np.ones(4), np.ones(4))
    first = str(info.value).splitlines()[0]
    assert "variable 'best' holds None on one path and int64 on another" in first
    line = none_then_int.__code__.co_firstlineno + 4
    assert first.startswith(f"{__file__}:{line}:13: type error:"), first
    assert (
        str(info.value).splitlines()[1].strip()
        == "best = i  # <- the assignment giving the other type"
    )


def test_launch_errors_end_at_the_users_frame():
    with pytest.raises(TypingError) as info:
        cuda.jit(none_then_int, target="cpu")[1, 1](np.ones(4), np.ones(4))
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames and frames[-1].filename == __file__
    assert not [f for f in frames if os.path.abspath(f.filename).startswith(CUJIT_SRC)]
    assert info.value.__cause__ is None and info.value.__suppress_context__
