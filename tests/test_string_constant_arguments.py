"""A string constant passed to a device function is a compile-time argument, as numba
takes a string literal: the callee is compiled for the value, and ``value == "1"``
between two constants folds, so only the branch taken is compiled.  Strings in
computations stay refused."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import UnsupportedError

SRC = str(Path(__file__).resolve().parent.parent / "src")


@cuda.jit(device=True, forceinline=True)
def store(out, mode):
    if mode == "one":
        out[cuda.threadIdx.x] = 1.5
    elif mode != "two":
        out[cuda.threadIdx.x] = -4.0
    else:
        out[cuda.threadIdx.x] = 2.5


@cuda.jit(target="cpu")
def by_mode(a, b, c):
    store(a, "one")
    store(b, "two")
    store(c, "other")


def test_each_string_compiles_its_own_branch():
    a, b, c = (np.full(8, np.nan) for _ in range(3))
    by_mode[1, 8](a, b, c)
    np.testing.assert_array_equal(a, np.full(8, 1.5))
    np.testing.assert_array_equal(b, np.full(8, 2.5))
    np.testing.assert_array_equal(c, np.full(8, -4.0))


def test_a_string_in_arithmetic_is_still_refused():
    @cuda.jit(device=True)
    def bad(x, s):
        return x + s

    @cuda.jit(target="cpu")
    def k(out):
        out[0] = bad(out[0], "a")

    with pytest.raises(UnsupportedError, match="strings are not supported in kernels"):
        k[1, 1](np.zeros(1))


CHILD = textwrap.dedent(
    """
    import numpy as np
    from cujit import cuda

    @cuda.jit(device=True, forceinline=True)
    def load(gmem, value):
        if value == "1":
            gmem[cuda.threadIdx.x] = 1.0
        else:
            gmem[cuda.threadIdx.x] = 0.0

    @cuda.jit
    def kernel(buff):
        load(buff, "1")

    buff = cuda.to_device(np.zeros(32, dtype=np.float32))
    kernel[1, 32](buff)
    cuda.synchronize()
    assert (buff.copy_to_host() == 1.0).all()
    """
)


@pytest.mark.gpu
def test_string_argument_compiles_quickly_on_a_gpu():
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", CHILD], check=True, timeout=60, env=dict(os.environ, PYTHONPATH=SRC)
    )
    assert time.perf_counter() - start < 30
