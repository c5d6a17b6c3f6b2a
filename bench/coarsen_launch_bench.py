"""Host time per launch of coarsenable kernels: the coarsened variant chosen per launch
(its selector in front of the launchers) beside the same kernel with coarsening off and
a raw ``cuLaunchKernel`` of the variant's cubin, for 1, 4 and 16 arguments.

    PYTHONPATH=src python3 bench/coarsen_launch_bench.py   (on a GPU machine)

The kernels touch 32 elements on one block of 32 threads, so the launch dominates; the
selector's facts hold (aligned fresh arrays, a grid covering the bound).  Target: the
coarsened launch within 1.2x of the raw one, and not slower than coarsening off by more
than the selector's few attribute reads.  Saves bench/results/coarsen_launch-<date>.json.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import datetime, timezone

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, HERE)

from launch_bench import RAW_CTYPES, per_launch, raw_params  # noqa: E402 -- beside this file

from cujit import cuda  # noqa: E402 -- from this checkout's src

N = 32


def c1(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * 2


def c4(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def c16(a0, a1, a2, a3, a4, a5, a6, a7, x0, x1, x2, x3, x4, x5, x6, x7):
    i = cuda.grid(1)
    if i < x0.size:
        x0[i] = (
            a0 * x1[i]
            + a1 * x2[i]
            + a2 * x3[i]
            + a3 * x4[i]
            + a4 * x5[i]
            + a5 * x6[i]
            + a6 * x7[i]
            + a7
        )


def args_for(fn):
    import inspect

    out = []
    for name in inspect.signature(fn).parameters:
        if name.startswith("a"):
            out.append(np.float32(1.5))
        else:
            out.append(cuda.to_device(np.random.default_rng().random(N, dtype=np.float32)))
    return out


def raw_launcher(spec, args, grid):
    from cuda.bindings import driver as drv

    module = drv.cuModuleLoadData(spec.result.cubin)[1]
    func = drv.cuModuleGetFunction(module, spec.record.symbol.encode())[1]
    values, kinds = raw_params(spec, args)
    params = (tuple(values), tuple(RAW_CTYPES[k] for k in kinds))
    stream = drv.CUstream(0)
    return lambda: drv.cuLaunchKernel(func, grid, 1, 1, 32, 1, 1, 0, stream, params, 0)


def bench() -> dict:
    rows = {}
    for fn in (c1, c4, c16):
        row = {}
        args = args_for(fn)
        wide = cuda.jit(fn)
        plain = cuda.jit(fn, coarsen=False)
        wcfg, pcfg = wide[1, 32], plain[1, 32]
        wcfg(*args)  # starts the variant's compile in a thread (cujit/variants.py)
        wcfg(*args)  # waits for it: the selector holds both launchers from here on
        pcfg(*args)
        cuda.synchronize()
        spec = next(iter(wide.overloads.values()))
        row["variant_ran"] = spec.coarse is not None and spec.coarse.wide is not None
        row["cujit_coarsened_us"] = per_launch(lambda: wcfg(*args), cuda.synchronize) * 1e6  # noqa: B023
        row["cujit_coarsen_off_us"] = per_launch(lambda: pcfg(*args), cuda.synchronize) * 1e6  # noqa: B023
        if row["variant_ran"]:
            raw = raw_launcher(spec.coarse.wide, args, 1)
            row["raw_wide_cubin_us"] = per_launch(raw, cuda.synchronize) * 1e6
            row["coarsened_over_raw"] = row["cujit_coarsened_us"] / row["raw_wide_cubin_us"]
        row["coarsened_over_off"] = row["cujit_coarsened_us"] / row["cujit_coarsen_off_us"]
        rows[f"{fn.__name__} ({len(args)} args)"] = row
    return rows


def main() -> None:
    rows = bench()
    for name, row in rows.items():
        print(
            name,
            " ".join(
                f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
            ),
        )
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    path = os.path.join(HERE, "results", f"coarsen_launch-{stamp}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    doc = {"date": stamp, "machine": platform.node(), "rows": rows}
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=1)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], os.path.basename(path)), "w") as fh:
            json.dump(doc, fh, indent=1)
    print("saved", path)


if __name__ == "__main__":
    main()
