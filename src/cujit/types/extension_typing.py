"""Casts and function templates: the tables of a library's conversions and typings.

Two more tables of the extension API (``cujit.extending`` fills them; the others are in
``types/extension.py``):

- ``CASTS``: ``[(from spec, to spec, impl)]``, newest first: ``impl(context, builder,
  fromty, toty, value)`` converts a value of a type matching the first spec to one
  matching the second (a spec is a type, or a type class such as ``types.Any``).
  Type inference inserts the cast wherever a value meets a type it is not of: a
  template's or intrinsic's argument, a return value, a branch merge, a store into a
  typed slot;
- ``FUNCTION_TEMPLATES``: a Python callable (a library's function, ``operator.add``...)
  -> its typing templates, newest first: classes in numba's shape (``cases``: a list of
  signatures; ``generic(self, args, kws)``: a signature or None; or ``generic(self)``
  returning a typer for ``CallableTemplate``), instantiated with a typing context.

``GETATTR_GENERIC``: a type class -> ``impl(context, builder, type, value, attr)``, the
code of the attributes of its values that templates type but no ``lower_attr`` builds;
``CONSTANTS``: a type class -> ``impl(context, builder, type, pyval)``, the value of a
Python object of that type a kernel names (a global such as cuDF's ``NA``).
"""

from __future__ import annotations

from typing import Callable

from cujit.types.core import Type

CASTS: list[tuple[object, object, Callable]] = []
FUNCTION_TEMPLATES: dict[object, list[type]] = {}
GETATTR_GENERIC: dict[type, Callable] = {}
CONSTANTS: dict[type, Callable] = {}


def matches(spec, t: Type) -> bool:
    """Whether type ``t`` matches an argument spec: a type class (``types.Integer``,
    ``types.Any``, a library's class) by ``isinstance``, a type by equality."""
    if isinstance(spec, type):
        return isinstance(t, spec)
    return spec == t


def file_cast(fromty, toty, impl: Callable) -> None:
    """File a cast (the newest is found first)."""
    CASTS.insert(0, (fromty, toty, impl))


def _distance(spec, t: Type) -> int:
    """How closely ``spec`` names ``t``'s type: 0 for the type itself, then the class's
    place along ``type(t)``'s MRO; a kind (``types.Number``) after classes, ``Any`` last."""
    if not isinstance(spec, type):
        return 0
    mro = type(t).__mro__
    if spec in mro:
        return 1 + mro.index(spec)
    return 1000 if spec.__name__ == "Any" else 100


def find_cast(src: Type, dst: Type) -> Callable | None:
    """The implementation of the cast from ``src`` to ``dst`` (the types a library
    sees: its own types, not their Records), or None where none is filed: of the
    casts matching, the one whose specs name the types most closely (as numba
    chooses), the newest among equals."""
    best, found = None, None
    for fromty, toty, impl in CASTS:
        if matches(fromty, src) and matches(toty, dst):
            score = _distance(fromty, src) + _distance(toty, dst)
            if best is None or score < best:
                best, found = score, impl
    return found


def file_template(key, template: type) -> None:
    """File a typing template for calls of ``key`` (the newest is tried first)."""
    entries = FUNCTION_TEMPLATES.setdefault(key, [])
    if template not in entries:
        entries.insert(0, template)


def templates_of(fn) -> list[type]:
    """The templates filed for ``fn`` (an empty list for an unhashable callable)."""
    try:
        return FUNCTION_TEMPLATES.get(fn, [])
    except TypeError:
        return []


def _by_class(table: dict, t: Type) -> Callable | None:
    for base in type(t).__mro__:
        impl = table.get(base)
        if impl is not None:
            return impl
    return None


def getattr_generic(t: Type) -> Callable | None:
    """The generic attribute implementation filed for ``t``'s class (or a base)."""
    return _by_class(GETATTR_GENERIC, t)


def library_constants() -> bool:
    """Whether any library filed a ``lower_constant`` implementation."""
    return bool(CONSTANTS)


def constant_lowering(t: Type) -> Callable | None:
    """The ``lower_constant`` implementation filed for ``t``'s class (or a base)."""
    return _by_class(CONSTANTS, t)
