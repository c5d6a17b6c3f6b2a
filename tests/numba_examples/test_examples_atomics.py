"""A conformance suite of numba.cuda programs as numba's users write them (see
examples_check.py for how they run on both targets): atomics (atomic max,
histograms)."""

from __future__ import annotations

import numpy as np
from examples_check import (
    assert_matches,
    rng,
    target_fixture,  # noqa: F401 (the target fixture)
)

from cujit import cuda
from cujit.types import int32

# -- 13. Atomic max, 1-D and with a tuple index (numba-cuda docs, "Supported Atomic
#        Operations": example) ----------------------------------------------------------


def test_atomic_max(target):
    @cuda.jit
    def max_example(result, values):
        """The largest of values, in result[0]."""
        tid = cuda.threadIdx.x
        bid = cuda.blockIdx.x
        bdim = cuda.blockDim.x
        i = (bid * bdim) + tid
        cuda.atomic.max(result, 0, values[i])

    @cuda.jit
    def max_example_3d(result, values):
        i, j, k = cuda.grid(3)
        cuda.atomic.max(result, (0, 1, 2), values[i, j, k])

    r = rng()
    arr = r.random(16384)
    result = np.zeros(1, dtype=np.float64)
    max_example[256, 64](result, arr)
    assert result[0] == arr.max()

    arr = r.random(1000).reshape(10, 10, 10)
    result = np.zeros((3, 3, 3), dtype=np.float64)
    max_example_3d[(2, 2, 2), (5, 5, 5)](result, arr)
    expected = np.zeros((3, 3, 3))
    expected[0, 1, 2] = arr.max()
    assert_matches(result, expected)


# -- 19. Histogram: grid-stride loop, atomic add (NVIDIA's numba CUDA tutorial,
#        the histogram exercise) ------------------------------------------------------


def test_histogram_atomic_add(target):
    @cuda.jit
    def histogram(x, xmin, xmax, histogram_out):
        nbins = histogram_out.shape[0]
        bin_width = (xmax - xmin) / nbins
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for i in range(start, x.shape[0], stride):
            bin_number = np.int32((x[i] - xmin) / bin_width)
            if bin_number >= 0 and bin_number < histogram_out.shape[0]:
                cuda.atomic.add(histogram_out, bin_number, 1)

    x = rng().standard_normal(100000).astype(np.float32)
    xmin, xmax = np.float32(-4.0), np.float32(4.0)
    histogram_out = cuda.to_device(np.zeros(64, dtype=np.int32))
    histogram[30, 128](cuda.to_device(x), xmin, xmax, histogram_out)
    bin_width = (xmax - xmin) / np.float32(64)
    bins = ((x - xmin) / bin_width).astype(np.int32)  # truncation, as np.int32() does
    bins = bins[(bins >= 0) & (bins < 64)]
    assert_matches(histogram_out.copy_to_host(), np.bincount(bins, minlength=64))


@cuda.jit(device=True)
def bin_and_weight(v, lo, width):
    """A device function returning a tuple: the bin of ``v`` and its weight."""
    b = int((v - lo) / width)
    return b, 1 if v >= 0 else 2


def test_histogram_shared_memory_privatised(target):
    # The per-block (privatised) histogram of NVIDIA's numba CUDA tutorial: atomics on a
    # shared array, then one atomic per bin and block into global memory.
    NBINS = 32

    @cuda.jit
    def hist_shared(x, lo, width, out):
        local_hist = cuda.shared.array(NBINS, dtype=int32)
        t = cuda.threadIdx.x
        for b in range(t, NBINS, cuda.blockDim.x):
            local_hist[b] = 0
        cuda.syncthreads()
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            b, w = bin_and_weight(x[i], lo, width)
            if 0 <= b < NBINS:
                cuda.atomic.add(local_hist, b, w)
        cuda.syncthreads()
        for b in range(t, NBINS, cuda.blockDim.x):
            cuda.atomic.add(out, b, local_hist[b])

    x = rng().standard_normal(50000)
    out = cuda.to_device(np.zeros(NBINS, np.int32))
    hist_shared[16, 128](cuda.to_device(x), -4.0, 0.25, out)
    bins = ((x + 4.0) / 0.25).astype(np.int64)
    keep = (bins >= 0) & (bins < NBINS)
    expected = np.bincount(bins[keep], weights=np.where(x[keep] >= 0, 1, 2), minlength=NBINS)
    assert_matches(out.copy_to_host(), expected.astype(np.int32))
