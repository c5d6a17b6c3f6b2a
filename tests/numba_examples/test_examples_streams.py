"""A conformance suite of numba.cuda programs as numba's users write them (see
examples_check.py for how they run on both targets): streams."""

from __future__ import annotations

import numpy as np
from examples_check import (
    assert_matches,
    poisoned,
    rng,
    target_fixture,  # noqa: F401 (the target fixture)
)

from cujit import cuda

# -- 21. Streams (numba-cuda docs, "Memory management": streams; stream-ordered
#        copies, kernel[blocks, threads, stream], auto_synchronize) ----------------


def test_streams(target):

    @cuda.jit
    def scale(x, a, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i]

    x = rng().standard_normal(5000)
    stream = cuda.stream()
    with stream.auto_synchronize():
        d_x = cuda.to_device(x, stream=stream)
        d_out = cuda.device_array_like(d_x, stream=stream)
        scale[(x.size + 127) // 128, 128, stream](d_x, 3.0, d_out)
        got = d_out.copy_to_host(stream=stream)
    assert_matches(got, 3.0 * x)
    scale.forall(x.size, stream=stream)(d_x, -1.0, d_out)
    out = poisoned(x.size, np.float64)
    d_out.copy_to_host(out, stream=stream)
    stream.synchronize()
    assert_matches(out, -x)
