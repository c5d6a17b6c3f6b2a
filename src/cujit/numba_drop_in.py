"""The numba drop-in: ``from numba import cuda`` and ``import numba.cuda`` give cujit.

``install_numba_drop_in()`` (also ``CUJIT_NUMBA=1`` in a process that imports cujit, and
``python -m cujit run script.py``) puts a finder first on ``sys.meta_path``:

- ``numba.cuda`` is ``cujit.cuda``; ``numba.cuda.X`` is cujit's module or namespace
  ``cujit.cuda.X`` (``numba.cuda.types`` is ``cujit.types``, ``numba.cuda.random`` is
  ``cujit.cuda.random``); a name cujit lacks is a ModuleNotFoundError that says so,
  never numba-cuda's module loaded under cujit.
- Where numba is installed, ``numba`` itself stays numba (``numba.float32`` is numba's
  type object, which cujit converts: ``cujit.types.foreign``).  Where it is not, a
  small ``numba`` package stands in, holding what a numba.cuda program imports at its
  top: ``cuda``, the scalar types (``float32``, ``int32``, ``void``...), ``types``
  and ``core.types`` (both ``cujit.types``).
- ``NUMBA_ENABLE_CUDASIM=1`` (numba's simulator switch) selects cujit's CPU target,
  unless ``CUJIT_TARGET`` says otherwise.
- Where numba is installed, cujit's errors and warnings also derive from numba's
  classes of the same meaning (``adopt_numba_errors``), so code that catches
  ``numba.core.errors.TypingError`` around a numba.cuda compile catches cujit's.

Only imports change: nothing of numba's API is implemented here.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types as pytypes

from cujit import config

PREFIX = "numba.cuda"

# The stand-in ``numba`` package's modules, for where numba is not installed.
FACADE_MODULES = {
    "numba": None,
    "numba.types": "cujit.types",
    "numba.core": None,
    "numba.core.types": "cujit.types",
}


# numba.cuda modules deeper than one level that cujit serves: numba's name -> cujit's;
# their parents are empty packages (``_package``).
NESTED_MODULES = {
    "core.errors": "cujit.cuda.errors",
    "core.config": "cujit.numba_config",
    "core.imputils": "cujit.cuda.imputils",
}
_PACKAGES: dict[str, pytypes.ModuleType] = {}


def _package(name: str) -> pytypes.ModuleType:
    """An empty package standing for ``name``, a parent of ``NESTED_MODULES``."""
    if name not in _PACKAGES:
        module = pytypes.ModuleType(name, f"cujit's {name}: holds only its submodules")
        module.__path__ = []
        _PACKAGES[name] = module
    return _PACKAGES[name]


# cujit's class -> numba's (numba.core.errors) of the same meaning.
NUMBA_ERROR_BASES = (
    ("CompileError", "NumbaError"),
    ("TypingError", "TypingError"),
    ("RequireLiteralValue", "RequireLiteralValue"),
    ("UnsupportedError", "UnsupportedError"),
    ("LoweringError", "LoweringError"),
    ("InternalCompilerError", "InternalError"),
    ("NumbaWarning", "NumbaWarning"),
    ("NumbaPerformanceWarning", "NumbaPerformanceWarning"),
    ("NumbaInvalidConfigWarning", "NumbaInvalidConfigWarning"),
)


_ADOPTED = False


def adopt_numba_errors() -> None:
    """Where the real numba is imported, make each class of ``NUMBA_ERROR_BASES`` also a
    subclass of numba's (idempotent): numba.cuda's errors are numba's, and programs
    catch them by numba's classes.  Nothing changes where numba is absent."""
    global _ADOPTED
    numba = sys.modules.get("numba")
    if _ADOPTED or numba is None or getattr(numba, "__path__", None) == []:
        return  # done, or numba not imported, or cujit's stand-in for it
    try:
        errors = importlib.import_module("numba.core.errors")
    except ImportError:
        return
    from cujit import diagnostics

    for ours, theirs in NUMBA_ERROR_BASES:
        cls, base = getattr(diagnostics, ours), getattr(errors, theirs, None)
        if base is not None and not issubclass(cls, base):
            cls.__bases__ = (*cls.__bases__, base)
    _ADOPTED = True


def cuda_module(name: str):
    """cujit's object for ``numba.cuda`` or ``numba.cuda.X`` (None where cujit has none)."""
    if name == PREFIX:
        adopt_numba_errors()
        return importlib.import_module("cujit.cuda")
    if not name.startswith(PREFIX + "."):
        return None
    sub = name[len(PREFIX) + 1 :]
    if sub in NESTED_MODULES:
        return importlib.import_module(NESTED_MODULES[sub])
    if any(nested.startswith(sub + ".") for nested in NESTED_MODULES):
        return _package(name)
    own = "cujit.cuda." + sub
    if _has_module(own):
        return importlib.import_module(own)
    if "." in sub:  # numba.cuda.X.Y: only cujit's own modules (numba.cuda.np.numpy_support)
        return None
    cuda = importlib.import_module("cujit.cuda")
    try:
        value = getattr(cuda, sub)
    except AttributeError:
        return None
    # A namespace (cuda.types, cuda.cg, cuda.atomic...) can be imported as a module;
    # a function or a type cannot.
    if isinstance(value, pytypes.ModuleType) or not callable(value):
        return value
    return None


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package cujit lacks (numba.cuda.core.X)
        return False


class _Alias(importlib.abc.Loader):
    """Loads a module name as an object that already exists."""

    def __init__(self, value) -> None:
        self.value = value

    def create_module(self, spec):
        return self.value

    def exec_module(self, module) -> None:
        pass


def _facade(name: str) -> pytypes.ModuleType:
    target = FACADE_MODULES[name]
    if target is not None:
        return importlib.import_module(target)
    module = pytypes.ModuleType(name, f"cujit's stand-in for {name} (numba is not installed)")
    module.__path__ = []  # a package: numba.cuda, numba.types... are found below it
    if name == "numba":
        from cujit.types import core

        for attr in dir(core):
            if isinstance(getattr(core, attr), (core.Scalar, core.NoneType)):
                setattr(module, attr, getattr(core, attr))
        module.__getattr__ = _numba_getattr
    return module


def _numba_getattr(attr: str):
    if attr in ("cuda", "types", "core"):
        return importlib.import_module("numba." + attr)
    raise AttributeError(
        f"cujit's stand-in for numba (numba is not installed) has no "
        f"{attr!r}: it holds numba.cuda, numba.types and the scalar types"
    )


class NumbaCudaFinder(importlib.abc.MetaPathFinder):
    """``numba.cuda`` and its submodules from cujit; ``numba`` itself from cujit's
    stand-in when ``facade`` (numba not installed)."""

    def __init__(self, facade: bool) -> None:
        self.facade = facade

    def find_spec(self, name, path=None, target=None):
        if name == PREFIX or name.startswith(PREFIX + "."):
            value = cuda_module(name)
            if value is None:
                raise ModuleNotFoundError(
                    f"No module named {name!r}: numba.cuda is served by cujit, which has "
                    f"no {name[len(PREFIX) + 1 :]!r} (see docs/numba-api.md)",
                    name=name,
                )
            return importlib.machinery.ModuleSpec(name, _Alias(value))
        if self.facade and name in FACADE_MODULES:
            return importlib.machinery.ModuleSpec(name, _Alias(_facade(name)), is_package=True)
        return None


def _numba_importable() -> bool:
    if "numba" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):  # a broken or blocked numba: as if absent
        return False


def installed() -> bool:
    """Whether the drop-in is in place in this process."""
    return any(isinstance(f, NumbaCudaFinder) for f in sys.meta_path)


def install_numba_drop_in() -> None:
    """Make ``numba.cuda`` resolve to cujit in this process (idempotent).

    Call it before ``numba.cuda`` is first imported: modules that already hold
    numba-cuda's ``cuda`` keep it.  Where numba is not installed, a stand-in ``numba``
    package is provided (see the module's docstring)."""
    if installed():
        return
    if config.NUMBA_CUDASIM.get() and not config.TARGET.is_set():
        config.TARGET.set("cpu")
    facade = not _numba_importable()
    for name in [n for n in sys.modules if n == PREFIX or n.startswith(PREFIX + ".")]:
        del sys.modules[name]  # numba-cuda's, imported before the drop-in
    sys.meta_path.insert(0, NumbaCudaFinder(facade))
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.cuda = importlib.import_module(PREFIX)
