"""``cujit.cuda.cudaimpl``: numba.cuda.cudaimpl's ``registry`` (``registry.lower``...)
and its ``lower`` (also ``lower_builtin``), ``lower_attr``, ``lower_getattr_generic``,
``lower_cast`` and ``lower_constant``, filing implementations in cujit's extension
tables (``cujit.cuda.imputils.Registry``)."""

from cujit.cuda.imputils import Registry
from cujit.extending import lower_builtin

registry = Registry("cudaimpl")
# ``lower`` is cujit.extending's own function (the registry's ``lower`` does the same
# and lists what it files)
lower = lower_builtin
lower_attr = registry.lower_getattr
lower_getattr_generic = registry.lower_getattr_generic
lower_cast = registry.lower_cast
lower_constant = registry.lower_constant

__all__ = [
    "lower",
    "lower_attr",
    "lower_builtin",
    "lower_cast",
    "lower_constant",
    "lower_getattr_generic",
    "registry",
]
