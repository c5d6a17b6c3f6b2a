"""``cujit.cuda.cudadecl``: numba.cuda.cudadecl's ``registry`` (and its ``register``,
``register_attr``, ``register_global``), through which a library files typing
templates in cujit's extension tables (``cujit.cuda.typing.templates.Registry``)."""

from __future__ import annotations

from cujit.cuda.typing.templates import Registry

registry = Registry("cudadecl")
register = registry.register
register_attr = registry.register_attr
register_global = registry.register_global

__all__ = ["register", "register_attr", "register_global", "registry"]
