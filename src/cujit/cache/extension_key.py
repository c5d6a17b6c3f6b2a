"""The parts of a kernel's cache key that a library's casts and typing templates make.

- the typing templates filed for a callable the kernel's code takes in (a library's
  function or class): each template's methods (``generic``...) and ``cases``;
- where the kernel touches a library's types (an argument of one, or it took in any
  entry of the extension tables), every cast (``lower_cast``: a conversion may be
  inserted wherever its types meet), the templates and overloads filed for operator
  functions and built-ins (``a + b`` names no global; ``abs`` and ``math.sin`` are
  keyed by name), the generic attribute implementations and the constants'
  (``lower_constant``).
"""

from __future__ import annotations

import types as pytypes
from typing import Callable

from cujit.types import Array
from cujit.types.extension import OVERLOADS, library_types
from cujit.types.extension_typing import (
    CASTS,
    CONSTANTS,
    FUNCTION_TEMPLATES,
    GETATTR_GENERIC,
    templates_of,
)

_OWN = ("cujit", "numba", "builtins")  # the base classes' modules: not the library's code


def _name(obj) -> str:
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', obj)}"


def templates(obj, h, function: Callable) -> bool:
    """Key the templates filed for ``obj``; whether there were any."""
    found = templates_of(obj)
    for template in found:
        h.update(f"template {_name(template)}\n".encode())
        for klass in template.__mro__:
            if (klass.__module__ or "").split(".")[0] in _OWN:
                continue
            for name in sorted(vars(klass)):
                value = vars(klass)[name]
                value = getattr(value, "__func__", value)  # staticmethod, classmethod
                if isinstance(value, pytypes.FunctionType):
                    h.update(f"  method {name}\n".encode())
                    function(value)
                elif name == "cases":
                    h.update(f"  cases {[str(c) for c in value]}\n".encode())
    return bool(found)


def _spec(spec) -> str:
    return _name(spec) if isinstance(spec, type) else f"{type(spec).__name__}:{spec}"


def _unnamed(fn) -> bool:
    """Whether a kernel reaches ``fn`` without a global of the library's naming it: an
    operator function (``a + b``), a built-in (``abs``, ``math.sin``), a NumPy ufunc.
    A library's own functions and classes are keyed where the code takes them in."""
    return not isinstance(fn, (pytypes.FunctionType, type))


def touches_library(arg_types) -> bool:
    """Whether an argument type is (or holds elements of) a library's type."""
    for t in arg_types:
        item = t.dtype if isinstance(t, Array) else t
        if library_types(item, item):
            return True
    return False


def library_entries(h, function: Callable) -> None:
    """Key the casts, the templates and overloads of operators and built-ins, and the
    generic attributes."""
    for fromty, toty, impl in CASTS:
        h.update(f"cast {_spec(fromty)} -> {_spec(toty)}\n".encode())
        function(impl)
    for fn in sorted((k for k in FUNCTION_TEMPLATES if _unnamed(k)), key=_name):
        h.update(f"templates of {_name(fn)}\n".encode())
        templates(fn, h, function)
    for fn in sorted((k for k in OVERLOADS if _unnamed(k)), key=_name):
        h.update(f"overloads of {_name(fn)}\n".encode())
        for typing_fn in OVERLOADS[fn]:
            function(typing_fn)
    for what, table in (("getattr generic", GETATTR_GENERIC), ("constant", CONSTANTS)):
        for cls in sorted(table, key=_name):
            h.update(f"{what} {_name(cls)}\n".encode())
            function(table[cls])
