"""A bf16 matrix product on tensor cores, written as an ordinary cujit kernel.

``C = A @ B`` with A (M x K) and B (K x N) in bfloat16 and C in float32 (or bfloat16),
float32 accumulation.  Each block of 128 threads computes a 128 x 128 tile of C; each of
its four warps a 64 x 64 tile, as 4 x 8 ``mma`` products of 16 x 8 x 16 per step of k.
The tiles of A and B travel global -> shared memory with ``cp_async`` in a pipeline of
four stages (the copies of stages k + 1 to k + 3 run while stage k is multiplied),
in 64 KiB of dynamic shared memory, are stored
XOR-swizzled so that ``ldmatrix`` reads them without bank conflicts, and reach the
registers through ``ldmatrix`` (B transposed on the way).

The arrays hold bfloat16's bits (uint16): tensor cores, ``cp_async`` and ``ldmatrix``
move bits, and every library can hand such an array over.  M and N must be multiples
of 128 and K of the k-step (32; ``make_gemm`` makes other depths and k-steps).

    python examples/gemm_mma.py --size 256            # checks against NumPy: "ok ..."
    CUJIT_TARGET=cpu python examples/gemm_mma.py --size 256   # the same on the CPU target
    python examples/gemm_mma.py --ptx                 # the kernel's PTX
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from cujit import cuda, float32, uint16, uint32

BM, BN = 128, 128  # the block's tile of C


def make_gemm(bk: int = 32, stages: int = 4, warps_m: int = 2, warps_n: int = 2):
    """The kernel for k-steps of ``bk`` (32 or 64) through ``stages`` shared-memory
    stages and ``warps_m x warps_n`` warps (each a ``128 / warps_m x 128 / warps_n`` tile
    of C), with its block size and the dynamic shared memory it takes (bytes).  The
    constants below are the kernel's own (closure variables are compile-time constants)."""
    threads = 32 * warps_m * warps_n
    wm_size, wn_size = BM // warps_m, BN // warps_n
    mi_n, ni_n = wm_size // 16, wn_size // 8  # mma tiles per warp
    sa_size, sb_size = stages * BM * bk, stages * bk * BN  # elements of A's, B's stages
    shared_bytes = 2 * (sa_size + sb_size)  # past 48 KiB: dynamic shared memory
    pending = stages - 2  # copy groups still in flight when a stage is used
    a_chunks = bk // 8  # 16-byte chunks in a row of A's tile
    a_shift = a_chunks.bit_length() - 1
    a_copies = BM * a_chunks // threads  # per thread per stage
    b_copies = bk * (BN // 8) // threads
    min_blocks = 2 if threads > 128 else 1  # 256 threads: at most 128 registers each

    @cuda.jit(device=True)
    def a_index(stage, row, chunk):
        """Where 16-byte chunk ``chunk`` of row ``row`` of A's tile sits: the chunk XOR
        bits of the row, so that the 8 rows one ldmatrix reads hit 8 bank groups (rows
        of 64 bytes: two share a 128-byte line; rows of 128 bytes: one)."""
        swz = ((row >> 1) & 3) if a_chunks == 4 else (row & 7)
        return stage * (BM * bk) + row * bk + ((chunk ^ swz) << 3)

    @cuda.jit(device=True)
    def b_index(stage, row, chunk):
        """Where chunk ``chunk`` (of 16) of row ``row`` (a k) of B's tile sits (after
        A's stages in the one dynamic shared array)."""
        return sa_size + stage * (bk * BN) + row * BN + ((chunk ^ (row & 7)) << 3)

    @cuda.jit(device=True)
    def load_stage(a, b, smem, stage, k0, bm, bn, tid):
        """The block's threads copy A[bm:bm+128, k0:k0+bk] and B[k0:k0+bk, bn:bn+128] into
        stage ``stage``, 16 bytes a copy, without waiting."""
        for i in range(a_copies):
            q = tid + i * threads
            row = q >> a_shift
            chunk = q & (a_chunks - 1)
            cuda.cp_async(smem, a_index(stage, row, chunk), a, (bm + row, k0 + chunk * 8), 16, "cg")
        for i in range(b_copies):
            q = tid + i * threads
            row = q >> 4
            chunk = q & 15
            cuda.cp_async(smem, b_index(stage, row, chunk), b, (k0 + row, bn + chunk * 8), 16, "cg")

    @cuda.jit(launch_bounds=(threads, min_blocks))
    def gemm_bf16(a, b, c):
        tid = cuda.threadIdx.x
        warp = tid >> 5
        lane = tid & 31
        bm = cuda.blockIdx.y * BM
        bn = cuda.blockIdx.x * BN
        wm = (warp // warps_n) * wm_size
        wn = (warp % warps_n) * wn_size
        smem = cuda.shared.array(0, uint16)  # shared_bytes, given at launch
        acc = cuda.local.array((mi_n, ni_n, 4), float32)
        fa = cuda.local.array((mi_n, 4), uint32)
        fb = cuda.local.array((ni_n, 2), uint32)
        for mi in range(mi_n):
            for ni in range(ni_n):
                for j in range(4):
                    acc[mi, ni, j] = 0.0
        ktiles = a.shape[1] // bk
        for s in range(stages - 1):
            if s < ktiles:
                load_stage(a, b, smem, s, s * bk, bm, bn, tid)
            cuda.cp_async_commit_group()
        stage = 0  # the stage multiplied now, and the one loaded next (no % in the loop)
        fill = stages - 1
        for kt in range(ktiles):
            cuda.cp_async_wait_group(pending)  # stage kt has landed (this thread's part)
            cuda.syncthreads()  # ...and every thread's; stage kt - 1 is free again
            nxt = kt + stages - 1
            if nxt < ktiles:
                load_stage(a, b, smem, fill, nxt * bk, bm, bn, tid)
            cuda.cp_async_commit_group()
            fill = 0 if fill == stages - 1 else fill + 1
            for kk in range(bk // 16):
                # A: one x4 ldmatrix per 16 x 16 tile; lane l gives row l % 16, chunk l // 16
                for mi in range(mi_n):
                    row = wm + mi * 16 + (lane & 15)
                    r = cuda.ldmatrix(smem, a_index(stage, row, kk * 2 + (lane >> 4)))
                    fa[mi, 0] = r[0]
                    fa[mi, 1] = r[1]
                    fa[mi, 2] = r[2]
                    fa[mi, 3] = r[3]
                # B: one x4 transposed ldmatrix per two n-tiles (16 k x 16 n)
                for nj in range(ni_n // 2):
                    krow = kk * 16 + (lane & 15)
                    chunk = (wn >> 3) + nj * 2 + (lane >> 4)
                    r = cuda.ldmatrix(smem, b_index(stage, krow, chunk), 4, True)
                    fb[2 * nj, 0] = r[0]
                    fb[2 * nj, 1] = r[1]
                    fb[2 * nj + 1, 0] = r[2]
                    fb[2 * nj + 1, 1] = r[3]
                for mi in range(mi_n):
                    for ni in range(ni_n):
                        d = cuda.mma(
                            "m16n8k16",
                            "bf16",
                            (fa[mi, 0], fa[mi, 1], fa[mi, 2], fa[mi, 3]),
                            (fb[ni, 0], fb[ni, 1]),
                            (acc[mi, ni, 0], acc[mi, ni, 1], acc[mi, ni, 2], acc[mi, ni, 3]),
                        )
                        acc[mi, ni, 0] = d[0]
                        acc[mi, ni, 1] = d[1]
                        acc[mi, ni, 2] = d[2]
                        acc[mi, ni, 3] = d[3]
            stage = 0 if stage == stages - 1 else stage + 1
        cuda.cp_async_wait_all()
        # Lane l holds rows l // 4 and l // 4 + 8, columns 2 (l % 4) and 2 (l % 4) + 1
        # of each 16 x 8 tile.
        for mi in range(mi_n):
            for ni in range(ni_n):
                row = bm + wm + mi * 16 + (lane >> 2)
                col = bn + wn + ni * 8 + (lane & 3) * 2
                c[row, col] = acc[mi, ni, 0]
                c[row, col + 1] = acc[mi, ni, 1]
                c[row + 8, col] = acc[mi, ni, 2]
                c[row + 8, col + 1] = acc[mi, ni, 3]

    return gemm_bf16, threads, shared_bytes


# The k-step of one stage, the pipeline's depth and the warps (rows x columns of them).
BK, STAGES, WARPS = 32, 4, (2, 2)
gemm_bf16, THREADS, SHARED_BYTES = make_gemm(BK, STAGES, *WARPS)
DEFAULT = (BK, STAGES, *WARPS)
VARIANTS = {
    f"bk{v[0]}x{v[1]}w{v[2]}x{v[3]}": v
    for v in ((32, 4, 2, 2), (64, 3, 2, 2), (32, 4, 2, 4), (32, 3, 2, 4), (64, 3, 2, 4))
}


SIGNATURE = "void(uint16[:, ::1], uint16[:, ::1], float32[:, ::1])"


_made = {DEFAULT: (gemm_bf16, THREADS, SHARED_BYTES)}


def launch(a_bits, b_bits, c, stream=0, variant=DEFAULT):
    """``c = a @ b`` for device (or host) arrays of bf16 bits and a float32 ``c``;
    ``variant``: (k-step, stages, warps_m, warps_n)."""
    if variant not in _made:
        _made[variant] = make_gemm(*variant)
    kernel, threads, shared_bytes = _made[variant]
    m, k = a_bits.shape
    n = b_bits.shape[1]
    if m % BM or n % BN or k % variant[0]:
        raise ValueError(f"M and N must be multiples of {BM}, K of {variant[0]}: {m}x{n}x{k}")
    kernel[(n // BN, m // BM), threads, stream, shared_bytes](a_bits, b_bits, c)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16's bits (round to nearest even), as uint16."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def check(size: int, seed: int = 0, variant=DEFAULT) -> float:
    """Run ``size``^3 once and return the relative error against a float64 product of
    the same bf16 inputs (the tolerance: float32 accumulation over ``size`` terms)."""
    rng = np.random.default_rng(seed)
    a = bf16_bits(rng.standard_normal((size, size), np.float32))
    b = bf16_bits(rng.standard_normal((size, size), np.float32))
    c = np.full((size, size), np.nan, np.float32)  # an element left unwritten fails
    launch(a, b, c, variant=variant)
    ref = from_bf16_bits(a).astype(np.float64) @ from_bf16_bits(b).astype(np.float64)
    return float(np.linalg.norm(c - ref) / np.linalg.norm(ref))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=256, help="M = N = K (a multiple of 128)")
    p.add_argument("--ptx", action="store_true", help="print the kernel's PTX and stop")
    p.add_argument("--variant", choices=sorted(VARIANTS), default="bk32x4w2x2")
    args = p.parse_args()
    if args.ptx:
        ptx, _ = cuda.compile_ptx(gemm_bf16, SIGNATURE, cc=(8, 0))
        print(ptx)
        return
    where = "cpu" if os.environ.get("CUJIT_TARGET") == "cpu" else "gpu"
    err = check(args.size, variant=VARIANTS[args.variant])
    tol = 1e-5
    status = "ok" if err < tol else "FAILED"
    print(f"{status} gemm_mma {args.size}^3 on the {where}: relative error {err:.2e} (< {tol})")
    if err >= tol:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
