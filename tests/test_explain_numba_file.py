"""``python -m cujit explain`` on an unchanged numba.cuda file: with numba (numba-cuda)
installed, ``from numba import cuda`` in the file gives cujit's cuda, as under
``python -m cujit run``, without CUJIT_NUMBA=1."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

from cujit.explain_load import uses_numba_cuda

NUMBA_FILE = textwrap.dedent("""
    import numpy as np
    from numba import cuda

    @cuda.jit
    def scaled(a, x, out):
        tile = cuda.shared.array(32, dtype=np.float32)
        i = cuda.grid(1)
        if i < x.size:
            tile[cuda.threadIdx.x] = x[i]
            cuda.syncthreads()
            out[i] = a * tile[cuda.threadIdx.x]

    d_x = cuda.to_device(np.ones(4, dtype=np.float32))
""")


def _explain(path, *extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUJIT_", "NUMBA_"))}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "cujit",
            "explain",
            f"{path}:scaled",
            "--sig",
            "void(float32, float32[:], float32[:])",
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="needs real numba")
def test_explain_an_unchanged_numba_file_with_numba_installed(tmp_path):
    path = tmp_path / "numba_program.py"
    path.write_text(NUMBA_FILE)
    proc = _explain(path, "--emit", "typed")
    assert proc.returncode == 0, proc.stderr
    assert "unsupported" not in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout.startswith("func scaled(") and "shared" in proc.stdout
    # the file's top-level to_device was skipped, in one line, not run by numba-cuda
    notes = [line for line in proc.stderr.splitlines() if "skipped" in line]
    assert len(notes) == 1 and ":14:" in notes[0] and "CudaSupportError" not in notes[0]


@pytest.mark.parametrize(
    "source, uses",
    [
        ("from numba import cuda", True),
        ("import numba.cuda", True),
        ("import numba.cuda as nc", True),
        ("from numba.cuda import jit", True),
        ("from numba.cuda.random import xoroshiro128p_uniform_float32", True),
        ("import numba\n@numba.cuda.jit\ndef k(x):\n    pass", True),
        ("if True:\n    from numba import cuda", True),
        ("from cujit import cuda", False),
        ("import numba\nf = numba.njit", False),
        ("from numba import njit", False),
        ("from . import cuda", False),
    ],
)
def test_which_files_use_numba_cuda(source, uses):
    assert uses_numba_cuda(ast.parse(source)) is uses
