"""numba's compile dumps (``DUMP_BYTECODE``, ``DUMP_CFG``, ``DUMP_IR``, ``DUMP_LLVM``,
``DUMP_ASSEMBLY``), printing cujit's own stage outputs under numba's headings.

After a kernel compiles, ``print_dumps`` writes to ``sys.stdout``, in stage order, what
each requested dump names:

- ``bytecode``: the CPython instructions stage 1 reads (``OPNAME(arg=N, lineno=L)``,
  as numba lists them), then stage 1's decoded listing;
- ``cfg``: stage 2's blocks, their adjacency lists and each block's dominators;
- ``ir``: stage 3's untyped IR (constants show their Python type:
  ``const(float, 1.5)``);
- ``llvm``: stage 6's LLVM IR; ``asm``: the PTX (the host assembly on the CPU target).

A kernel loaded from the disk cache went through no stage here, and prints nothing.
"""

from __future__ import annotations

import dis
import sys
from collections.abc import Callable

from cujit.bytecode import format_bytecode
from cujit.cfg import CFG, format_cfg
from cujit.ir import Const, Function
from cujit.ir.printer import format_op

WIDTH = 80


def heading(title: str) -> str:
    """numba's dump heading: the title centred in a line of dashes."""
    return title.center(WIDTH, "-")


def raw_bytecode(pyfunc) -> str:
    """The function's CPython instructions, one a line: offset, ``OPNAME(arg=, lineno=)``."""
    lines = []
    for ins in dis.get_instructions(pyfunc):
        line = ins.positions.lineno if ins.positions else None
        lines.append(f"{ins.offset:>6}\t{ins.opname}(arg={ins.arg}, lineno={line})")
    return "\n".join(lines)


def dominators(cfg: CFG) -> dict[int, frozenset[int]]:
    """Each block's dominators (itself included), by the iterative data-flow rule."""
    ids = [b.id for b in cfg.blocks]
    preds = {b.id: b.preds for b in cfg.blocks}
    dom = {b: frozenset(ids) for b in ids}
    dom[ids[0]] = frozenset({ids[0]})
    changed = True
    while changed:
        changed = False
        for b in ids[1:]:
            known = [dom[p] for p in preds[b] if p in dom]
            new = frozenset.intersection(*known) | {b} if known else frozenset({b})
            if new != dom[b]:
                dom[b], changed = new, True
    return dom


def cfg_dump(cfg: CFG) -> str:
    lines = [format_cfg(cfg), "CFG adjacency lists:"]
    lines += [f"  block{b.id}: {[f'block{s}' for s in b.succs]}" for b in cfg.blocks]
    lines.append("CFG dominators:")
    for block, doms in sorted(dominators(cfg).items()):
        lines.append(f"  block{block}: {[f'block{d}' for d in sorted(doms)]}")
    return "\n".join(lines)


def _op_text(op) -> str:
    if isinstance(op, Const) and isinstance(op.value, (bool, int, float, complex, str)):
        return f"{op.result} = const({type(op.value).__name__}, {op.value!r})"
    return format_op(op)


def ir_dump(fn: Function) -> str:
    args = ", ".join(f"{v} {n}" for v, n in zip(fn.args, fn.arg_names, strict=True))
    lines = [f"func {fn.name}({args})"]
    for block in fn.blocks:
        params = "(" + ", ".join(map(str, block.params)) + ")" if block.params else ""
        lines.append(f"block{block.id}{params}:")
        lines += ["  " + _op_text(op) for op in (*block.ops, block.term)]
    return "\n".join(lines)


def print_dumps(name: str, pyfunc, outputs: dict, stages: frozenset, asm: Callable) -> None:
    """Print the dumps of ``stages`` (``numba_config.dumps()``) of one compiled kernel
    ``name``: ``outputs`` are its stage outputs, ``asm()`` gives its assembly."""
    if not stages or "bytecode" not in outputs:  # nothing asked, or a disk-cache hit
        return
    parts = []
    if "bytecode" in stages:
        parts += [heading(f"BYTECODE DUMP: {name}"), raw_bytecode(pyfunc)]
        parts.append(format_bytecode(outputs["bytecode"]))
    if "cfg" in stages:
        parts += [heading(f"CFG DUMP: {name}"), cfg_dump(outputs["cfg"])]
    if "ir" in stages:
        parts += [heading(f"IR DUMP: {name}"), ir_dump(outputs["ir"])]
    if "llvm" in stages and outputs.get("llvm") is not None:
        parts += [heading(f"LLVM DUMP {name}"), str(outputs["llvm"])]
    if "asm" in stages:
        parts += [heading(f"ASSEMBLY {name}"), asm()]
    if parts:
        sys.stdout.write("\n".join(parts) + "\n" + "-" * WIDTH + "\n")
