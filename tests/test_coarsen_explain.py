"""What ``cujit explain`` and the HTML report say about coarsening: coarsened and how,
or the rule that failed at its line."""

import html
import subprocess
import sys
import textwrap

SOURCE = textwrap.dedent(
    """
    from cujit import cuda

    @cuda.jit
    def saxpy(out, a, x, y, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = a * x[i] + y[i]

    @cuda.jit
    def strided(out, x):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[2 * i]
    """
)


def explain(tmp_path, kernel, sig):
    path = tmp_path / "kernels.py"
    path.write_text(SOURCE)
    cmd = [sys.executable, "-m", "cujit", "explain", f"{path}:{kernel}", "--sig", sig]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True)
    tail = done.stdout.split("== coarsening ==\n", 1)
    assert len(tail) == 2, done.stdout[-500:]
    return tail[1].strip(), path


def test_explain_says_coarsened(tmp_path):
    sig = "void(float32[::1], float32, float32[::1], float32[::1], int64)"
    text, _ = explain(tmp_path, "saxpy", sig)
    assert text.startswith("coarsened: 4 consecutive indices per thread")


def test_explain_names_the_failed_rule_and_line(tmp_path):
    text, path = explain(tmp_path, "strided", "void(float32[::1], float32[::1])")
    assert text.startswith("not coarsened: the index i is used in arithmetic other than i + c")
    line = SOURCE.splitlines().index("        out[i] = x[2 * i]") + 1
    assert f"{path}:{line}:" in text


def test_report_has_the_finding(tmp_path):
    from cujit import cuda

    def gather(out, x, j):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[j]

    k = cuda.jit(gather)
    page = open(
        k.report("void(float64[::1], float64[::1], int64)", str(tmp_path / "r.html"))
    ).read()
    assert "f-coarsening" in page
    assert html.escape("not coarsened: an array access at an index other than i + c") in page
