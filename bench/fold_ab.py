"""In-process A/B of stage 6's ``extractvalue`` folding (``codegen/folding.py``): each
kernel of ``launch_bench.WARM_KERNELS`` compiled to a cubin in rounds that alternate
``FoldingBuilder`` with llvmlite's plain ``extract_value`` (which of the two goes first
alternates too), a new renamed function each time.  No GPU needed.

    python3 bench/fold_ab.py [ROUNDS]

Prints, per kernel, the medians of the whole compile, of stage 6 (``llvm``) and of
libNVVM + nvJitLink (``ptx`` + ``cubin``) under each builder, the median of the rounds'
paired ratios of the whole compile, and the LLVM IR's size under each.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "tests"), os.path.join(HERE, "..", "src")]

import numpy as np  # noqa: E402
from kernels import CASES  # noqa: E402
from launch_bench import WARM_KERNELS, renamed  # noqa: E402
from llvmlite import ir as ll  # noqa: E402

from cujit import cuda  # noqa: E402
from cujit.codegen.folding import FoldingBuilder  # noqa: E402
from cujit.types import typeof  # noqa: E402

BUILDERS = {"fold": FoldingBuilder.extract_value, "plain": ll.IRBuilder.extract_value}


def main(rounds: int) -> None:
    by_name = {c.name: c for c in CASES}
    try:
        for name in WARM_KERNELS:
            case = by_name[name]
            host_args, *_ = case.setup(np.random.default_rng(0))
            types = tuple(typeof(a) for a in host_args)
            cuda.jit(renamed(case.kernel.py_func, "warm")).compile(types)
            got: dict[str, list] = {}
            for r in range(rounds):
                for label in ("fold", "plain") if r % 2 else ("plain", "fold"):
                    FoldingBuilder.extract_value = BUILDERS[label]
                    kernel = cuda.jit(renamed(case.kernel.py_func, label))
                    start = time.perf_counter()
                    spec = kernel.compile(types)
                    total = time.perf_counter() - start
                    times = spec.result.times
                    got.setdefault(label, []).append(total)
                    got.setdefault(f"{label} llvm", []).append(times["llvm"])
                    got.setdefault(f"{label} toolchain", []).append(times["ptx"] + times["cubin"])
                    got[f"{label} bytes"] = [len(spec.result.outputs["llvm"])]

            def ms(key: str, got=got) -> float:
                return 1e3 * statistics.median(got[key])

            paired = statistics.median(
                f / p for f, p in zip(got["fold"], got["plain"], strict=True)
            )
            print(
                f"{name:22s} compile {ms('fold'):6.1f} / {ms('plain'):6.1f} ms"
                f" (paired {paired:.3f})"
                f"  llvm {ms('fold llvm'):5.2f} / {ms('plain llvm'):5.2f}"
                f"  toolchain {ms('fold toolchain'):6.1f} / {ms('plain toolchain'):6.1f}"
                f"  IR {got['fold bytes'][0]} / {got['plain bytes'][0]} bytes   (fold / plain)"
            )
    finally:
        FoldingBuilder.extract_value = BUILDERS["fold"]


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 21)
