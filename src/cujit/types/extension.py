"""Extension types: a library's own types, filed in cujit's tables.

A library subclasses ``cujit.types.Type`` and fills these tables (through
``cujit.extending``, or numba's names for it in ``cujit.cuda.extending``):

- ``TYPEOF``: Python class -> ``fn(value, context)`` giving the cujit type of a value of
  that class (looked up along the value's MRO), consulted by ``types.typeof``;
- ``MODELS``: type class -> data-model class, instantiated once per type as
  ``model(manager, type)``: a ``StructModel`` lists named members with their types, an
  ``OpaqueModel`` is a pointer;
- ``ATTRIBUTES``: (type class, attribute) -> the struct member it reads;
- ``CALLABLES``: a Python callable -> its typer factory ``fn(context)``, returning
  ``typer(*arg_types)`` that gives the call's result type (or None: no match);
- ``LOWERINGS``: a Python callable -> ``[(argument type specs, implementation)]``, the
  implementation receiving ``(context, builder, signature, args)`` with an llvmlite
  IR builder;
- ``OVERLOADS``: a Python function -> its typing functions ``fn(*arg_types)``, each
  returning a pure-Python implementation for those types (compiled as a device
  function) or None (those for the CUDA target first, then the generic ones);
- ``METHODS`` and ``ATTRIBUTE_OVERLOADS``: (type class, name) -> typing functions as
  ``OVERLOADS`` holds, for ``value.name(...)`` (the value the first argument) and for
  ``value.name``;
- ``ATTRIBUTE_TEMPLATES``: classes whose ``resolve_<name>(self, type)`` types
  ``value.name`` for values of their ``key`` type, and ``ATTRIBUTE_LOWERINGS``:
  (type class, name) -> ``impl(context, builder, type, value)`` building it.

A struct model whose members are scalars (or records) is laid out as NumPy lays out an
aligned structured dtype: ``record_of(type)`` is that Record, the type's bytes in memory.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Callable

from cujit.types.core import Type

TYPEOF: dict[type, Callable] = {}
MODELS: dict[type, type] = {}
ATTRIBUTES: dict[tuple[type, str], str] = {}
CALLABLES: dict[object, Callable] = {}
LOWERINGS: dict[object, list[tuple[tuple, Callable]]] = {}
OVERLOADS: dict[object, list[Callable]] = {}
METHODS: dict[tuple[type, str], list[Callable]] = {}
ATTRIBUTE_OVERLOADS: dict[tuple[type, str], list[Callable]] = {}
ATTRIBUTE_TEMPLATES: list[type] = []
ATTRIBUTE_LOWERINGS: dict[tuple[type, str], Callable] = {}
# A library's intrinsic object -> its ``defn(context, *arg_types)`` giving
# ``(signature, codegen)``.
INTRINSICS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# (function, id of its typing function) filed with ``prefer_literal``: constants'
# literal types are tried first.
PREFER_LITERAL: set[tuple[object, int]] = set()
# ... filed with ``strict=False``: the implementation's signature is not checked.
NOT_STRICT: set[tuple[object, int]] = set()
# Typing functions filed for the CUDA target (they come before the generic ones).
CUDA_FIRST: set[int] = set()

_MODEL_CACHE: dict[Type, object] = {}


class DataModel:
    """Base of the data models: how values of ``fe_type`` are represented."""

    def __init__(self, dmm, fe_type: Type) -> None:
        self._dmm = dmm
        self.fe_type = fe_type


class StructModel(DataModel):
    """A struct of named members: ``members`` is ``[(name, type), ...]``."""

    def __init__(self, dmm, fe_type: Type, members) -> None:
        from cujit.types.convert import to_type

        super().__init__(dmm, fe_type)
        self._members = tuple((str(n), to_type(t)) for n, t in members)

    @property
    def members(self) -> tuple[tuple[str, Type], ...]:
        return self._members

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self._members)

    def get_member_fe_type(self, name: str) -> Type:
        for n, t in self._members:
            if n == name:
                return t
        raise KeyError(f"{self.fe_type} has no member {name!r}")

    def get_field_position(self, name: str) -> int:
        return self.field_names.index(name)


class OpaqueModel(DataModel):
    """A value cujit does not look into: a pointer-sized handle."""


class ModelManager:
    """What a model's constructor receives as ``dmm``: ``lookup(type)`` finds a model."""

    def lookup(self, fe_type: Type) -> DataModel:
        return model_of(fe_type)

    __getitem__ = lookup


MANAGER = ModelManager()


def _find(table: dict, cls: type):
    for base in cls.__mro__:
        entry = table.get(base)
        if entry is not None:
            return entry
    return None


def typeof_value(value, context=None) -> Type | None:
    """The type the TYPEOF table gives ``value`` (None where no entry answers)."""
    fn = _find(TYPEOF, type(value))
    return None if fn is None else fn(value, context)


def model_of(fe_type: Type) -> DataModel:
    """The data model of an extension type (a KeyError where none is registered)."""
    model = _MODEL_CACHE.get(fe_type)
    if model is None:
        model_cls = _find(MODELS, type(fe_type))
        if model_cls is None:
            raise KeyError(f"no data model is registered for {fe_type}")
        model = _MODEL_CACHE[fe_type] = model_cls(MANAGER, fe_type)
    return model


def is_extension_type(t: object) -> bool:
    """Whether ``t`` is a library's type with a registered data model."""
    return isinstance(t, Type) and _find(MODELS, type(t)) is not None


def library_types(a: Type, b: Type) -> bool:
    """Whether either of two types (as held) is a library's: a conversion between them
    is one of the library's casts."""
    if not MODELS:
        return False
    return any(getattr(x, "origin", None) is not None or is_extension_type(x) for x in (a, b))


def attribute_member(t: Type, attr: str) -> str | None:
    """The struct member attribute ``attr`` of type ``t`` reads, if one is declared."""
    for base in type(t).__mro__:
        member = ATTRIBUTES.get((base, attr))
        if member is not None:
            return member
    return None


def record_of(fe_type: Type):
    """The Record laying out a struct-model type's members as an aligned structured
    dtype would (its bytes in memory); a TypeError for other models."""
    import numpy as np

    from cujit.types.convert import from_dtype

    model = model_of(fe_type)
    if not isinstance(model, StructModel):
        raise TypeError(f"{fe_type} has no struct data model: it has no fields")
    formats = []
    for name, t in model.members:
        dtype = getattr(t, "dtype", None)
        if not isinstance(dtype, np.dtype):
            raise TypeError(f"member {name!r} of {fe_type} is {t}, which has no layout")
        formats.append(dtype)
    dt = np.dtype({"names": list(model.field_names), "formats": formats}, align=True)
    return dataclasses.replace(from_dtype(dt), origin=fe_type)


def storage(t: Type) -> Type:
    """How values of ``t`` are held: a struct-model extension type as its Record (its
    bytes, as kernels hold records), any other type as itself."""
    if is_extension_type(t) and isinstance(model_of(t), StructModel):
        return record_of(t)
    return t


def call_typer(func, arg_types: tuple[Type, ...]) -> Type | None:
    """The result type the CALLABLES table gives a call of ``func`` (None: no entry, or
    the typer declined these argument types)."""
    factory = CALLABLES.get(func)
    if factory is None:
        return None
    typer = factory(None)
    return typer(*arg_types)


def find_lowering(func, arg_types: tuple[Type, ...]) -> Callable | None:
    """The implementation LOWERINGS holds for a call of ``func`` with these types."""
    for specs, impl in LOWERINGS.get(func, ()):
        if len(specs) == len(arg_types) and all(
            _matches(spec, t) for spec, t in zip(specs, arg_types, strict=True)
        ):
            return impl
    return None


def _matches(spec, t: Type) -> bool:
    if isinstance(spec, type):  # a type class (types.Integer, a library's Type class)
        return isinstance(t, spec)
    return spec == t


def file_overload(entries: list, typing_fn: Callable, cuda_only: bool) -> None:
    """Add ``typing_fn`` to a list of typing functions: the newest first among those
    of its kind, the CUDA target's ahead of the generic ones."""
    if cuda_only:
        CUDA_FIRST.add(id(typing_fn))
        entries.insert(0, typing_fn)
        return
    at = sum(1 for fn in entries if id(fn) in CUDA_FIRST)
    entries.insert(at, typing_fn)


def by_type_class(table: dict, t: Type, name: str):
    """The entry ``table`` holds for (a class along ``type(t)``'s MRO, ``name``)."""
    for base in type(t).__mro__:
        entry = table.get((base, name))
        if entry is not None:
            return entry
    return None


def attribute_template_type(t: Type, name: str) -> Type | None:
    """The type an attribute template gives ``t.name`` (None: no template answers)."""
    for template in reversed(ATTRIBUTE_TEMPLATES):
        key = getattr(template, "key", None)
        if key != t and not (isinstance(key, type) and isinstance(t, key)):
            continue
        resolve = getattr(template, "resolve_" + name, None)
        result = resolve(template(None), t) if resolve is not None else None
        generic = getattr(template, "generic_resolve", None)
        if result is None and generic is not None:  # numba's fallback for any name
            result = generic(template(None), t, name)
        if result is not None:
            return result
    return None
