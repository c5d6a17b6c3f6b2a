"""One kernel of ``kernel_bench.py``, compiled here with the pip toolchain (libNVVM and
nvJitLink wheels) in two variants, timed on a GPU machine whose own toolkit is older.

    PYTHONPATH=src python3 bench/prebuilt_ab.py build          (any machine: cubins)
    PYTHONPATH=src python3 bench/prebuilt_ab.py run            (the GPU machine)

``build`` writes ``bench/_prebuilt/<kernel>-<variant>.cubin``: the reduction as cujit
compiles it, and the same with ``ir.analysis.non_overflowing_adds`` switched off
(every integer addition wrapping: no ``nsw``).  ``run`` loads both cubins through
cuda.bindings, launches them on the same data as kernel_bench (same grid and block),
checks the sum against NumPy and times them with events beside the CUDA C twin from
kernel_bench (NVRTC via CuPy), median of 20 samples of 10 launches.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "_prebuilt")
sys.path.insert(0, HERE)


def build() -> None:
    import kernel_bench as kb

    from cujit import cuda
    from cujit.ir import analysis
    from cujit.options import Options
    from cujit.pipeline import compile_kernel
    from cujit.types import float32

    os.makedirs(OUT_DIR, exist_ok=True)
    fn = kb.python_kernel(kb.KERNELS["reduce_sum"], cuda)
    types = (float32[::1], float32[::1])
    real = analysis.non_overflowing_adds
    meta = {}
    for variant, adds in (("nsw", real), ("wrap", lambda f: frozenset())):
        analysis.non_overflowing_adds = adds
        try:
            r = compile_kernel(fn, types, Options(arch=(9, 0)))
        finally:
            analysis.non_overflowing_adds = real
        with open(os.path.join(OUT_DIR, f"reduce_sum-{variant}.cubin"), "wb") as fh:
            fh.write(r.cubin)
        meta[variant] = {
            "symbol": r.symbol,
            "kept": r.kept,
            "loads_in_ptx": r.ptx.count("ld.global"),
        }
    from cujit.ptx import toolchain_versions

    meta["toolchain"] = {k: v for k, v in toolchain_versions().items() if "path" not in k}
    with open(os.path.join(OUT_DIR, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
    print(json.dumps(meta))


def run() -> None:
    import ctypes

    import cupy as cp
    import kernel_bench as kb
    from cuda.bindings import driver as drv

    with open(os.path.join(OUT_DIR, "meta.json")) as fh:
        meta = json.load(fh)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    args, grid, block, c_extra = kb.KERNELS["reduce_sum"].make(np.random.default_rng(0), sms)
    x = cp.asarray(args[0])
    total = cp.zeros(1, cp.float32)
    want = float(args[0].sum(dtype=np.float64))
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    def timed(launch) -> float:
        for _ in range(3):
            launch()
        samples = []
        for _ in range(20):
            start.record()
            for _ in range(10):
                launch()
            stop.record()
            stop.synchronize()
            samples.append(cp.cuda.get_elapsed_time(start, stop) / 10)
        return statistics.median(samples)

    def check(label) -> None:
        total.fill(0)
        launch_of[label]()
        cp.cuda.Device().synchronize()
        got = float(total.get()[0])
        assert abs(got - want) / want < 1e-5, (label, got, want)

    launch_of = {}
    for variant in ("nsw", "wrap"):
        with open(os.path.join(OUT_DIR, f"reduce_sum-{variant}.cubin"), "rb") as fh:
            err, module = drv.cuModuleLoadData(fh.read())
        assert int(err) == 0, err
        err, func = drv.cuModuleGetFunction(module, meta[variant]["symbol"].encode())
        assert int(err) == 0, err
        values = [x.data.ptr, x.size, total.data.ptr, 1]  # x: data, extent; total: data, extent
        kept = meta[variant]["kept"] or [True] * 4
        kinds = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64]
        params = (
            tuple(v for v, k in zip(values, kept, strict=True) if k),
            tuple(t for t, k in zip(kinds, kept, strict=True) if k),
        )
        launch_of[variant] = lambda f=func, p=params: drv.cuLaunchKernel(
            f, grid, 1, 1, block, 1, 1, 0, drv.CUstream(0), p, 0
        )
    c_fn = cp.RawKernel(kb.KERNELS["reduce_sum"].c_src, "reduce_sum")
    launch_of["cuda_c"] = lambda: c_fn((grid,), (block,), (x, total, *c_extra))
    out = {
        "toolchain": meta["toolchain"],
        "loads_in_ptx": {v: meta[v]["loads_in_ptx"] for v in ("nsw", "wrap")},
    }
    for label in ("nsw", "wrap", "cuda_c"):
        check(label)
        out[label] = timed(launch_of[label])
    for label in ("nsw", "wrap"):
        out[f"{label}_over_c"] = out[label] / out["cuda_c"]
    print(json.dumps(out, indent=1))
    dest = os.environ.get("OUT")
    if dest:
        with open(os.path.join(dest, "prebuilt_ab.json"), "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]]()
