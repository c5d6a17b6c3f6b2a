"""Time a cache hit in a fresh process: run twice; the second run's compile is a hit.

    CUJIT_CACHE_DIR=/tmp/cujit-cache PYTHONPATH=src python3 tools/cache_hit_time.py

Prints the time of ``kernel.compile(signature)`` (the device query, the key, reading
the entry) and of the first launch after it (loading the cubin, launching, syncing).
"""

import time

import numpy as np

from cujit import cuda


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


kernel = cuda.jit(saxpy, cache=True)
x = cuda.to_device(np.ones(1 << 20, np.float32))  # the driver's start, outside the timing
t0 = time.perf_counter()
spec = kernel.compile((cuda.float32, cuda.float32[::1], cuda.float32[::1], cuda.float32[::1]))
t1 = time.perf_counter()
kernel[4096, 256](np.float32(2.0), x, x, x)
cuda.synchronize()
t2 = time.perf_counter()
print(
    f"compile (hit or miss) {1e3 * (t1 - t0):.2f} ms; load + launch + sync "
    f"{1e3 * (t2 - t1):.2f} ms; stages run: {list(spec.result.times) or 'none (cache hit)'}"
)
