"""``cujit.cuda.imputils``: numba's ``imputils.Registry`` (``numba.core.imputils``,
``numba.cuda.core.imputils``) over cujit's extension API.

A registry's ``lower(func, *argtys)``, ``lower_cast(fromty, toty)``,
``lower_getattr(type, attr)``, ``lower_getattr_generic(type)`` and
``lower_constant(type)`` file their implementations in cujit's tables at once
(``cujit.extending``), and the registry lists them as numba's does (``functions``,
``getattrs``, ``casts``, ``constants``).  ``lower_setattr`` is listed only: kernels do
not assign a library value's attributes.
"""

from __future__ import annotations

from typing import Callable

from cujit import extending


class Registry:
    """numba's registry of implementations (see the module's docstring)."""

    def __init__(self, name: str = "unspecified") -> None:
        self.name = name
        self.functions: list[tuple] = []
        self.getattrs: list[tuple] = []
        self.setattrs: list[tuple] = []
        self.casts: list[tuple] = []
        self.constants: list[tuple] = []

    def lower(self, func, *argtys) -> Callable:
        """``impl(context, builder, sig, args)`` for calls of ``func`` with ``argtys``."""

        def decorate(impl: Callable) -> Callable:
            extending.lower_builtin(func, *argtys)(impl)
            self.functions.append((impl, func, argtys))
            return impl

        return decorate

    def lower_cast(self, fromty, toty) -> Callable:
        """``impl(context, builder, fromty, toty, value)``: a conversion."""

        def decorate(impl: Callable) -> Callable:
            extending.lower_cast(fromty, toty)(impl)
            self.casts.append((impl, (fromty, toty)))
            return impl

        return decorate

    def lower_getattr(self, ty, attr) -> Callable:
        """``impl(context, builder, type, value)`` for ``value.attr`` (``attr`` None:
        ``lower_getattr_generic``)."""
        if attr is None:
            return self.lower_getattr_generic(ty)
        typeclass = ty if isinstance(ty, type) else type(ty)

        def decorate(impl: Callable) -> Callable:
            extending.lower_attr(typeclass, attr)(impl)
            self.getattrs.append((impl, attr, (ty,)))
            return impl

        return decorate

    def lower_getattr_generic(self, ty) -> Callable:
        """``impl(context, builder, type, value, attr)`` for the attributes of ``ty``'s
        values no ``lower_getattr`` builds."""
        typeclass = ty if isinstance(ty, type) else type(ty)

        def decorate(impl: Callable) -> Callable:
            extending.lower_getattr_generic(typeclass)(impl)
            self.getattrs.append((impl, None, (ty,)))
            return impl

        return decorate

    def lower_constant(self, ty) -> Callable:
        """``impl(context, builder, type, pyval)``: the value of a library's object a
        kernel names (its type a ``ty``)."""

        def decorate(impl: Callable) -> Callable:
            extending.lower_constant(ty)(impl)
            self.constants.append((impl, (ty,)))
            return impl

        return decorate

    def lower_setattr(self, ty, attr) -> Callable:
        """Listed only (see the module's docstring)."""
        return self._listed(self.setattrs, (ty, attr))

    def lower_setattr_generic(self, ty) -> Callable:
        return self.lower_setattr(ty, None)

    def _listed(self, entries: list, what) -> Callable:
        def decorate(impl: Callable) -> Callable:
            entries.append((impl, what))
            return impl

        return decorate


builtin_registry = Registry("builtin_registry")
lower_builtin = builtin_registry.lower
lower_cast = builtin_registry.lower_cast
lower_getattr = builtin_registry.lower_getattr
lower_getattr_generic = builtin_registry.lower_getattr_generic
lower_constant = builtin_registry.lower_constant

__all__ = [
    "Registry",
    "builtin_registry",
    "lower_builtin",
    "lower_cast",
    "lower_constant",
    "lower_getattr",
    "lower_getattr_generic",
]
