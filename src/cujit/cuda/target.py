"""``numba.cuda.target``: the typing context's registries, as a library inspects them.

numba-cuda's ``CUDATypingContext`` holds the typing declarations its kernels resolve
calls with: ``ctx.refresh()`` loads the registries, and ``ctx._registries`` maps each
registry (with ``functions`` and ``attributes``: template classes) to its loader.
Tools walk them to list the overloads in force, reading each template's ``key`` (the
overloaded function, or the type class and attribute name) and ``_overload_func``
(the typing function).

cujit's typing of library code lives in the tables of ``cujit.types.extension``; this
module shows them in that shape, read-only:

- ``overloads``: one template per typing function of ``extension.OVERLOADS``
  (``cujit.extending.overload``), in the order calls try them;
- ``methods`` and ``attributes``: those of ``overload_method`` and
  ``overload_attribute`` (``key`` is ``(type class, name)``);
- ``numba``: numba's own templates that kernels take their overloads from
  (``cujit.types.numba_registry``: for the CUDA target or generic, from outside numba);
- ``templates``: the libraries' typing templates of calls and attributes
  (``cudadecl.registry``, ``cujit.extending.register_template``...).

Nothing here types a call: cujit's compiler reads the tables themselves.  numba's
other typing-context methods (``resolve_function_type``...) work on numba's type
objects and are not provided.
"""

from __future__ import annotations

from cujit.types import extension, extension_typing, numba_registry

__all__ = ["CUDATypingContext", "Registry"]


class Registry:
    """One table of typing declarations: its templates in ``functions`` (calls) and
    ``attributes`` (methods and attributes of a type class's values)."""

    def __init__(self, name: str, functions=(), attributes=()) -> None:
        self.name = name
        self.functions = list(functions)
        self.attributes = list(attributes)

    def __repr__(self) -> str:
        return f"<cujit typing registry {self.name}: {len(self.functions)} functions>"


def _template(key, typing_fn, kind: str) -> type:
    """A template class in numba's shape for one filed typing function."""
    name = f"{kind}Template_{getattr(typing_fn, '__name__', 'typing')}"
    cuda = id(typing_fn) in extension.CUDA_FIRST
    body = {
        "key": key,
        "_overload_func": staticmethod(typing_fn),
        "metadata": {"target": "cuda" if cuda else "generic"},
    }
    return type(name, (), body)


def _templates(table: dict, kind: str) -> list[type]:
    return [_template(key, fn, kind) for key, fns in list(table.items()) for fn in fns]


def _typing_templates() -> list[type]:
    """The libraries' call templates (``extension_typing.FUNCTION_TEMPLATES``)."""
    return [t for ts in list(extension_typing.FUNCTION_TEMPLATES.values()) for t in ts]


class CUDATypingContext:
    """The registries cujit's kernels resolve library code with (see the module's
    docstring); ``refresh()`` reads the tables as they are now."""

    def __init__(self) -> None:
        self._registries: dict[Registry, None] = {}
        self.refresh()

    def refresh(self) -> None:
        """Re-read the tables (a library may have filed entries since)."""
        attrs = _templates(extension.METHODS, "Method")
        attrs += _templates(extension.ATTRIBUTE_OVERLOADS, "Attribute")
        registries = (
            Registry("overloads", _templates(extension.OVERLOADS, "Overload")),
            Registry("methods and attributes", attributes=attrs),
            Registry("numba", numba_registry.cuda_templates()),
            Registry("templates", _typing_templates(), list(extension.ATTRIBUTE_TEMPLATES)),
        )
        self._registries = dict.fromkeys(registries)
