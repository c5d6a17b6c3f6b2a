"""``cujit.cuda.typing.templates``: numba's typing templates over cujit's extension API.

- ``AttributeTemplate``: ``resolve_<name>(self, type)`` (or ``generic_resolve(self,
  type, name)``) gives the type of ``value.name`` for values of its ``key``;
- ``ConcreteTemplate`` (``cases``: signatures), ``AbstractTemplate`` (``generic(self,
  args, kws)`` returning a signature or None) and ``CallableTemplate`` (``generic(self)``
  returning a typer): the typing of calls of their ``key``, a function or an operator
  function (``operator.add``), built by ``lower_builtin`` implementations;
- ``Registry``: numba's typing registry; ``register``, ``register_attr`` and
  ``register_global`` file the templates in cujit's tables at once (numba's target
  installs a registry into its typing context; cujit's kernels read the tables, each
  kernel the entries of what it calls, and key its cache by them).

A template receives a typing context as ``self.context``
(``infer/extension_templates.TypingContext``).
"""

from __future__ import annotations

from cujit.cuda.typing import signature
from cujit.extending import register_attr, register_template
from cujit.types import Function, Module


class FunctionTemplate:
    """Base of the call templates: ``key`` is the function they type."""

    key = None

    def __init__(self, context) -> None:
        self.context = context


class ConcreteTemplate(FunctionTemplate):
    """A call typed by the first of ``cases`` (signatures) the argument types take."""

    cases: list = []


class AbstractTemplate(FunctionTemplate):
    """A call typed by ``generic(self, args, kws)``: a signature, or None to decline."""

    def generic(self, args, kws):
        return None


class CallableTemplate(FunctionTemplate):
    """A call typed by the typer ``generic(self)`` returns: ``typer(*args)`` gives the
    result type (or a signature), or None to decline."""

    def generic(self):
        return None


class AttributeTemplate:
    """Typing of attributes of values of ``key`` (a type, or a type class)."""

    key = None

    def __init__(self, context) -> None:
        self.context = context


def _keyed(template: type, key) -> type:
    """``template`` typing ``key`` (a subclass, as numba makes, where it types another)."""
    if getattr(template, "key", None) is key:
        return template
    return type(template.__name__, (template,), {"key": key, "__module__": template.__module__})


class Registry:
    """numba's typing registry: templates filed in cujit's extension tables."""

    def __init__(self, name: str = "unspecified") -> None:
        self.name = name
        self.functions: list[type] = []
        self.attributes: list[type] = []
        self.globals: list[tuple] = []

    def register(self, item: type) -> type:
        """File a call template for its ``key``."""
        register_template(item)
        self.functions.append(item)
        return item

    def register_attr(self, item: type) -> type:
        """File an attribute template."""
        register_attr(item)
        self.attributes.append(item)
        return item

    def register_global(self, val=None, typ=None, **kwargs):
        """``register_global(fn)(Template)``: ``Template`` types calls of ``fn``
        (``typing_key=`` another key for the template); ``register_global(fn,
        types.Function(Template))`` the same; ``register_global(module,
        types.Module(module))`` is taken as it is (kernels read modules' attributes)."""
        if typ is not None:
            self._file_global(val, typ)
            return None
        if val is None:
            raise TypeError("register_global needs the global value it types")
        key = kwargs.pop("typing_key", val)

        def decorate(template: type) -> type:
            self._file_global(val, Function(_keyed(template, key)))
            return template

        return decorate

    def _file_global(self, val, typ) -> None:
        templates = getattr(typ, "templates", None)
        if templates is not None:
            for template in templates:
                register_template(template, key=val)
        elif not (isinstance(typ, Module) or type(typ).__name__ == "Module"):
            raise TypeError(
                f"register_global({val!r}, {typ!r}): cujit takes types.Function(template) "
                "and types.Module(module) here; other globals are typed by their value"
            )
        self.globals.append((val, typ))


__all__ = [
    "AbstractTemplate",
    "AttributeTemplate",
    "CallableTemplate",
    "ConcreteTemplate",
    "FunctionTemplate",
    "Registry",
    "signature",
]
