"""Host-side cost of cujit's launch path with the driver call stubbed out (no GPU needed).

    PYTHONPATH=src python3 tools/launch_overhead.py [--profile]

Everything a launch does in Python (recognising the argument types, finding the
specialisation, checking the configuration, packing the parameters) runs for real;
only cuLaunchKernel is replaced by a no-op.  Used to find and remove Python work on
the launch path; the real comparison against raw cuLaunchKernel is bench/launch_bench.py
on a GPU.
"""

import cProfile
import os
import pstats
import sys
import time
from types import SimpleNamespace

import numpy as np

from cujit import cuda
from cujit.runtime import context
from cujit.runtime.memory import DeviceArray

# The same kernels bench/launch_bench.py times on a GPU.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from launch_bench import k1, k4, k16  # noqa: E402

FAKE_PTR = 0x7F00_0000_0000


def fake_array(n):
    host = np.empty(n, np.float32)
    return DeviceArray._view(host.shape, host.strides, host.dtype, FAKE_PTR, None)


def stub_function():
    device = SimpleNamespace(
        max_block_dim=(1024, 1024, 64),
        max_grid_dim=(2**31 - 1, 65535, 65535),
        max_threads_per_block=1024,
        max_shared_memory_per_block_optin=227 * 1024,
    )
    return SimpleNamespace(
        name="k",
        handle=object(),
        device=device,
        checked={},
        max_threads_per_block=1024,
        num_regs=32,
        static_shared_bytes=0,
        cu_launch=lambda *a: (0,),
        ensure_dynamic_shared=lambda n: None,
        cooperative=False,
    )


def main():
    context.current_device_id = lambda: 0
    context._tls.ctx = SimpleNamespace(device=SimpleNamespace(id=0, compute_capability=(9, 0)))
    import cujit.runtime.launch as rl

    rl._DEFAULT_STREAM[0] = 0
    rows = []
    for fn, nargs in ((k1, 1), (k4, 4), (k16, 16)):
        kern = cuda.jit(fn)
        args = [
            np.float32(1.5) if n.startswith("a") else fake_array(1024)
            for n in fn.__code__.co_varnames[: fn.__code__.co_argcount]
        ]
        from cujit.types import typeof

        spec = kern.compile(tuple(typeof(a) for a in args))
        spec.functions[0] = stub_function()
        spec.packer = rl.get_packer(spec.param_kinds)
        spec.flatten = rl.make_flattener(spec.arg_types)
        n = 20000
        kern[1, 32](*args)
        if "--profile" in sys.argv and nargs == 1:
            cProfile.runctx(
                "for _ in range(n): kern[1, 32](*args)", globals(), locals(), "/tmp/launch.prof"
            )
            pstats.Stats("/tmp/launch.prof").sort_stats("tottime").print_stats(14)
        best = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(n):
                kern[1, 32](*args)
            best.append((time.perf_counter() - t) / n)
        rows.append((fn.__name__, nargs, min(best)))
    for name, nargs, t in rows:
        print(f"{name} ({nargs} args): {t * 1e6:.2f} us per launch, driver call stubbed")


if __name__ == "__main__":
    main()
