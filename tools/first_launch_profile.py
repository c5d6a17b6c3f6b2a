"""Where a fresh process's time goes, from start to the first finished launch.

    PYTHONPATH=src python3 tools/first_launch_profile.py [-n RUNS]

Prints the time of each phase: importing numpy and cujit, the CUDA driver's start
(cuInit, primary context) at the first device allocation, the first compile (split
by stage), loading the cubin and the launch.  Each run is a new child process (three
by default) with PYTHONDONTWRITEBYTECODE cleared, as an installed package has its
bytecode and as ``bench/launch_bench.py`` runs its children; a first child writes the
bytecode still missing and is not shown.
"""

import os
import subprocess
import sys
import time

if "--child" not in sys.argv:  # the parent: run the profile in fresh children
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=3, help="profiled runs (default 3)")
    runs = parser.parse_args().n
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for k in range(runs + 1):
        child = subprocess.run(
            [sys.executable, __file__, "--child"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if child.returncode:
            sys.exit(child.stderr)
        if k:  # the first child only wrote bytecode
            print(f"-- run {k} --\n{child.stdout}", end="")
    sys.exit(0)

t0 = time.perf_counter()
marks = []


def mark(what):
    marks.append((what, time.perf_counter()))


import numpy as np  # noqa: E402

mark("import numpy")
from cujit import cuda  # noqa: E402

mark("import cujit")


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


# A kernel name of its own: on a machine with a driver, nvJitLink answers PTX it has
# assembled before (in any process) from its disk cache, which a new kernel never meets.
_name = f"saxpy_{os.urandom(4).hex()}"
saxpy.__code__ = saxpy.__code__.replace(co_name=_name, co_qualname=_name)
saxpy.__name__ = saxpy.__qualname__ = _name
saxpy = cuda.jit(saxpy)

x = np.ones(1 << 20, np.float32)
mark("make inputs")
dx = cuda.to_device(x)
mark("driver start + first copy (to_device)")
dout = cuda.device_array_like(dx)
spec = saxpy.compile((cuda.float32, cuda.float32[::1], cuda.float32[::1], cuda.float32[::1]))
mark("first compile")
saxpy[4096, 256](np.float32(2.0), dx, dx, dout)
cuda.synchronize()
mark("load + first launch + sync")
prev = t0
for what, t in marks:
    print(f"{what:40} {1e3 * (t - prev):8.1f} ms")
    prev = t
print(f"{'total':40} {1e3 * (prev - t0):8.1f} ms")
print("compile stages:", ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in spec.result.times.items()))
