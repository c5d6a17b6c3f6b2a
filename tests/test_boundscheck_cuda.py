"""``jit(boundscheck=True)`` (and ``CUJIT_BOUNDSCHECK=1``) checks array bounds on the GPU
too, reporting as debug mode does; ``False`` and the default emit no check there."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import abi, cuda, float32
from cujit.options import Options
from cujit.pipeline import compile_kernel


def reads_past_the_end(x, out):
    i = cuda.grid(1)
    out[i] = x[i + 1]


TYPES = (float32[::1], float32[::1])


@pytest.mark.parametrize("boundscheck, checked", [(True, True), (False, False), (None, False)])
def test_the_cuda_back_end_honours_boundscheck(boundscheck, checked):
    result = compile_kernel(
        reads_past_the_end, TYPES, Options(boundscheck=boundscheck), stop_after="llvm"
    )
    llvm = result.outputs["llvm"]
    assert (abi.DEBUG_RECORD_SYMBOL in llvm) is checked
    assert bool(result.record.debug_sites) is checked
    if checked:  # the checks read both extents: every parameter is passed
        assert all(result.record.passed)


@pytest.mark.gpu
def test_an_out_of_bounds_read_on_the_gpu_is_an_index_error():
    kernel = cuda.jit(boundscheck=True)(reads_past_the_end)
    x = np.arange(1.0, 33.0, dtype=np.float32)
    out = np.full(32, np.nan, np.float32)
    with pytest.raises(IndexError, match="reads_past_the_end|index"):
        kernel[1, 32](x, out)
    fine = np.full(31, np.nan, np.float32)
    cuda.jit(boundscheck=True)(reads_past_the_end)[1, 31](x, fine)
    np.testing.assert_array_equal(fine, x[1:])
