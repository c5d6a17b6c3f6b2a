"""alignment= on cuda.shared.array and cuda.local.array: the arrays' addresses are
aligned (CPU target here; the GPU marked gpu), the alignment is in the IR, and bad
alignments are compile errors."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import CujitError, TypingError
from cujit.types import float32, int8, uint64


def _addresses(target: str, align: int, dtype):
    @cuda.jit(target=target)
    def k(out, vals):
        i = cuda.threadIdx.x
        pad = cuda.shared.array(3, int8)  # an odd-sized neighbour before it
        s = cuda.shared.array(5, dtype, alignment=align)
        loc = cuda.local.array((2, 3), dtype, alignment=align)
        pad[0] = 1
        s[i % 5] = i
        loc[0, i % 3] = i
        cuda.syncthreads()
        vals[i] = s[i % 5] + loc[0, i % 3] + pad[0]
        if i == 0:
            out[0] = s.ctypes.data
            out[1] = loc.ctypes.data

    return k


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("align", [16, 64, 256, 1024])
def test_addresses_are_aligned(target, align):
    k = _addresses(target, align, float32)
    out = np.zeros(2, np.uint64)
    vals = np.zeros(5, np.float32)
    k[1, 5](out, vals)
    assert all(int(a) % align == 0 and a != 0 for a in out), [hex(int(a)) for a in out]
    assert np.array_equal(vals, 2 * np.arange(5) + 1)


def test_the_alignment_is_in_the_ptx():
    ptx, _ = cuda.compile_ptx(
        _addresses("cuda", 256, uint64).py_func, "void(uint64[::1], float32[::1])"
    )
    assert ".shared .align 256" in ptx


@pytest.mark.parametrize("bad", [-8, 0, 3, 12, 4, 1.0, True])
def test_bad_alignments_are_typing_errors(bad):
    def k(x):
        s = cuda.shared.array(4, float32, alignment=bad)
        s[0] = 1.0
        x[0] = s[0]

    with pytest.raises(TypingError, match="[Aa]lignment must be"):
        cuda.jit(target="cpu")(k)[1, 1](np.zeros(1, np.float32))


def test_a_string_alignment_is_a_compile_error():
    def k(x):
        s = cuda.shared.array(4, float32, alignment="16")
        s[0] = 1.0
        x[0] = s[0]

    with pytest.raises(CujitError):
        cuda.jit(target="cpu")(k)[1, 1](np.zeros(1, np.float32))
