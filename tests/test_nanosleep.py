"""``cuda.nanosleep(ns)``: PTX's ``nanosleep.u32`` on the CUDA target (kept in place
by dead-code elimination, its operand the uint32 of the argument), nothing on the CPU
target, where the kernel around it runs as written."""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError


def _sleepy(out, ns):
    i = cuda.grid(1)
    cuda.nanosleep(ns)
    cuda.nanosleep(250)
    if i < out.size:
        out[i] = i * 3 + ns


def test_ptx_has_one_nanosleep_per_call():
    ptx, _ = cuda.compile_ptx(_sleepy, "void(int64[:], int32)")
    lines = [ln.strip() for ln in ptx.splitlines() if "nanosleep" in ln]
    assert len(lines) == 2 and all(ln.startswith("nanosleep.u32") for ln in lines)


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_kernel_around_a_sleep_runs(target):
    out = np.full(40, -1, dtype=np.int64)
    cuda.jit(_sleepy, target=target)[2, 32](out, np.int32(7))
    np.testing.assert_array_equal(out, np.arange(40) * 3 + 7)


def test_a_float_duration_is_refused():
    def k(out):
        cuda.nanosleep(1.5)

    with pytest.raises(TypingError, match="nanosleep.*must be an integer"):
        cuda.compile_ptx(k, "void(int64[:])")
