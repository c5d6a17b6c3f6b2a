"""Where a new kernel's front end (stages 1-6, to the LLVM text) spends its time, by a
sampling profile: each stage's share, and the share spent inside llvmlite (building and
printing the module) and inside ``dis`` (stage 1's decoding).  No GPU needed.

    pip install py-spy
    PYTHONPATH=src python3 tools/front_end_shares.py [KERNEL] [COMPILES]

KERNEL is one of tests/kernels.py's cases (default matmul_shared_tiles); the child
process compiles it COMPILES times (default 300), each a new renamed function, to the
LLVM text, under ``py-spy record`` at 2 kHz.  Shares are of the samples taken inside
``compile_kernel``; "other" is the rest of it (the warm-up's wait at the first compile,
the collector's pass when the compile's pause ends).
"""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# (a frame's function, the share it names); the first found from the stack's root wins
STAGES = (
    ("decode (", "bytecode"),
    ("build_cfg (", "cfg"),
    ("build_ir (", "ir"),
    ("infer_types (", "typed"),
    ("run_passes (", "passes"),
    ("lower_kernel (", "llvm: lowering"),
    ("module_texts (", "llvm: printing"),
)


def compile_loop(kernel: str, count: int) -> None:
    sys.path[:0] = [os.path.join(HERE, "..", d) for d in ("bench", "tests", "src")]
    import numpy as np
    from kernels import CASES
    from launch_bench import renamed

    from cujit import cuda
    from cujit.pipeline import compile_kernel
    from cujit.types import typeof

    case = {c.name: c for c in CASES}[kernel]
    host_args, *_ = case.setup(np.random.default_rng(0))
    types = tuple(typeof(a) for a in host_args)
    options = cuda.jit(case.kernel.py_func)._options()
    for _ in range(count):
        compile_kernel(renamed(case.kernel.py_func, "fe"), types, options, stop_after="llvm")


def shares(raw_path: str) -> tuple[int, collections.Counter, collections.Counter]:
    """(samples inside compile_kernel, samples per stage, samples per library)."""
    total, stage, library = 0, collections.Counter(), collections.Counter()
    with open(raw_path) as fh:
        for line in fh:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if "compile_kernel (" not in stack:
                continue
            n = int(count)
            total += n
            frames = stack.split(";")
            stage[
                next(
                    (s for key, s in STAGES for f in frames if f.startswith(key) and "cujit" in f),
                    "other",
                )
            ] += n
            for f in frames:
                if "llvmlite/" in f:
                    library["llvmlite"] += n
                    break
                if "(dis.py:" in f:
                    library["dis"] += n
                    break
    return total, stage, library


def main() -> None:
    kernel = sys.argv[1] if len(sys.argv) > 1 else "matmul_shared_tiles"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    spy = shutil.which("py-spy")
    if spy is None:
        raise SystemExit("py-spy is not installed: pip install py-spy")
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "samples.raw")
        child = [sys.executable, os.path.abspath(__file__), "--loop", kernel, str(count)]
        cmd = [spy, "record", "-r", "2000", "-f", "raw", "-o", raw, "--", *child]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        total, stage, library = shares(raw)
    if not total:
        raise SystemExit("no samples inside compile_kernel")
    print(f"{kernel}: {total} samples inside compile_kernel ({count} compiles to LLVM text)")
    for name, n in stage.most_common():
        print(f"  {name:16s} {100 * n / total:5.1f}%")
    for name in ("llvmlite", "dis"):
        print(f"  inside {name:9s} {100 * library[name] / total:5.1f}%")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--loop":
        compile_loop(sys.argv[2], int(sys.argv[3]))
    else:
        main()
