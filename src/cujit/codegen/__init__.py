"""Stage 6: typed IR -> LLVM IR (the NVVM dialect for the CUDA target) with llvmlite.

One module per construct: ``module`` (entry, kernel signature, op dispatch),
``scalars`` (constants, arithmetic, compares, casts), ``pyarith`` (Python's
``//``, ``%``, ``**`` and shifts), ``arrays`` (array values, indexing, tuples),
``control`` (blocks, phis, branches, range iteration), ``builtins`` (the
target-independent intrinsics), with ``lltypes`` and ``context`` under them.
Target-specific lowering comes from the target's tables (``cujit.targets``).
"""

from cujit.codegen.module import join_texts, kernel_symbol, llvm_text, lower_to_llvm, module_texts

__all__ = ["join_texts", "kernel_symbol", "llvm_text", "lower_to_llvm", "module_texts"]
