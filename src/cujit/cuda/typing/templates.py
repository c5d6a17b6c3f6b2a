"""``cujit.cuda.typing.templates``: numba's ``AttributeTemplate``, the base of a
library's attribute typing (filed with ``cudadecl.registry.register_attr``; its
``resolve_<name>(self, type)`` methods give the type of ``value.name``)."""

from __future__ import annotations

from cujit.cuda.typing import signature


class AttributeTemplate:
    """Typing of attributes of values of ``key`` (a type, or a type class)."""

    key = None

    def __init__(self, context) -> None:
        self.context = context


__all__ = ["AttributeTemplate", "signature"]
