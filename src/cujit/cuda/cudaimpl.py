"""``cujit.cuda.cudaimpl``: numba.cuda.cudaimpl's ``lower`` (and ``lower_builtin``) and
``lower_attr``, filing implementations in cujit's extension tables (``cujit.extending``)."""

from cujit.extending import lower, lower_attr, lower_builtin

__all__ = ["lower", "lower_attr", "lower_builtin"]
