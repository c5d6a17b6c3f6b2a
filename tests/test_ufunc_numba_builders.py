"""numba's ufunc builder protocol: cujit.cuda.vectorizers builds cujit's ufuncs, and under
the numba drop-in ``numba.vectorize(target='cuda')`` reaches it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from cujit.cuda.vectorizers import CUDAGUFuncVectorize, CUDAVectorize
from cujit.ufunc import GUFunc, UFunc


def _mul(a, b):
    return a * b


def _row_sum(x, out):
    s = 0
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s


def test_vectorize_builder(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    builder = CUDAVectorize(_mul, targetoptions={})
    builder.add("int64(int64, int64)")
    builder.disable_compile()
    ufunc = builder.build_ufunc()
    assert isinstance(ufunc, UFunc) and ufunc.target == "cpu"
    a = np.arange(-5, 20)
    assert np.array_equal(ufunc(a, a), a * a)
    with pytest.raises(KeyError, match="Unrecognized options"):
        CUDAVectorize(_mul, targetoptions={"fastmath_typo": True})


def test_guvectorize_builder(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    builder = CUDAGUFuncVectorize(_row_sum, "(n)->()", targetoptions={"nopython": True})
    builder.add("void(int64[:], int64[:])")
    gufunc = builder.build_ufunc()
    assert isinstance(gufunc, GUFunc)
    x = np.arange(30).reshape(5, 6)
    assert np.array_equal(gufunc(x), x.sum(axis=1))
    with pytest.raises(TypeError, match="nopython flag must be True"):
        CUDAGUFuncVectorize(_row_sum, "(n)->()", targetoptions={"nopython": False})


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba not installed")
def test_numba_vectorize_target_cuda_under_the_drop_in():
    script = textwrap.dedent("""
        import cujit
        cujit.install_numba_drop_in()
        import numpy as np
        from numba import guvectorize, vectorize
        @vectorize(["float64(float64, float64)"], target="cuda")
        def mul(a, b):
            return a * b
        @guvectorize(["void(float64[:], float64[:])"], "(n)->()", target="cuda")
        def total(x, out):
            s = 0.0
            for i in range(x.shape[0]):
                s += x[i]
            out[0] = s
        x = np.arange(1.0, 13.0).reshape(3, 4)
        assert type(mul).__module__ == "cujit.ufunc.vectorize", type(mul)
        assert np.array_equal(mul(x, 2.0), x * 2.0)
        assert np.array_equal(total(x), x.sum(axis=1))
        print("ok")
    """)
    env = dict(
        os.environ,
        CUJIT_TARGET="cpu",
        PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "src"),
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
