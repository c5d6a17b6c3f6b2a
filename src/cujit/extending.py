"""The extension API: how a library adds its own types and what kernels do with them.

Each function here files an entry in the tables of ``cujit.types.extension`` (nothing
is registered anywhere else):

- ``typeof_impl.register(cls)(fn)``: ``fn(value, context)`` types values of ``cls``;
- ``register_model(type_class)(model_class)``: the data model of a type class
  (``models.StructModel`` with ``[(name, type), ...]`` members, or ``models.OpaqueModel``);
- ``make_attribute_wrapper(type_class, member, attr)``: ``value.attr`` reads ``member``;
- ``type_callable(func)(typer_factory)``: how a call of ``func`` in a kernel types;
- ``lower_builtin(func, *arg_specs)(impl)``: ``impl(context, builder, sig, args)`` builds
  the call's value with an llvmlite builder (``cgutils.create_struct_proxy`` helps);
- ``overload(func)(typing_fn)``: ``typing_fn(*arg_types)`` returns a pure-Python
  implementation of ``func`` for those types, which kernels call as a device function.

These are numba's names (``numba.cuda.extending`` maps here under the drop-in).
"""

from __future__ import annotations

import types as pytypes
from typing import Callable

from cujit.types import extension
from cujit.types.core import Type


class _TypeofTable:
    """``typeof_impl``: ``register(cls)`` files a typeof function for a Python class;
    calling it types a value through the table (None where no entry answers)."""

    def register(self, cls: type) -> Callable:
        if not isinstance(cls, type):
            raise TypeError(f"typeof_impl.register takes a class, not {cls!r}")

        def decorate(fn: Callable) -> Callable:
            extension.TYPEOF[cls] = fn
            return fn

        return decorate

    def __call__(self, value, context=None) -> Type | None:
        return extension.typeof_value(value, context)


typeof_impl = _TypeofTable()


def _type_class(typeclass, what: str) -> type:
    if not isinstance(typeclass, type) or not issubclass(typeclass, Type):
        raise TypeError(f"{what} takes a subclass of cujit.types.Type, not {typeclass!r}")
    return typeclass


def register_model(typeclass: type) -> Callable:
    """Decorate a data-model class as the model of ``typeclass``'s types."""
    _type_class(typeclass, "register_model")

    def decorate(model_cls: type) -> type:
        if not (isinstance(model_cls, type) and issubclass(model_cls, extension.DataModel)):
            raise TypeError(f"{model_cls!r} is not a data model (models.StructModel...)")
        extension.MODELS[typeclass] = model_cls
        return model_cls

    return decorate


models = pytypes.SimpleNamespace(
    DataModel=extension.DataModel,
    StructModel=extension.StructModel,
    OpaqueModel=extension.OpaqueModel,
    register_default=register_model,
)


def make_attribute_wrapper(typeclass: type, struct_attr: str, python_attr: str) -> None:
    """Let ``value.python_attr`` read struct member ``struct_attr`` (read-only)."""
    _type_class(typeclass, "make_attribute_wrapper")
    extension.ATTRIBUTES[(typeclass, str(python_attr))] = str(struct_attr)


def type_callable(func) -> Callable:
    """Decorate ``factory(context)`` returning ``typer(*arg_types)`` as the typing of
    calls of ``func`` in kernels (the typer returns the result type, or None)."""
    if not callable(func):
        raise TypeError(f"type_callable takes a callable, not {func!r}")

    def decorate(factory: Callable) -> Callable:
        extension.CALLABLES[func] = factory
        return factory

    return decorate


def lower_builtin(func, *arg_specs) -> Callable:
    """Decorate ``impl(context, builder, sig, args)`` as the code of a call of ``func``
    whose arguments match ``arg_specs`` (types, or type classes such as
    ``types.Integer``)."""

    def decorate(impl: Callable) -> Callable:
        extension.LOWERINGS.setdefault(func, []).insert(0, (tuple(arg_specs), impl))
        return impl

    return decorate


lower = lower_builtin


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False, **kw):
    """Decorate ``typing_fn(*arg_types)`` as a device implementation of ``func``: where
    a kernel calls ``func``, it is called with the argument types and returns the
    Python function to compile for them (None: not for these types).  numba's other
    options are accepted; cujit compiles every implementation the same way."""
    if not callable(func):
        raise TypeError(f"overload takes a callable, not {func!r}")

    def decorate(typing_fn: Callable) -> Callable:
        extension.OVERLOADS.setdefault(func, []).insert(0, typing_fn)
        return typing_fn

    return decorate


__all__ = [
    "lower",
    "lower_builtin",
    "make_attribute_wrapper",
    "models",
    "overload",
    "register_model",
    "type_callable",
    "typeof_impl",
]
