"""A conformance suite of numba.cuda programs as numba's users write them (see
examples_check.py for how they run on both targets): captured globals, constant
and local memory."""

from __future__ import annotations

import numpy as np
from examples_check import (
    assert_matches,
    poisoned,
    rng,
    target_fixture,  # noqa: F401 (the target fixture)
)

from cujit import cuda
from cujit.types import float32

# -- 14. Globals are captured at compile time (numba-cuda docs, "Global variables";
#        doc_examples/test_globals.py) ----------------------------------------------


def test_globals_constant_capture(target):
    TAX_RATE = 0.08
    PRICES = np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float64)

    @cuda.jit
    def compute_totals(quantities, totals):
        i = cuda.grid(1)
        if i < totals.size:
            totals[i] = quantities[i] * PRICES[i] * (1 + TAX_RATE)

    d_quantities = cuda.to_device(np.array([1, 2, 3, 4, 5], dtype=np.float64))
    d_totals = cuda.to_device(poisoned(5, np.float64))
    compute_totals[1, 32](d_quantities, d_totals)
    expected = np.array([10.8, 54.0, 16.2, 64.8, 162.0])
    assert_matches(d_totals.copy_to_host(), expected)

    TAX_RATE = 0.10  # no effect: the kernel holds the values it was compiled with
    PRICES[:] = [20.0, 50.0, 10.0, 30.0, 60.0]
    compute_totals[1, 32](d_quantities, d_totals)
    assert_matches(d_totals.copy_to_host(), expected)


def test_globals_device_array_capture(target):
    # A global device array is captured by reference: the kernel sees later writes.
    PRICES = cuda.to_device(np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float32))

    @cuda.jit
    def compute_totals(quantities, totals):
        i = cuda.grid(1)
        if i < totals.size:
            totals[i] = quantities[i] * PRICES[i]

    d_quantities = cuda.to_device(np.ones(5, dtype=np.float32))
    d_totals = cuda.to_device(poisoned(5, np.float32))
    compute_totals[1, 32](d_quantities, d_totals)
    assert_matches(d_totals.copy_to_host(), np.array([10, 25, 5, 15, 30], np.float32))
    PRICES.copy_to_device(np.array([20.0, 50.0, 10.0, 30.0, 60.0], dtype=np.float32))
    compute_totals[1, 32](d_quantities, d_totals)
    assert_matches(d_totals.copy_to_host(), np.array([20, 50, 10, 30, 60], np.float32))


# -- 20. Convolution with constant and local memory (numba-cuda docs, "Memory
#        management": cuda.const.array_like, cuda.local.array) ---------------------

WEIGHTS = np.array([0.0625, 0.25, 0.375, 0.25, 0.0625], dtype=np.float32)
KSIZE = 5


def test_const_and_local_convolution(target):
    @cuda.jit
    def smooth(x, out):
        w = cuda.const.array_like(WEIGHTS)
        window = cuda.local.array(KSIZE, dtype=float32)
        i = cuda.grid(1)
        if i >= out.size:
            return
        for k in range(KSIZE):
            j = i + k - KSIZE // 2
            window[k] = x[j] if 0 <= j < x.size else 0
        acc = float32(0)
        for k in range(KSIZE):
            acc += w[k] * window[k]
        out[i] = acc

    x = rng().standard_normal(3000).astype(np.float32)
    out = cuda.device_array(x.shape, dtype=np.float32)
    smooth.forall(x.size)(cuda.to_device(x), out)
    expected = np.convolve(x.astype(np.float64), WEIGHTS.astype(np.float64), mode="same")
    assert_matches(out.copy_to_host(), expected.astype(np.float32))
