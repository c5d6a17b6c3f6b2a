"""A heat-diffusion stencil over a Dask array, chunk by chunk, with a cujit kernel.

Each step grows every chunk by one element from its neighbours (``map_overlap``),
launches the kernel over it on a worker, and trims the grown ring off again, so
no worker ever holds more than a few chunks: the array may be far larger than
one GPU's memory (or one worker's).

    python examples/dask_stencil.py --workers 2 --size 4096 --chunk 1024 --steps 4
    CUJIT_TARGET=cpu python examples/dask_stencil.py --check     # no GPU: the host
    python examples/dask_stencil.py --cuda                       # dask-cuda, one worker per GPU
"""

from __future__ import annotations

import argparse
import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import cujit.dask as cd
from cujit import cuda


@cuda.jit
def heat_step(u, alpha, out):
    # One explicit step of u_t = alpha * laplacian(u) on a chunk grown by one element;
    # the ring of grown elements is trimmed off afterwards, so it is left unwritten.
    i, j = cuda.grid(2)
    if 0 < i < u.shape[0] - 1 and 0 < j < u.shape[1] - 1:
        lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
        out[i, j] = u[i, j] + alpha * lap


def diffuse(u: da.Array, steps: int, alpha: float = 0.2) -> da.Array:
    """``steps`` steps of the stencil; the array's edges keep their nearest values."""
    for _ in range(steps):
        u = cd.map_overlap(heat_step, u, depth=1, boundary="nearest",
                           args=(np.float32(alpha),))
    return u


def diffuse_numpy(u: np.ndarray, steps: int, alpha: float = 0.2) -> np.ndarray:
    """The same in NumPy, in float64, on the whole array: the reference."""
    u = u.astype(np.float64)
    for _ in range(steps):
        p = np.pad(u, 1, mode="edge")
        u = u + alpha * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4.0 * u)
    return u


def make_cluster(workers: int, use_cuda: bool):
    if use_cuda:  # one worker per GPU, each seeing its own as device 0
        from dask_cuda import LocalCUDACluster

        return LocalCUDACluster(n_workers=workers or None, dashboard_address=None)
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                        host="127.0.0.1", dashboard_address=None)


def run(client: Client, size: int, chunk: int, steps: int, check: bool) -> float:
    """Build, compute and (with ``check``) verify; the compute's wall time in seconds."""
    u0 = da.random.default_rng(7).random((size, size), dtype=np.float32,
                                         chunks=(chunk, chunk))
    result = diffuse(u0, steps)
    start = time.perf_counter()
    if check:
        got, first = client.compute([result, u0], sync=True)
    else:  # a reduction: only numbers come back, never the whole array
        total = client.compute(result.sum(dtype=np.float64), sync=True)
    took = time.perf_counter() - start
    if check:
        ref = diffuse_numpy(first, steps)
        error = np.linalg.norm(got - ref) / np.linalg.norm(ref)
        if not error < 1e-5:
            raise SystemExit(f"the result differs from NumPy's: relative error {error:.3g}")
        print(f"{size}x{size} float32, {steps} steps: matches NumPy (relative error "
              f"{error:.2g})")
    else:
        print(f"{size}x{size} float32, {steps} steps: sum {total:.6g}")
    return took


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--size", type=int, default=2048, help="the array is size x size")
    ap.add_argument("--chunk", type=int, default=512, help="chunks are chunk x chunk")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--check", action="store_true", help="gather and compare with NumPy")
    ap.add_argument("--cuda", action="store_true", help="dask-cuda's LocalCUDACluster")
    args = ap.parse_args(argv)
    with make_cluster(args.workers, args.cuda) as cluster, Client(cluster) as client:
        took = run(client, args.size, args.chunk, args.steps, args.check)
        print(f"{len(client.scheduler_info()['workers'])} workers: {took:.3f} s")


if __name__ == "__main__":
    main()
