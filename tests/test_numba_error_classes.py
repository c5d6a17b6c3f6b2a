"""Under the numba drop-in, where numba itself is installed, cujit's errors and warnings
are also numba's classes of the same meaning: a program that catches
``numba.core.errors.TypingError`` around a numba.cuda compile catches cujit's.  Each case
runs in a child process, the drop-in installed there."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba.core.errors", reason="numba itself is not installed")

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["CUJIT_TARGET"] = "cpu"
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_numba_typing_error_catches_a_cujit_type_error():
    proc = _run(
        """
        import cujit
        cujit.install_numba_drop_in()
        import numpy as np
        from numba import cuda
        from numba.core.errors import NumbaError, TypingError
        import cujit.diagnostics as d

        @cuda.jit
        def k(a):
            a[0, 0] = 1.0  # two indices into a 1-d array

        try:
            k[1, 1](np.zeros(4))
        except TypingError as e:
            assert isinstance(e, d.TypingError) and isinstance(e, NumbaError)
            print("caught:", type(e).__module__, str(e).splitlines()[0])
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "caught: cujit.diagnostics" in proc.stdout and "type error" in proc.stdout


def test_warnings_and_other_errors_map_to_numba_classes():
    proc = _run(
        """
        import cujit
        cujit.install_numba_drop_in()
        from numba import cuda
        import numba.core.errors as ne
        import cujit.diagnostics as d
        pairs = [(d.UnsupportedError, ne.UnsupportedError), (d.LoweringError, ne.LoweringError),
                 (d.CompileError, ne.NumbaError),
                 (d.NumbaPerformanceWarning, ne.NumbaPerformanceWarning),
                 (d.NumbaInvalidConfigWarning, ne.NumbaInvalidConfigWarning)]
        print([issubclass(a, b) for a, b in pairs])
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[True, True, True, True, True]"


def test_without_the_drop_in_cujit_errors_stay_cujit_s_alone():
    proc = _run(
        """
        import numba.core.errors as ne
        import cujit.diagnostics as d
        from cujit import cuda
        print(issubclass(d.TypingError, ne.TypingError))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
