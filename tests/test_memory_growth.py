"""Memory per compiled kernel: compiling many distinct kernels, each dropped after
one launch, must not grow the process by more than a small bound per kernel.

llvmlite's pass pipelines used to stay allocated after every compile (about 55 KB
each; ``targets/cpu/engine.py``), which made the process grow by 90-130 KB per CPU
kernel.  With the fix, and once the first ~60 kernels have filled the allocator's
and LLVM's pools, the growth is 9 KB per kernel in the next 60 and 3.5 KB later on
(measured over 300 kernels: LLVM's process-wide context keeps each kernel's
names and constants interned).  A single window can also catch the allocator
taking a new arena (about 1.4 MB at once, seen here after other tests), so the test
measures three windows of 30 kernels after 40 of warm-up and bounds the smallest:
24 KB per kernel, under half the pipeline leak alone and over twice the steady rate,
so it fails if a per-kernel native object (an engine, a module, a pipeline) or a
cache keyed by kernels is kept again, and not on allocator noise.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

import numpy as np
import pytest

from cujit import cuda

BOUND_KB = 24
WARMUP, WINDOWS, PER_WINDOW = 40, 3, 30

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc/self/statm and glibc's malloc_trim"
)


def _rss_kb() -> float:
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # give freed heap back, as the OS would see it
    except (OSError, AttributeError):
        pass
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024


def _kernel(k: int):
    """A kernel of its own: its name, its constants, its code differ from every other."""
    ns = {"cuda": cuda}
    exec(
        f"def grow_{k}(x):\n"  # noqa: S102 - distinct kernels, made from text
        f"    i = cuda.grid(1)\n"
        f"    if i < x.size:\n"
        f"        x[i] = x[i] * {k + 2} + {k}.25\n",
        ns,
    )
    return cuda.jit(ns[f"grow_{k}"], target="cpu")


def _compile_and_run(first: int, count: int) -> None:
    for k in range(first, first + count):
        kernel = _kernel(k)
        x = np.ones(8)
        kernel[1, 8](x)
        assert x[0] == (k + 2) + k + 0.25  # it ran, with its own constants
        del kernel


def test_growth_per_compiled_kernel_is_bounded():
    _compile_and_run(0, WARMUP)  # first-use allocations: pools, caches of types
    growth = []
    for w in range(WINDOWS):
        before = _rss_kb()
        _compile_and_run(WARMUP + w * PER_WINDOW, PER_WINDOW)
        growth.append((_rss_kb() - before) / PER_WINDOW)
    # A leak shows in every window; the allocator taking one more arena (a step of a MB
    # or so) shows in one: the smallest window's growth is the steady rate.
    assert min(growth) < BOUND_KB, ", ".join(f"{g:.1f}" for g in growth) + " KB per kernel"
