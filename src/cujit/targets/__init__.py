"""Compilation targets: what stages 6-7 need to know about a machine, as tables.

A :class:`Target` (defined beside the code generation that reads it,
``cujit.codegen.target``) is plain data: the LLVM triple and data layout, the address
spaces, the intrinsic table (``Intrinsic.name`` -> lowering function) and the
math table (``(math name, float type name)`` -> external function).  Code
generation (:mod:`cujit.codegen`) looks things up in these tables and never
branches on which target it serves; stages 1-5 do not see targets at all.

    from cujit.targets.cuda import CUDA_TARGET
    module = lower_to_llvm(fn, CUDA_TARGET)
"""

from __future__ import annotations

from cujit.codegen.target import MathFn, Target

__all__ = ["MathFn", "Target"]
