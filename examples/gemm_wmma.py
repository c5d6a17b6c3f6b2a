"""A bf16 matrix product written with ``cuda.wmma``'s 16 x 16 x 16 tiles.

The same plan as ``gemm_mma.py`` (128 x 128 tiles of C per block of four warps, a
64 x 64 tile per warp, A and B staged through shared memory by ``cp_async``), but the
warp thinks in 16 x 16 tiles: ``wmma.load_matrix_a``/``load_matrix_b`` bring a tile's
fragment from shared memory, ``wmma.mma_sync`` multiplies, ``wmma.store_matrix_sync``
writes C.  The shared tiles are padded by 8 elements a row (16 bytes) rather than
swizzled, so the tile functions see plain 2-D arrays.

    python examples/gemm_wmma.py --size 256            # checks against NumPy: "ok ..."
    CUJIT_TARGET=cpu python examples/gemm_wmma.py --size 256
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from cujit import cuda, float32, uint16
from cujit.cuda import wmma

BM, BN, BK = 128, 128, 32
STAGES = 2  # two stages of padded tiles: 2 x (128 x 40 + 32 x 136) x 2 bytes = 37 KiB
PENDING = STAGES - 2
PAD = 8  # elements of padding per row: consecutive rows start 16 bytes apart mod 128
THREADS = 128
TM, TN = 4, 4  # 16 x 16 tiles per warp: 64 x 64


@cuda.jit(device=True)
def load_stage(a, b, sa, sb, stage, k0, bm, bn, tid):
    for i in range(4):
        q = tid + i * THREADS
        row = q >> 2
        chunk = q & 3
        cuda.cp_async(sa, (stage, row, chunk * 8), a, (bm + row, k0 + chunk * 8), 16, "cg")
    for i in range(4):
        q = tid + i * THREADS
        row = q >> 4
        chunk = q & 15
        cuda.cp_async(sb, (stage, row, chunk * 8), b, (k0 + row, bn + chunk * 8), 16, "cg")


@cuda.jit(launch_bounds=(THREADS, 1))
def gemm_wmma(a, b, c):
    tid = cuda.threadIdx.x
    warp = tid >> 5
    bm = cuda.blockIdx.y * BM
    bn = cuda.blockIdx.x * BN
    wm = (warp >> 1) * 64
    wn = (warp & 1) * 64
    sa = cuda.shared.array((STAGES, BM, BK + PAD), uint16)
    sb = cuda.shared.array((STAGES, BK, BN + PAD), uint16)
    acc = cuda.local.array((TM, TN, 8), float32)
    for i in range(TM):
        for j in range(TN):
            zero = wmma.fill_fragment(0.0)
            for e in range(8):
                acc[i, j, e] = zero[e]
    ktiles = a.shape[1] // BK
    load_stage(a, b, sa, sb, 0, 0, bm, bn, tid)
    cuda.cp_async_commit_group()
    for kt in range(ktiles):
        stage = kt & 1
        if kt + 1 < ktiles:  # the next stage's copies run while this one is multiplied
            load_stage(a, b, sa, sb, stage ^ 1, (kt + 1) * BK, bm, bn, tid)
        cuda.cp_async_commit_group()
        cuda.cp_async_wait_group(1)
        cuda.syncthreads()
        for kk in range(BK // 16):
            for i in range(TM):
                fa = wmma.load_matrix_a(sa[stage], wm + 16 * i, 16 * kk)
                for j in range(TN):
                    fb = wmma.load_matrix_b(sb[stage], 16 * kk, wn + 16 * j)
                    cf = (acc[i, j, 0], acc[i, j, 1], acc[i, j, 2], acc[i, j, 3],
                          acc[i, j, 4], acc[i, j, 5], acc[i, j, 6], acc[i, j, 7])  # fmt: skip
                    d = wmma.mma_sync(fa, fb, cf)
                    for e in range(8):
                        acc[i, j, e] = d[e]
        cuda.syncthreads()  # this stage is overwritten by the copies of the next round
    for i in range(TM):
        for j in range(TN):
            cf = (acc[i, j, 0], acc[i, j, 1], acc[i, j, 2], acc[i, j, 3],
                  acc[i, j, 4], acc[i, j, 5], acc[i, j, 6], acc[i, j, 7])  # fmt: skip
            wmma.store_matrix_sync(c, bm + wm + 16 * i, bn + wn + 16 * j, cf)


def launch(a_bits, b_bits, c, stream=0):
    m, k = a_bits.shape
    n = b_bits.shape[1]
    if m % BM or n % BN or k % BK:
        raise ValueError(f"M and N must be multiples of {BM}, K of {BK}: {m}x{n}x{k}")
    gemm_wmma[(n // BN, m // BM), THREADS, stream](a_bits, b_bits, c)


def main() -> None:
    from gemm_mma import bf16_bits, from_bf16_bits

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=256)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    a = bf16_bits(rng.standard_normal((args.size, args.size), np.float32))
    b = bf16_bits(rng.standard_normal((args.size, args.size), np.float32))
    c = np.full((args.size, args.size), np.nan, np.float32)
    launch(a, b, c)
    ref = from_bf16_bits(a).astype(np.float64) @ from_bf16_bits(b).astype(np.float64)
    err = float(np.linalg.norm(c - ref) / np.linalg.norm(ref))
    where = "cpu" if os.environ.get("CUJIT_TARGET") == "cpu" else "gpu"
    status = "ok" if err < 1e-5 else "FAILED"
    print(f"{status} gemm_wmma {args.size}^3 on the {where}: relative error {err:.2e} (< 1e-05)")
    if err >= 1e-5:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
