"""``cujit report`` is a tool, not a runner: it loads the kernel's file as ``explain``
does (definitions only, no launches), ends every bad argument with one escaped line on
stderr, and writes the page."""

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
SIG = "void(float64[:])"


@pytest.fixture
def script(tmp_path, monkeypatch):
    (tmp_path / "script.py").write_text(SCRIPT)
    (tmp_path / "helper_mod.py").write_text("OFFSET = 0.25\n")
    (tmp_path / "broken.py").write_text("def k(a):\n    return (\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _one_line(argv, capsys) -> str:
    with pytest.raises(SystemExit) as info:
        main(["report", *argv])
    message = info.value.code
    assert isinstance(message, str) and "\n" not in message, message
    assert message.startswith("cujit report: ")
    out, _ = capsys.readouterr()
    assert "SCRIPT OUTPUT" not in out
    return message


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["missing.py:scale", "--sig", SIG], "cujit report: no such file: missing.py"),
        (
            ["script.py:nope", "--sig", SIG],
            "cujit report: script.py defines no function 'nope' at its top level",
        ),
        (["script.py", "--sig", SIG], "cujit report: expected FILE.py:KERNEL, got 'script.py'"),
        (["script.py:np", "--sig", SIG], "cujit report: script.py:np is a module, not a kernel"),
        (
            ["broken.py:k", "--sig", SIG],
            "cujit report: cannot read broken.py: '(' was never closed (broken.py, line 2)",
        ),
        (
            ["script.py:scale", "--sig", SIG, "-o", "no/such/folder/k.html"],
            "cujit report: -o 'no/such/folder/k.html': no such folder: ",
        ),
        (
            ["script.py:scale", "--sig", SIG, "--arch", "nine"],
            "cujit report: --arch 'nine': expected a compute capability such as 9.0",
        ),
    ],
)
def test_bad_arguments_are_one_line(script, capsys, argv, want):
    message = _one_line(argv, capsys)
    assert message.startswith(want), message


@pytest.mark.parametrize(
    ("sig", "words"),
    [("void((", "syntax error at '('"), ("void(floot64[:])", "'floot64' is not a type name")],
)
def test_signature_errors_are_one_line(script, capsys, sig, words):
    message = _one_line(["script.py:scale", "--sig", sig], capsys)
    assert message.startswith(f"cujit report: --sig {sig!r}: cannot parse signature")
    assert words in message


def test_a_bad_signature_runs_nothing_of_the_file(script, capsys):
    _one_line(["script.py:scale", "--sig", "void(("], capsys)
    _, err = capsys.readouterr()
    assert "SCRIPT OUTPUT" not in err  # the file was not even loaded


def test_printed_names_are_escaped(script, capsys):
    message = _one_line(["missing\x1b[31m\n.py:scale", "--sig", SIG], capsys)
    assert message == "cujit report: no such file: missing\\x1b[31m\\n.py"


def test_report_loads_definitions_only_and_writes_the_page(script):
    proc = subprocess.run(
        [sys.executable, "-m", "cujit", "report", "script.py:scale", "--sig", SIG, "-o", "k.html"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "wrote k.html\n"
    assert "SCRIPT OUTPUT" not in proc.stdout
    assert not (script / "side_effect.txt").exists()  # the file's own work did not happen
    assert "script.py:16" in proc.stderr and "while report loads" in proc.stderr
    assert "NoGPUError" not in proc.stderr and "Traceback" not in proc.stderr
    assert 'id="stage-ptx"' in (script / "k.html").read_text()


def test_real_command_prints_no_traceback(script):
    for argv in (
        ["script.py:scale", "--sig", "void(("],
        ["broken.py:k", "--sig", SIG],
        ["script.py:scale", "--sig", SIG, "-o", "gone/k.html"],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "cujit", "report", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("cujit report:") and proc.stderr.count("\n") == 1, proc.stderr
