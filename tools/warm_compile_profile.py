"""Where a new kernel's time goes in a warm process: compile stages, module load, first
launch.  Needs a GPU.

    PYTHONPATH=src python3 tools/warm_compile_profile.py [--profile]
"""

import cProfile
import pstats
import sys
import textwrap
import time

import numpy as np

from cujit import cuda

SRC = textwrap.dedent("""
def saxpy_{tag}(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
""")


def new_kernel(tag):
    ns = {"cuda": cuda}
    exec(SRC.format(tag=tag), ns)
    return cuda.jit(ns[f"saxpy_{tag}"])


def main():
    x = cuda.to_device(np.ones(1 << 20, np.float32))
    a = np.float32(2.0)
    for rep in range(6):
        k = new_kernel(rep)
        t0 = time.perf_counter()
        spec = k.compile((cuda.float32,) + (cuda.float32[::1],) * 3)
        t1 = time.perf_counter()
        k[4096, 256](a, x, x, x)
        t2 = time.perf_counter()
        cuda.synchronize()
        t3 = time.perf_counter()
        stages = " ".join(f"{n}={v * 1e3:.2f}" for n, v in spec.result.times.items())
        print(
            f"compile {1e3 * (t1 - t0):6.2f} ms ({stages}); first launch (load) "
            f"{1e3 * (t2 - t1):5.2f} ms; sync {1e3 * (t3 - t2):5.2f} ms"
        )
    if "--profile" in sys.argv:
        k = new_kernel("p")
        prof = cProfile.Profile()
        prof.enable()
        k[4096, 256](a, x, x, x)
        cuda.synchronize()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
