"""In-process A/B of one change to the compile's own Python, on against off: each kernel
of ``launch_bench.WARM_KERNELS`` compiled to a cubin in rounds that alternate the two
(which goes first alternates too), a new renamed function each time.  No GPU needed.

    python3 bench/compile_ab.py CHANGE [ROUNDS]

CHANGE is one of ``CHANGES``:

- ``fold``: stage 6's ``extractvalue`` folding (``codegen/folding.FoldingBuilder``),
  off = llvmlite's plain ``extract_value``;
- ``sweep``: type inference keeping a clean sweep's blocks (``infer/driver._State.clean``),
  off = every kernel takes the final sweep;
- ``chains``: stage 6 dropping the unread ``insertvalue`` chains
  (``codegen/folding.drop_unread_chains``), off = the chains kept.

Prints, per kernel, the medians of the whole compile, of the stage the change is in and
of libNVVM + nvJitLink (``ptx`` + ``cubin``) with the change on and off, the median of
the rounds' paired ratios of the whole compile (on / off), and the LLVM IR's size.
"""

from __future__ import annotations

import contextlib
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

import cujit.codegen.module as codegen_module  # noqa: E402
import cujit.infer.driver as infer_driver  # noqa: E402
from cujit import cuda  # noqa: E402
from cujit.codegen.folding import FoldingBuilder  # noqa: E402
from cujit.types import typeof  # noqa: E402


@contextlib.contextmanager
def _patched(obj, name: str, value):
    saved = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, saved)


def _fold_off():
    return _patched(FoldingBuilder, "extract_value", ll.IRBuilder.extract_value)


def _sweep_off():
    settle = infer_driver._settle

    def final_sweep_always(fn, order, state):
        blocks = settle(fn, order, state)
        state.clean = False
        return blocks

    return _patched(infer_driver, "_settle", final_sweep_always)


def _chains_off():
    return _patched(codegen_module, "drop_unread_chains", lambda module: None)


CHANGES = {  # name: (the change turned off, the stage it is in)
    "fold": (_fold_off, "llvm"),
    "sweep": (_sweep_off, "typed"),
    "chains": (_chains_off, "llvm"),
}


def main(change: str, rounds: int) -> None:
    turn_off, stage = CHANGES[change]
    by_name = {c.name: c for c in CASES}
    for name in WARM_KERNELS:
        case = by_name[name]
        host_args, *_ = case.setup(np.random.default_rng(0))
        types = tuple(typeof(a) for a in host_args)
        cuda.jit(renamed(case.kernel.py_func, "warm")).compile(types)
        got: dict[str, list] = {}
        for r in range(rounds):
            for label in ("on", "off") if r % 2 else ("off", "on"):
                with turn_off() if label == "off" else contextlib.nullcontext():
                    kernel = cuda.jit(renamed(case.kernel.py_func, label))
                    start = time.perf_counter()
                    spec = kernel.compile(types)
                    total = time.perf_counter() - start
                times = spec.result.times
                got.setdefault(label, []).append(total)
                got.setdefault(f"{label} stage", []).append(times[stage])
                got.setdefault(f"{label} toolchain", []).append(times["ptx"] + times["cubin"])
                got[f"{label} bytes"] = [len(spec.result.outputs["llvm"])]

        def ms(key: str, got=got) -> float:
            return 1e3 * statistics.median(got[key])

        paired = statistics.median(a / b for a, b in zip(got["on"], got["off"], strict=True))
        print(
            f"{name:22s} compile {ms('on'):6.1f} / {ms('off'):6.1f} ms (paired {paired:.3f})"
            f"  {stage} {ms('on stage'):5.2f} / {ms('off stage'):5.2f}"
            f"  toolchain {ms('on toolchain'):6.1f} / {ms('off toolchain'):6.1f}"
            f"  IR {got['on bytes'][0]} / {got['off bytes'][0]} bytes   (on / off)"
        )


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CHANGES:
        raise SystemExit(f"usage: compile_ab.py {{{'|'.join(CHANGES)}}} [ROUNDS]")
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 21)
