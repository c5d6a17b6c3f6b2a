"""``cujit.cuda.cudaimpl``: numba.cuda.cudaimpl's ``lower`` (and ``lower_builtin``),
filing a call's implementation in cujit's extension tables (``cujit.extending``)."""

from cujit.extending import lower, lower_builtin

__all__ = ["lower", "lower_builtin"]
