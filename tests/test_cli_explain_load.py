"""``python -m cujit explain`` runs a file's definitions only: no launches, no output
of the script in the listing, and clean one-line errors for a missing file, a
missing kernel or a bad ``--sig``."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from cujit.cli import main

SCRIPT = textwrap.dedent("""
    import numpy as np
    from cujit import cuda
    import helper_mod
    SCALE = 3.0 + helper_mod.OFFSET
    print("SCRIPT OUTPUT")
    for _ in range(3):
        print("LOOP OUTPUT")

    @cuda.jit
    def scale(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= SCALE

    x = np.ones(4)
    scale[1, 4](x)
    y = scale[1, 4](x)
    open("side_effect.txt", "w").write("ran")
    if __name__ == "__main__":
        raise SystemExit("the script's main ran")
""")


@pytest.fixture
def script(tmp_path, monkeypatch):
    (tmp_path / "script.py").write_text(SCRIPT)
    (tmp_path / "helper_mod.py").write_text("OFFSET = 0.25\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_explain_runs_definitions_only(script):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cujit",
            "explain",
            "script.py:scale",
            "--sig",
            "void(float64[:])",
            "--emit",
            "typed",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out, err = proc.stdout, proc.stderr
    assert proc.returncode == 0, err
    assert "const 3.25" in out  # SCALE, with the sibling module's value, reached the code
    assert "SCRIPT OUTPUT" not in out + err and "LOOP OUTPUT" not in out + err
    assert not (script / "side_effect.txt").exists()
    assert "script.py:18" in err and "not launched" in err  # the assignment's launch
    assert "NoGPUError" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv,words",
    [
        (["explain", "missing.py:scale", "--sig", "void(float64[:])"], "no such file: missing.py"),
        (["explain", "script.py:nope", "--sig", "void(float64[:])"], "no function 'nope'"),
        (["explain", "script.py", "--sig", "void(float64[:])"], "expected FILE.py:KERNEL"),
        (["explain", "script.py:np", "--sig", "void(float64[:])"], "not a kernel"),
        (["explain", "script.py:scale", "--sig", "void(floot64[:])"], "'floot64' is not a type"),
        (["explain", "script.py:scale", "--sig", "void(("], "syntax error"),
    ],
)
def test_explain_errors_are_one_line(script, capsys, argv, words):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert words in str(info.value.code)


def test_real_command_prints_no_traceback(script):
    for argv in (["missing.py:k", "--sig", "void()"], ["script.py:scale", "--sig", "bad sig"]):
        proc = subprocess.run(
            [sys.executable, "-m", "cujit", "explain", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode != 0
        assert "Traceback" not in proc.stderr and proc.stderr.startswith("cujit explain:"), (
            proc.stderr
        )
