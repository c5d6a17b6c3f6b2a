"""bf16 matrix products on tensor cores: cujit's kernels beside cuBLAS and Triton, one run.

    PYTHONPATH=src python3 bench/gemm_bench.py [--sizes 2048,4096,8192] [--skinny]

For each shape ``MxNxK`` (square 2048, 4096, 8192 and the skinny 8192x8192x512 and
512x8192x8192 by default): A (M x K) and B (K x N) in bfloat16 from
``np.random.default_rng(SEED)``; each implementation computes ``A @ B`` with float32
accumulation:

- ``cublas``: ``torch.matmul`` on bf16 tensors (bf16 out), the anchor;
- ``triton``: a Triton matmul written here (block shapes autotuned over a few configs,
  float32 accumulation, bf16 out);
- ``gemm_mma``: ``examples/gemm_mma.py``, a cujit kernel with ``cuda.mma``,
  ``ldmatrix`` and ``cp_async`` (float32 out);
- ``gemm_wmma``: ``examples/gemm_wmma.py``, the same plan in ``cuda.wmma``'s 16 x 16 x 16
  tiles (float32 out).

Every result is checked first against a float64 product of the same bf16 inputs, by
relative 2-norm: float32 outputs within 1e-5, bf16 outputs within 1e-2 (bf16's own
rounding is about 2^-9).  Then WARMUP launches and the median over REPS samples of
PER_SAMPLE back-to-back launches between two CUDA events (torch's, on the legacy default
stream, where cujit launches too).  Reported: ms, TFLOP/s (2MNK flops) and the fraction
of cuBLAS.  Saves bench/results/gemm_bench-<date>.json (and to $OUT when set) with a
``summary`` of ``"<example>@MxNxK"`` -> fraction of cuBLAS.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

SEED = 0
WARMUP, REPS, PER_SAMPLE = 3, 7, 5
SQUARE = (2048, 4096, 8192)
SKINNY = ((8192, 8192, 512), (512, 8192, 8192))
TOL = {"float32": 1e-5, "bfloat16": 1e-2}


def triton_matmul():
    """A plain Triton matmul: one program per BLOCK_M x BLOCK_N tile, k in BLOCK_K steps."""
    import triton
    import triton.language as tl

    configs = [
        triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_warps=w, num_stages=s)
        for bm, bn, bk, w, s in (
            (128, 128, 64, 4, 4),
            (128, 256, 64, 8, 3),
            (256, 128, 64, 8, 3),
            (128, 128, 32, 4, 4),
            (64, 128, 64, 4, 4),
        )
    ]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr,
               BN: tl.constexpr, BK: tl.constexpr):  # fmt: skip
        pm = tl.program_id(0)
        pn = tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        pa = a + rm[:, None] * sam + rk[None, :] * sak
        pb = b + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for _ in range(0, K, BK):
            acc += tl.dot(tl.load(pa), tl.load(pb))
            pa += BK * sak
            pb += BK * sbk
        pc = c + rm[:, None] * scm + rn[None, :] * scn
        tl.store(pc, acc.to(tl.bfloat16))

    def run(a, b, c):
        m, k = a.shape
        n = b.shape[1]

        def grid(meta):
            return (triton.cdiv(m, meta["BM"]), triton.cdiv(n, meta["BN"]))

        kernel[grid](a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride())

    return run


def timed(torch, fn) -> float:
    """Median ms per call of ``fn()`` (CUDA events around PER_SAMPLE calls)."""
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(REPS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(PER_SAMPLE):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / PER_SAMPLE)
    return statistics.median(samples)


def rel_err(torch, got, ref) -> float:
    return float(torch.linalg.norm(got.double() - ref) / torch.linalg.norm(ref))


def bench_shape(torch, impls, m, n, k) -> dict:
    rng = np.random.default_rng(SEED)
    a = torch.from_numpy(rng.standard_normal((m, k), np.float32)).cuda().to(torch.bfloat16)
    b = torch.from_numpy(rng.standard_normal((k, n), np.float32)).cuda().to(torch.bfloat16)
    ref = a.double() @ b.double()
    flops = 2.0 * m * n * k
    out = {}
    for name, (make_out, run) in impls.items():
        c = make_out(m, n)
        c.fill_(float("nan"))  # an element left unwritten fails the check
        try:
            run(a, b, c)
            torch.cuda.synchronize()
            err = rel_err(torch, c, ref)
            tol = TOL[str(c.dtype).removeprefix("torch.")]
            if not err < tol:
                out[name] = {"error": f"relative error {err:.3g} >= {tol}"}
                continue
            ms = timed(torch, lambda run=run, c=c: run(a, b, c))
        except Exception as exc:  # one tool failing leaves the others' figures
            out[name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            continue
        out[name] = {"ms": ms, "tflops": flops / ms / 1e9, "rel_err": err}
    base = out.get("cublas", {}).get("ms")
    for rec in out.values():
        if base and "ms" in rec:
            rec["of_cublas"] = base / rec["ms"]
    return out


def main() -> None:  # noqa: C901 -- the table and the record, one loop each
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default=",".join(map(str, SQUARE)))
    p.add_argument("--no-skinny", action="store_true")
    p.add_argument("--only", default="", help="comma-separated implementations")
    args = p.parse_args()

    import gemm_mma
    import gemm_wmma
    import torch

    def f32(m, n):
        return torch.empty((m, n), dtype=torch.float32, device="cuda")

    def bf16(m, n):
        return torch.empty((m, n), dtype=torch.bfloat16, device="cuda")

    def cujit_mma(a, b, c):
        gemm_mma.launch(a.view(torch.int16), b.view(torch.int16), c)

    def cujit_variant(variant):
        def run(a, b, c):
            gemm_mma.launch(a.view(torch.int16), b.view(torch.int16), c, variant=variant)

        return run

    def cujit_wmma(a, b, c):
        gemm_wmma.launch(a.view(torch.int16), b.view(torch.int16), c)

    impls = {
        "cublas": (bf16, lambda a, b, c: torch.matmul(a, b, out=c)),
        "triton": (bf16, triton_matmul()),
        "gemm_mma": (f32, cujit_mma),
        "gemm_wmma": (f32, cujit_wmma),
        **{
            f"gemm_mma[{name}]": (f32, cujit_variant(v))
            for name, v in gemm_mma.VARIANTS.items()
            if v != gemm_mma.DEFAULT
        },
    }
    if args.only:
        keep = {"cublas", *args.only.split(",")}
        impls = {k: v for k, v in impls.items() if k in keep}
    shapes = [(s, s, s) for s in map(int, args.sizes.split(","))]
    if not args.no_skinny:
        shapes += list(SKINNY)
    results, summary = {}, {}
    print(f"{'shape':>18} " + " ".join(f"{n[:22]:>22}" for n in impls))
    for m, n, k in shapes:
        key = f"{m}x{n}x{k}"
        res = bench_shape(torch, impls, m, n, k)
        results[key] = res
        cells = []
        for name in impls:
            r = res[name]
            if "ms" in r:
                cells.append(f"{r['tflops']:7.1f} TF {r.get('of_cublas', 0):5.2f}x")
            else:
                cells.append(f"{'error':>22}")
            if name != "cublas" and "of_cublas" in r:
                summary[f"{name}@{key}"] = round(r["of_cublas"], 4)
        print(f"{key:>18} " + " ".join(f"{c:>22}" for c in cells), flush=True)
    for key, res in results.items():
        for name, r in res.items():
            if "error" in r:
                print(f"{key} {name}: {r['error']}")
    doc = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "method": f"median of {REPS} x {PER_SAMPLE} launches after {WARMUP}, CUDA events",
        "results": results,
        "summary": summary,
    }
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    for folder in (
        ROOT / "bench" / "results",
        Path(os.environ["OUT"]) if "OUT" in os.environ else None,
    ):
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"gemm_bench-{stamp}.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
