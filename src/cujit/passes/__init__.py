"""Stage 5, rewrite passes: typed IR -> typed IR, one module per pass.

``DEFAULT_PASSES`` is the pass list, in order; ``run_passes`` applies it.  Each
pass is a plain function ``Function -> Function`` whose module docstring shows
what it does on a small example.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cujit.ir import Function
from cujit.passes.asserts import drop_asserts
from cujit.passes.constfold import fold_constants
from cujit.passes.dce import eliminate_dead_code, eliminate_dead_code_keeping_variables
from cujit.passes.inline import inline_requested, inline_requested_keep_raise
from cujit.passes.range_versions import version_range_loops
from cujit.passes.simplify import merge_blocks

Pass = Callable[[Function], Function]

# Folding turns constant branches into jumps, DCE then drops the blocks no
# longer reached (and the PyObject constants infer left behind), and merging
# joins the straight-line chains that remain.
# Device functions that ask to be inlined are inlined first, so the rest cleans up.
_CLEANUP: tuple[Pass, ...] = (fold_constants, eliminate_dead_code, merge_blocks)
DEFAULT_PASSES: tuple[Pass, ...] = (inline_requested_keep_raise, *_CLEANUP)
# Without debug mode an ``assert`` compiles to nothing (numba's default): its check
# goes first, so the rest of the list cleans up after it.
# A release build also versions range loops on the sign of their start (their copy for
# a non-negative start indexes arrays without wrapping negative indices).
RELEASE_PASSES: tuple[Pass, ...] = (
    drop_asserts,
    inline_requested,
    *_CLEANUP,
    version_range_loops,
)
# Debug mode keeps its asserts, and what every Python variable holds, even unread:
# the debugger prints ``z`` of ``z = x == y``.
DEBUG_PASSES: tuple[Pass, ...] = (
    inline_requested_keep_raise,
    fold_constants,
    eliminate_dead_code_keeping_variables,
    merge_blocks,
)


def run_passes(fn: Function, passes: Sequence[Pass] = DEFAULT_PASSES) -> Function:
    """``fn`` rewritten by each pass of ``passes`` in turn."""
    for p in passes:
        fn = p(fn)
    return fn


__all__ = [
    "DEBUG_PASSES",
    "DEFAULT_PASSES",
    "RELEASE_PASSES",
    "drop_asserts",
    "eliminate_dead_code",
    "eliminate_dead_code_keeping_variables",
    "fold_constants",
    "merge_blocks",
    "run_passes",
    "version_range_loops",
]
