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
  implementation of ``func`` for those types, which kernels call as a device function;
  ``overload_method`` and ``overload_attribute`` do the same for ``value.name(...)``
  and ``value.name`` of a type class's values;
- ``register_attr(template)`` and ``lower_attr(type_class, name)(impl)``: an attribute
  typed by a template's ``resolve_<name>`` and built by ``impl`` with a builder;
- ``lower_cast(fromty, toty)(impl)``: how a value converts between two types (one a
  library's), wherever kernels convert (``types/extension_typing.py``);
- ``register_template(template)``: a typing template (numba's shapes: ``cases``, or
  ``generic``) for calls of its ``key``, built by the ``lower_builtin`` entries;
- ``lower_getattr_generic(type_class)(impl)``: attributes typed by a template's
  ``generic_resolve`` built by ``impl(context, builder, type, value, attr)``;
- ``lower_constant(type_class)(impl)``: the value of a library's object a kernel names;
- ``register_jitable(fn)``: a Python function kernels may call as it is;
- ``intrinsic`` (``cujit.extension_intrinsic``): a function whose typing returns a
  signature and the code generator that builds its call with a builder.

These are numba's names (``numba.cuda.extending`` maps here under the drop-in).
"""

from __future__ import annotations

import types as pytypes
from typing import Callable

from cujit.types import extension, extension_typing, numba_registry
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


_TARGETS_HERE = ("generic", "cuda", "gpu")


def _for_cuda(target) -> bool | None:
    """True: the CUDA target's; False: generic; None: another target's (not filed)."""
    target = target or "generic"
    if target not in _TARGETS_HERE:
        return None
    return target != "generic"


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False, **kw):
    """Decorate ``typing_fn(*arg_types)`` as a device implementation of ``func``: where
    a kernel calls ``func``, it is called with the argument types and returns the
    Python function to compile for them (None: not for these types); a constant int
    argument is tried as ``types.IntegerLiteral`` too (first with ``prefer_literal``,
    else after its plain type).  With ``strict`` (the default) the implementation must
    take the typing function's arguments (``infer/overload_signatures.py``).  ``target``
    ("generic", the default, or "cuda") orders them: the CUDA target's are tried
    first; another target's are not used by kernels.  Given explicitly as "generic"
    or "cpu", the overload is also filed with numba's own ``overload`` where numba is
    installed, so that numba's ``njit`` functions use it as well, as with numba-cuda.
    numba's other options are accepted; cujit compiles every implementation the same
    way."""
    if not callable(func):
        raise TypeError(f"overload takes a callable, not {func!r}")
    target = kw.get("target")
    cuda_only = _for_cuda(target)

    def decorate(typing_fn: Callable) -> Callable:
        if cuda_only is not None:
            extension.file_overload(extension.OVERLOADS.setdefault(func, []), typing_fn, cuda_only)
        if target in ("generic", "cpu"):  # numba's own functions use it too, where present
            numba_registry.file_with_numba(
                func,
                typing_fn,
                target,
                jit_options=dict(jit_options or {}),
                strict=strict,
                inline=inline,
                prefer_literal=prefer_literal,
            )
        if prefer_literal:
            extension.PREFER_LITERAL.add((func, id(typing_fn)))
        if not strict:
            extension.NOT_STRICT.add((func, id(typing_fn)))
        return typing_fn

    return decorate


def _typeclass_entry(table: dict, typeclass, attr: str, what: str, target) -> Callable:
    if not isinstance(typeclass, type):
        raise TypeError(f"{what} takes a type class (types.Array...), not {typeclass!r}")
    cuda_only = _for_cuda(target)

    def decorate(typing_fn: Callable) -> Callable:
        if cuda_only is not None:
            entries = table.setdefault((typeclass, str(attr)), [])
            extension.file_overload(entries, typing_fn, cuda_only)
        return typing_fn

    return decorate


def overload_method(typeclass, attr: str, **kw) -> Callable:
    """Decorate ``typing_fn(self_type, *arg_types)`` as the method ``attr`` of values
    whose type is a ``typeclass``: it returns ``impl(self, *args)`` (or None)."""
    return _typeclass_entry(extension.METHODS, typeclass, attr, "overload_method", kw.get("target"))


def overload_attribute(typeclass, attr: str, **kw) -> Callable:
    """Decorate ``typing_fn(self_type)`` as the attribute ``attr`` of values whose
    type is a ``typeclass``: it returns ``impl(self)`` computing it (or None)."""
    return _typeclass_entry(
        extension.ATTRIBUTE_OVERLOADS, typeclass, attr, "overload_attribute", kw.get("target")
    )


def lower_attr(typeclass, attr: str) -> Callable:
    """Decorate ``impl(context, builder, type, value)`` as the code of ``value.attr``
    for values of ``typeclass``, typed by an attribute template (``register_attr``)."""
    _type_class(typeclass, "lower_attr")

    def decorate(impl: Callable) -> Callable:
        extension.ATTRIBUTE_LOWERINGS[(typeclass, str(attr))] = impl
        return impl

    return decorate


def register_attr(template: type) -> type:
    """File an attribute template: a class with ``key`` (a type, or a type class) and
    ``resolve_<name>(self, type)`` methods giving the type of ``value.name``."""
    if not isinstance(template, type) or not hasattr(template, "key"):
        raise TypeError(f"register_attr takes a template class with a key, not {template!r}")
    extension.ATTRIBUTE_TEMPLATES.append(template)
    return template


def lower_cast(fromty, toty) -> Callable:
    """Decorate ``impl(context, builder, fromty, toty, value)`` as the conversion of a
    value whose type matches ``fromty`` to a type matching ``toty`` (each a type, or a
    type class: ``types.Any``, a library's class), used wherever kernels convert."""

    def decorate(impl: Callable) -> Callable:
        extension_typing.file_cast(fromty, toty, impl)
        return impl

    return decorate


def register_template(template: type, key=None) -> type:
    """File a typing template (numba's ``ConcreteTemplate``, ``AbstractTemplate`` or
    ``CallableTemplate`` shape) for calls of ``key`` (default: the template's own
    ``key``), a library's function or an operator function (``operator.add``)."""
    key = getattr(template, "key", None) if key is None else key
    if not isinstance(template, type) or key is None:
        raise TypeError(f"register_template takes a template class with a key, not {template!r}")
    extension_typing.file_template(key, template)
    return template


def lower_getattr_generic(typeclass) -> Callable:
    """Decorate ``impl(context, builder, type, value, attr)`` as the code of the
    attributes of ``typeclass``'s values that templates type and no ``lower_attr``
    implementation builds."""
    _type_class(typeclass, "lower_getattr_generic")

    def decorate(impl: Callable) -> Callable:
        extension_typing.GETATTR_GENERIC[typeclass] = impl
        return impl

    return decorate


def lower_constant(typeclass) -> Callable:
    """Decorate ``impl(context, builder, type, pyval)`` as the value of a Python object
    whose type (``typeof_impl``) is a ``typeclass`` where a kernel names it."""
    typeclass = typeclass if isinstance(typeclass, type) else type(typeclass)
    _type_class(typeclass, "lower_constant")

    def decorate(impl: Callable) -> Callable:
        extension_typing.CONSTANTS[typeclass] = impl
        return impl

    return decorate


def register_jitable(*args, **kwargs):
    """``@register_jitable``: the function stays a Python function and kernels may call
    it too (it is its own device implementation)."""

    def wrap(fn: Callable) -> Callable:
        overload(fn, strict=False, **kwargs)(lambda *a, **k: fn)
        return fn

    if len(args) == 1 and not kwargs and callable(args[0]):
        return wrap(args[0])
    return wrap


def __getattr__(name: str):
    if name == "intrinsic":  # cujit.extension_intrinsic's, loaded with its first use
        from cujit.extension_intrinsic import intrinsic

        return intrinsic
    raise AttributeError(f"module 'cujit.extending' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "intrinsic"})


__all__ = [
    "intrinsic",  # noqa: F822 -- module __getattr__ loads it on first use
    "lower",
    "lower_attr",
    "lower_builtin",
    "lower_cast",
    "lower_constant",
    "lower_getattr_generic",
    "make_attribute_wrapper",
    "models",
    "overload",
    "overload_attribute",
    "overload_method",
    "register_attr",
    "register_jitable",
    "register_model",
    "register_template",
    "type_callable",
    "typeof_impl",
]
