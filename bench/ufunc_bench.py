"""GPU ufuncs and reductions: cujit's vectorize / guvectorize / Reduce beside numba-cuda's,
CuPy's and torch's, and a hand-written cujit kernel, in one run (on a GPU machine).

    PYTHONPATH=src python3 bench/ufunc_bench.py [--only saxpy,reduce,matmul4,host]

- saxpy: ``out = a*x + y`` over 2^26 float32 device arrays (``out=`` given) by cujit's
  ``cuda.vectorize``, numba-cuda's ``cuda.vectorize``, CuPy's ``ElementwiseKernel`` and a
  hand-written cujit kernel; the ceiling is a CuPy device-to-device copy of the same
  number of bytes (``cupy.copyto``) and ``cuMemcpyDtoDAsync``.
- reduce: the sum of 2^26 float32 by cujit's ``Reduce`` (``res=`` a device array),
  ``cupy.sum``, ``torch.sum`` and numba-cuda's ``cuda.reduce`` (``res=`` too).
- matmul4: 2^20 batched 4x4 float32 matrix products by cujit's ``guvectorize``,
  numba-cuda's and a hand-written cujit kernel (one batch per thread).
- host: the host time of one small vectorize call (1024 float32, device arrays, ``out=``)
  beside one launch of the hand-written kernel on the same arrays (perf_counter, many
  calls, one synchronize at the end).

Every result is checked against NumPy (relative 2-norm) before it is timed; GPU times are
CUDA events on the legacy default stream (bench/kernel_bench.py's timer), the median of
REPS samples of PER_SAMPLE back-to-back calls.  A table is printed and everything goes to
bench/results/ufunc_bench-<date>.json (and $OUT when set).  An anchor that is not
installed is reported as such.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, HERE)

from kernel_bench import EventTimer, rel_err

N = 1 << 26
BATCH = 1 << 20
SMALL = 1024
HOST_CALLS = 2000
SEED = 20261201

SAXPY_PY = """
def saxpy_kernel(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def saxpy(a, x, y):
    return a * x + y


def add(a, b):
    return a + b


def matmul4(a, b, c):
    for i in range(4):
        for j in range(4):
            s = float32(0)
            for k in range(4):
                s += a[i, k] * b[k, j]
            c[i, j] = s


def matmul4_kernel(a, b, c):
    t = cuda.grid(1)
    if t < a.shape[0]:
        for i in range(4):
            for j in range(4):
                s = float32(0)
                for k in range(4):
                    s += a[t, i, k] * b[t, k, j]
                c[t, i, j] = s
"""


def _namespace(cuda_module, float32):
    ns = {"cuda": cuda_module, "float32": float32}
    exec(SAXPY_PY, ns)  # noqa: S102
    return ns


def _check(name, got, want, tol):
    err = rel_err(got, want)
    if not err <= tol:
        raise AssertionError(f"{name}: relative error {err:.3g} above {tol}")
    return err


def _cell(timer, launch, sync, nbytes, err):
    t = timer.time(launch, sync)
    t["GB_per_s"] = nbytes / (t["ms"] * 1e-3) / 1e9
    t["rel_err"] = err
    del t["samples_ms"]
    return t


def _anchor(fn):
    """Run one anchor; an anchor that is missing or fails is reported, not fatal."""
    try:
        return fn()
    except ImportError as exc:
        return {"skipped": f"not installed: {exc}"}
    except Exception as exc:  # noqa: BLE001  (an anchor's failure is data, not a crash)
        return {"error": f"{type(exc).__name__}: {exc}"}


def bench_saxpy(timer, cj, nb) -> dict:
    from cujit import cuda

    rng = np.random.default_rng(SEED)
    x, y = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    a = np.float32(2.5)
    want = a * x + y
    nbytes = 3 * x.nbytes
    res = {}
    dx, dy, dout = cuda.to_device(x), cuda.to_device(y), cuda.device_array(N, np.float32)
    vec = cuda.vectorize(["float32(float32, float32, float32)"])(cj["saxpy"])
    dout.copy_to_device(np.full(N, np.nan, np.float32))
    vec(a, dx, dy, out=dout)
    res["cujit_vectorize"] = _cell(
        timer,
        lambda: vec(a, dx, dy, out=dout),
        cuda.synchronize,
        nbytes,
        _check("cujit vectorize", dout.copy_to_host(), want, 1e-6),
    )
    kern = cuda.jit(cj["saxpy_kernel"])
    grid = (N + 255) // 256
    dout.copy_to_device(np.full(N, np.nan, np.float32))
    kern[grid, 256](a, dx, dy, dout)
    res["cujit_kernel"] = _cell(
        timer,
        lambda: kern[grid, 256](a, dx, dy, dout),
        cuda.synchronize,
        nbytes,
        _check("cujit kernel", dout.copy_to_host(), want, 1e-6),
    )
    res["numba_cuda_vectorize"] = _anchor(lambda: _numba_saxpy(timer, nb, a, x, y, want))
    res["cupy_elementwise"] = _anchor(lambda: _cupy_saxpy(timer, a, x, y, want))
    res["cupy_copy_ceiling"] = _anchor(lambda: _cupy_copy(timer, nbytes))
    res["memcpy_dtod_ceiling"] = timer.copy_rate(nbytes // 2)  # moves nbytes in all
    del res["memcpy_dtod_ceiling"]["samples_ms"]
    return res


def _numba_saxpy(timer, nb, a, x, y, want):
    from numba import cuda as ncuda

    vec = ncuda.vectorize(["float32(float32, float32, float32)"])(nb["saxpy"])
    dx, dy = ncuda.to_device(x), ncuda.to_device(y)
    dout = ncuda.to_device(np.full(N, np.nan, np.float32))
    vec(a, dx, dy, out=dout)
    err = _check("numba vectorize", dout.copy_to_host(), want, 1e-6)
    return _cell(timer, lambda: vec(a, dx, dy, out=dout), ncuda.synchronize, 3 * x.nbytes, err)


def _cupy_saxpy(timer, a, x, y, want):
    import cupy as cp

    k = cp.ElementwiseKernel(
        "float32 a, float32 x, float32 y", "float32 out", "out = a * x + y", "cujit_bench_saxpy"
    )
    dx, dy = cp.asarray(x), cp.asarray(y)
    dout = cp.full(N, np.nan, np.float32)
    k(a, dx, dy, dout)
    err = _check("cupy elementwise", cp.asnumpy(dout), want, 1e-6)
    return _cell(
        timer, lambda: k(a, dx, dy, dout), cp.cuda.runtime.deviceSynchronize, 3 * x.nbytes, err
    )


def _cupy_copy(timer, nbytes):
    import cupy as cp

    src = cp.random.random(nbytes // 8, dtype=cp.float32)
    dst = cp.empty_like(src)
    cp.copyto(dst, src)
    err = _check("cupy copy", cp.asnumpy(dst), cp.asnumpy(src), 0.0)
    return _cell(
        timer, lambda: cp.copyto(dst, src), cp.cuda.runtime.deviceSynchronize, 2 * src.nbytes, err
    )


def bench_reduce(timer, cj, nb) -> dict:
    from cujit import cuda

    x = np.random.default_rng(SEED + 1).random(N, dtype=np.float32)
    want = np.array([x.astype(np.float64).sum()])
    res = {}
    red = cuda.Reduce(cj["add"])
    dx, dres = cuda.to_device(x), cuda.to_device(np.full(1, np.nan, np.float32))
    red(dx, res=dres)
    res["cujit_reduce"] = _cell(
        timer,
        lambda: red(dx, res=dres),
        cuda.synchronize,
        x.nbytes,
        _check("cujit reduce", dres.copy_to_host(), want, 1e-5),
    )
    res["cupy_sum"] = _anchor(lambda: _cupy_sum(timer, x, want))
    res["torch_sum"] = _anchor(lambda: _torch_sum(timer, x, want))
    res["numba_cuda_reduce"] = _anchor(lambda: _numba_reduce(timer, nb, x, want))
    return res


def _cupy_sum(timer, x, want):
    import cupy as cp

    dx, out = cp.asarray(x), cp.full((), np.nan, np.float32)
    cp.sum(dx, out=out)
    err = _check("cupy sum", cp.asnumpy(out).reshape(1), want, 1e-5)
    return _cell(
        timer, lambda: cp.sum(dx, out=out), cp.cuda.runtime.deviceSynchronize, x.nbytes, err
    )


def _torch_sum(timer, x, want):
    import torch

    dx = torch.from_numpy(x).cuda()
    out = torch.full((), float("nan"), dtype=torch.float32, device="cuda")
    torch.sum(dx, dim=0, out=out)
    err = _check("torch sum", out.cpu().numpy().reshape(1), want, 1e-5)
    return _cell(
        timer, lambda: torch.sum(dx, dim=0, out=out), torch.cuda.synchronize, x.nbytes, err
    )


def _numba_reduce(timer, nb, x, want):
    from numba import cuda as ncuda

    red = ncuda.reduce(nb["add"])
    dx, dres = ncuda.to_device(x), ncuda.to_device(np.full(1, np.nan, np.float32))
    red(dx, res=dres)
    err = _check("numba reduce", dres.copy_to_host(), want, 1e-5)
    return _cell(timer, lambda: red(dx, res=dres), ncuda.synchronize, x.nbytes, err)


def bench_matmul4(timer, cj, nb) -> dict:
    from cujit import cuda

    rng = np.random.default_rng(SEED + 2)
    a = rng.random((BATCH, 4, 4), dtype=np.float32)
    b = rng.random((BATCH, 4, 4), dtype=np.float32)
    want = np.matmul(a, b)
    nbytes = 3 * a.nbytes
    sig = ["void(float32[:,:], float32[:,:], float32[:,:])"]
    res = {}
    gu = cuda.guvectorize(sig, "(m,n),(n,p)->(m,p)")(cj["matmul4"])
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = cuda.to_device(np.full(a.shape, np.nan, np.float32))
    gu(da, db, out=dc)
    res["cujit_guvectorize"] = _cell(
        timer,
        lambda: gu(da, db, out=dc),
        cuda.synchronize,
        nbytes,
        _check("cujit gufunc", dc.copy_to_host(), want, 1e-6),
    )
    kern = cuda.jit(cj["matmul4_kernel"])
    grid = (BATCH + 255) // 256
    dc.copy_to_device(np.full(a.shape, np.nan, np.float32))
    kern[grid, 256](da, db, dc)
    res["cujit_kernel"] = _cell(
        timer,
        lambda: kern[grid, 256](da, db, dc),
        cuda.synchronize,
        nbytes,
        _check("cujit kernel", dc.copy_to_host(), want, 1e-6),
    )
    res["numba_cuda_guvectorize"] = _anchor(lambda: _numba_matmul4(timer, nb, a, b, want))
    return res


def _numba_matmul4(timer, nb, a, b, want):
    from numba import cuda as ncuda

    gu = ncuda.guvectorize(
        ["void(float32[:,:], float32[:,:], float32[:,:])"], "(m,n),(n,p)->(m,p)"
    )(nb["matmul4"])
    da, db = ncuda.to_device(a), ncuda.to_device(b)
    dc = ncuda.to_device(np.full(a.shape, np.nan, np.float32))
    gu(da, db, out=dc)
    err = _check("numba gufunc", dc.copy_to_host(), want, 1e-6)
    return _cell(timer, lambda: gu(da, db, out=dc), ncuda.synchronize, 3 * a.nbytes, err)


def bench_host(timer, cj, nb) -> dict:
    from cujit import cuda

    rng = np.random.default_rng(SEED + 3)
    x, y = rng.random(SMALL, dtype=np.float32), rng.random(SMALL, dtype=np.float32)
    a = np.float32(2.5)
    dx, dy, dout = cuda.to_device(x), cuda.to_device(y), cuda.device_array(SMALL, np.float32)
    vec = cuda.vectorize(["float32(float32, float32, float32)"])(cj["saxpy"])
    kern = cuda.jit(cj["saxpy_kernel"])
    calls = {
        "vectorize_call": lambda: vec(a, dx, dy, out=dout),
        "kernel_launch": lambda: kern[(SMALL + 255) // 256, 256](a, dx, dy, dout),
    }
    res = {}
    for name, call in calls.items():
        dout.copy_to_device(np.full(SMALL, np.nan, np.float32))
        call()
        err = _check(name, dout.copy_to_host(), a * x + y, 1e-6)
        for _ in range(100):
            call()
        cuda.synchronize()
        start = time.perf_counter()
        for _ in range(HOST_CALLS):
            call()
        cuda.synchronize()
        res[name] = {
            "us_per_call": (time.perf_counter() - start) / HOST_CALLS * 1e6,
            "rel_err": err,
        }
    res["ratio"] = res["vectorize_call"]["us_per_call"] / res["kernel_launch"]["us_per_call"]
    return res


BENCHES = {
    "saxpy": bench_saxpy,
    "reduce": bench_reduce,
    "matmul4": bench_matmul4,
    "host": bench_host,
}


def _versions() -> dict:
    out = {"python": sys.version.split()[0], "numpy": np.__version__}
    for mod in ("numba_cuda", "cupy", "torch", "llvmlite"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception as exc:  # noqa: BLE001
            out[mod] = f"absent ({type(exc).__name__})"
    return out


def _table(results: dict) -> str:
    lines = [f"{'bench':8} {'implementation':24} {'ms':>9} {'GB/s':>8}  note"]
    for bench, cells in results.items():
        for impl, cell in cells.items():
            if not isinstance(cell, dict):
                lines.append(f"{bench:8} {impl:24} {cell:>9.3f}")
            elif "ms" in cell:
                lines.append(f"{bench:8} {impl:24} {cell['ms']:9.4f} {cell['GB_per_s']:8.0f}")
            elif "us_per_call" in cell:
                lines.append(f"{bench:8} {impl:24} {cell['us_per_call']:9.2f}  us/call (host)")
            else:
                lines.append(
                    f"{bench:8} {impl:24} {'-':>9} {'-':>8}  "
                    f"{cell.get('skipped') or cell.get('error')}"
                )
    return "\n".join(lines)


class WallTimer:
    """--smoke: wall-clock samples on the CPU target (checks the script, times nothing)."""

    def time(self, launch, sync) -> dict:
        sync()
        start = time.perf_counter()
        launch()
        sync()
        ms = (time.perf_counter() - start) * 1e3
        return {"ms": ms, "min_ms": ms, "max_ms": ms, "samples_ms": [ms]}

    def copy_rate(self, nbytes: int) -> dict:
        return {"ms": float("nan"), "GB_per_s": float("nan"), "samples_ms": []}


def main() -> None:
    global N, BATCH, HOST_CALLS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(BENCHES))
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="small sizes on cujit's CPU target, no anchors: a script check",
    )
    args = parser.parse_args()
    if args.smoke:
        os.environ["CUJIT_TARGET"] = "cpu"
        N, BATCH, HOST_CALLS = 1 << 14, 1 << 10, 20
    from cujit import cuda, float32

    timer = WallTimer() if args.smoke else EventTimer()
    cj = _namespace(cuda, float32)
    try:
        if args.smoke:
            raise ImportError("--smoke: no anchors")
        import numba
        from numba import cuda as ncuda

        nb = _namespace(ncuda, numba.float32)
    except Exception:  # noqa: BLE001  (the numba anchors then report their ImportError)
        nb = {}
    results = {name: BENCHES[name](timer, cj, nb) for name in args.only.split(",")}
    report = {
        "date": datetime.now(UTC).isoformat(),
        "n": N,
        "batch": BATCH,
        "versions": _versions(),
        "results": results,
    }
    print(_table(results))
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    folders = [os.path.join(HERE, "results"), os.environ.get("OUT")] if not args.smoke else []
    for folder in filter(None, folders):
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"ufunc_bench-{stamp}.json"), "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
