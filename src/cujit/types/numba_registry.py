"""Overloads filed with numba itself, used by cujit's kernels as numba-cuda uses them.

A program that also uses numba may overload a function with numba's own decorator:

    from numba.extending import overload

    @overload(get_42, target="cuda")       # or target="generic", or no target
    def ol_get_42():
        return lambda: 42

numba-cuda's typing context takes such overloads from numba's typing registry
(``numba.core.typing.templates.builtin_registry``) when they are for the CUDA target,
for every target ("generic") or for no target in particular, and come from outside
numba's own modules.  ``adopt(fn)`` does the same for cujit: it files those typing
functions of ``fn`` in ``extension.OVERLOADS`` (with their ``prefer_literal`` and
``strict``), so that a kernel's call of ``fn`` resolves through cujit's own overload
machinery.  The typing functions receive cujit's types (``numba.cuda.types`` under the
drop-in).  numba is never imported here: a process that has not imported numba has no
such overloads.  ``registered_templates()`` lists what was adopted, for the typing
context view of ``cujit.cuda.target``.
"""

from __future__ import annotations

import sys

from cujit.types import extension

# numba's target names whose overloads serve CUDA kernels (None: no target given).
CUDA_TARGETS = (None, "cuda", "generic", "gpu")

_seen = [0]  # how many of the registry's function templates were read
_by_key: dict[int, list[type]] = {}  # id(overloaded function) -> its numba templates
_adopted: set[int] = set()  # ids of the templates filed in extension.OVERLOADS
_templates: list[type] = []  # every template filed, oldest first


def _registry():
    templates = sys.modules.get("numba.core.typing.templates")
    return getattr(templates, "builtin_registry", None)


def _is_external(obj) -> bool:
    """Whether ``obj`` comes from outside numba's own modules (numba-cuda's tests count
    as outside, as numba-cuda counts them)."""
    module = getattr(obj, "__module__", None) or ""
    return not module.startswith("numba.") or module.startswith("numba.cuda.tests.")


def _target(template) -> str | None:
    metadata = getattr(template, "metadata", None) or {}
    return metadata.get("target")


def _read_new() -> None:
    """Index the registry's function templates added since the last read."""
    registry = _registry()
    functions = getattr(registry, "functions", None)
    if functions is None or len(functions) == _seen[0]:
        return
    for template in functions[_seen[0] :]:
        typing_fn = getattr(template, "_overload_func", None)
        # numba's own overloads (of len, np.sum...) are for numba's types: not taken.
        if typing_fn is None or not _is_external(typing_fn):
            continue
        if _target(template) in CUDA_TARGETS:
            _by_key.setdefault(id(getattr(template, "key", None)), []).append(template)
    _seen[0] = len(functions)


def adopt(fn: object) -> None:
    """File numba's CUDA (or generic) overloads of ``fn`` in ``extension.OVERLOADS``."""
    if _registry() is None:
        return
    _read_new()
    for template in _by_key.get(id(fn), ()):
        if id(template) in _adopted or getattr(template, "key", None) is not fn:
            continue
        _adopted.add(id(template))
        typing_fn = template._overload_func
        entries = extension.OVERLOADS.setdefault(fn, [])
        if typing_fn in entries:  # filed by cujit's own overload as well
            continue
        extension.file_overload(entries, typing_fn, _target(template) in ("cuda", "gpu"))
        if getattr(template, "prefer_literal", False):
            extension.PREFER_LITERAL.add((fn, id(typing_fn)))
        if not getattr(template, "_strict", True):
            extension.NOT_STRICT.add((fn, id(typing_fn)))
        _templates.append(template)


def registered_templates() -> tuple[type, ...]:
    """numba's templates ``adopt`` filed so far."""
    return tuple(_templates)


def file_with_numba(func, typing_fn, target: str, **options) -> bool:
    """Also file ``typing_fn`` with numba's own ``overload`` (for numba's CPU target
    and its ``njit``), as numba-cuda does for an overload whose target is "generic" or
    "cpu"; only where numba is installed (False where it is not)."""
    import importlib

    try:
        numba_extending = importlib.import_module("numba.core.extending")
    except ImportError:  # no numba, or cujit's stand-in package for it
        return False
    numba_extending.overload(func, target=target, **options)(typing_fn)
    template = extension_numba_template(func, typing_fn)
    if template is not None:  # cujit filed it already: not adopted a second time
        _adopted.add(id(template))
    return True


def extension_numba_template(func, typing_fn):
    """numba's template that files ``typing_fn`` for ``func`` (None: none)."""
    registry = _registry()
    for template in reversed(getattr(registry, "functions", ())):
        if getattr(template, "key", None) is func and (
            getattr(template, "_overload_func", None) is typing_fn
        ):
            return template
    return None


def cuda_templates() -> tuple[type, ...]:
    """Every template of numba's registry whose overloads kernels take (``adopt``),
    oldest first."""
    if _registry() is not None:
        _read_new()
    return tuple(t for templates in _by_key.values() for t in templates)
