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
  (``codegen/folding.drop_unread_chains``), off = the chains kept;
- ``values``: ``ir.map_values`` making one copy of an op for its operands and result
  (irgen's renumbering), off = a copy for each;
- ``gcpause``: a kernel holding the collector's pause until its specialisation lets go of
  stages 1-3's outputs (``dispatcher.Kernel._compile``), off = the pause ending with
  ``compile_kernel`` (no stage of its own: the whole compile is the figure).

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
import types as pytypes

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "tests"), os.path.join(HERE, "..", "src")]

import numpy as np  # noqa: E402
from kernels import CASES  # noqa: E402
from launch_bench import WARM_KERNELS, renamed  # noqa: E402
from llvmlite import ir as ll  # noqa: E402

import cujit.codegen.module as codegen_module  # noqa: E402
import cujit.dispatcher as dispatcher  # noqa: E402
import cujit.infer.driver as infer_driver  # noqa: E402
import cujit.ir.core as ir_core  # noqa: E402
from cujit import cuda  # noqa: E402
from cujit.codegen.folding import FoldingBuilder  # noqa: E402
from cujit.ir.core import _with, map_operands  # noqa: E402  (names _two_copies reads)
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


def _two_copies(op, fn):
    """``map_values`` as it was: ``map_operands``' copy, then one more for the result.
    Its code runs as ``map_values``' own, whose globals are ``cujit.ir.core``'s: the
    names it reads are that module's."""
    op = map_operands(op, fn)
    if op.result is not None:
        result = fn(op.result)
        if result is not op.result:
            op = _with(op, {"result": result})
    return op


@contextlib.contextmanager
def _values_off():
    # Modules import map_values by name: its code is swapped, not the module's attribute.
    function, code = ir_core.map_values, ir_core.map_values.__code__
    function.__code__ = _two_copies.__code__
    try:
        yield
    finally:
        function.__code__ = code


def _gcpause_off():
    return _patched(dispatcher, "gcpause", pytypes.SimpleNamespace(paused=contextlib.nullcontext))


CHANGES = {  # name: (the change turned off, the stage it is in, or None)
    "fold": (_fold_off, "llvm"),
    "sweep": (_sweep_off, "typed"),
    "chains": (_chains_off, "llvm"),
    "values": (_values_off, "ir"),
    "gcpause": (_gcpause_off, None),
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
                got.setdefault(f"{label} stage", []).append(times[stage] if stage else total)
                got.setdefault(f"{label} toolchain", []).append(times["ptx"] + times["cubin"])
                got[f"{label} bytes"] = [len(spec.result.outputs["llvm"])]

        def ms(key: str, got=got) -> float:
            return 1e3 * statistics.median(got[key])

        paired = statistics.median(a / b for a, b in zip(got["on"], got["off"], strict=True))
        print(
            f"{name:22s} compile {ms('on'):6.1f} / {ms('off'):6.1f} ms (paired {paired:.3f})"
            f"  {stage or 'compile'} {ms('on stage'):5.2f} / {ms('off stage'):5.2f}"
            f"  toolchain {ms('on toolchain'):6.1f} / {ms('off toolchain'):6.1f}"
            f"  IR {got['on bytes'][0]} / {got['off bytes'][0]} bytes   (on / off)"
        )


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CHANGES:
        raise SystemExit(f"usage: compile_ab.py {{{'|'.join(CHANGES)}}} [ROUNDS]")
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 21)
