"""numba.cuda's warning and error classes, as cujit gives them (``numba.cuda.core.errors``
and ``numba.cuda.errors`` in numba)."""

from cujit.diagnostics import (  # noqa: F401
    CompileError,
    CujitError,
    LaunchError,
    LoweringError,
    NumbaDebugInfoWarning,
    NumbaInvalidConfigWarning,
    NumbaPerformanceWarning,
    NumbaWarning,
    TypingError,
)
