"""float16 <-> float64 conversions on the CPU target: LLVM lowers them to runtime
calls (no x86 instruction does them), which must resolve, not crash the process, and
round as NumPy's ``astype`` does."""

from __future__ import annotations

import numpy as np

from cujit import cuda


@cuda.jit(target="cpu")
def narrow(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def test_float64_to_float16_rounds_as_numpy():
    rng = np.random.default_rng(3)
    # Values around half's precision and range edges: ties, subnormals, overflow.
    x = np.concatenate(
        [
            rng.uniform(-70000, 70000, 200),
            rng.uniform(-1e-6, 1e-6, 50),
            [1 + 2.0**-11, 1 + 3 * 2.0**-11, 65520.0, -65519.0, 6e-8],
        ]
    )
    out = np.full(x.size, np.nan, np.float16)
    narrow[(x.size + 63) // 64, 64](out, x)
    np.testing.assert_array_equal(out, x.astype(np.float16))


def test_float16_to_float64_is_exact():
    x = np.arange(-2048, 2048, dtype=np.int16).view(np.float16)[::7]
    x = x[np.isfinite(x)]
    out = np.full(x.size, np.nan, np.float64)
    narrow[(x.size + 63) // 64, 64](out, x)
    np.testing.assert_array_equal(out, x.astype(np.float64))
