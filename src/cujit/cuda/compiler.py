"""``cujit.cuda.compiler``: numba.cuda.compiler's names for cujit's ahead-of-time compile
functions, so ``from numba.cuda.compiler import compile_ptx`` ports unchanged.  The
implementation is ``cujit.compile_api``; numba-cuda's compiler internals (its pipeline
and pass classes) have no counterpart here."""

from cujit.compile_api import (
    compile,
    compile_all,
    compile_for_current_device,
    compile_ptx,
    compile_ptx_for_current_device,
)

__all__ = [
    "compile",
    "compile_all",
    "compile_for_current_device",
    "compile_ptx",
    "compile_ptx_for_current_device",
]
