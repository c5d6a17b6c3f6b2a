"""The import routing of tools/numba_suite.py: numba-cuda's test modules see ``numba.cuda``
served by cujit, while numba-cuda's own harness keeps running on numba-cuda.

Every module under ``numba.cuda.tests.cudapy`` and ``numba.cuda.tests.doc_examples`` (the
test files and their usecase modules, also test_caching's copies of them, imported as
``*_test_fodder``), and ``numba.cuda.kernels.transpose`` (a kernel written on numba.cuda's
public API, which test_transpose imports and runs as a user's library would), is executed
with an ``__import__`` that resolves

- ``from numba import cuda`` / ``import numba`` / ``numba.cuda``: ``cujit.cuda``
  (``numba`` itself stays numba for everything but ``cuda``);
- ``numba.cuda.X`` for numba.cuda's API modules (``types``, ``random``, ``cg``,
  ``libdevice``, ``fp16``, ``bf16``, ``fp8``, ``vector_types``, ``api``, ``_internal``,
  ``compiler``, ``np.numpy_support``, ``extending``, ``cudaimpl``, ``cgutils``, ``typing``,
  ``cudadecl``, ``errors``): cujit's, or an
  ImportError where cujit has none (``cujit.numba_drop_in.cuda_module``);
- ``numba.cuda.cudadrv.error`` and ``numba.cuda.core.errors`` (``CUJIT_MODULES``): cujit's
  driver errors, and its compile errors and warnings, by numba's names;
- ``from numba.cuda import NAME``: cujit.cuda's NAME for every value (``jit``,
  ``to_device``, ``float32``...), numba-cuda's for its other modules (``testing``,
  ``core``, ``dispatcher``...) and the harness flags in ``HARNESS_VALUES``.

Child processes of a test (``python -c`` snippets, ``multiprocessing`` spawn workers,
numba-cuda's ``subprocess_test_runner``) get the same routing through
``tools/numba_suite_child/sitecustomize.py`` (see ``child_environment``): their test
modules are routed as above, and the code a ``python -c`` child runs (its ``__main__``)
imports as a test module does.  Each cujit compile and launch in a child is appended to
the file ``CUJIT_SUITE_CHILD_EVENTS`` names, which the worker counts as the test's.  On
the CPU target's device harness a child's ``numba.cuda.testing`` asks cujit's CPU device
for the compute capability, as the worker's does (``device_queries_from_cujit``).

Only imports change: nothing of numba's API is implemented here.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.abc
import importlib.util
import os
import sys
import types as pytypes

TOOLS = os.path.dirname(os.path.abspath(__file__))
CHILD_DIR = os.path.join(TOOLS, "numba_suite_child")
CHILD_EVENTS = "CUJIT_SUITE_CHILD_EVENTS"

ROUTED_PACKAGES = (
    "numba.cuda.tests.cudapy",
    "numba.cuda.tests.doc_examples",
    "numba.cuda.kernels.transpose",
)
FODDER = "_test_fodder"
API_MODULES = frozenset(
    {"types", "random", "cg", "libdevice", "libdevicefuncs", "fp16", "bf16", "fp8", "vector_types"}
    | {"api", "_internal"}  # numba.cuda.api.is_fp8_supported, _internal.cuda_bf16
    # numba.cuda's API modules for libraries: the ahead-of-time compile functions
    # (compiler.compile_ptx...), dtype conversions (np.numpy_support) and the extension
    # API (extending, cudaimpl.lower, cgutils.create_struct_proxy).
    | {"compiler", "np", "extending", "cudaimpl", "cgutils"}
    # the launch configuration a compile started by a launch sees (launchconfig).
    | {"launchconfig"}
    # ... its typing names (typing.templates.AttributeTemplate, typing.typeof,
    # cudadecl.registry) and errors (LoweringError), which libraries import with them.
    | {"typing", "cudadecl", "errors"}
)
# numba.cuda's modules below the API modules that cujit serves whole: a test importing
# numba-cuda's error class to catch cujit's error gets cujit's (``cujit.cuda.cudadrv``).
CUJIT_MODULES = frozenset({"numba.cuda.cudadrv.error", "numba.cuda.core.errors"})
HARNESS_VALUES = frozenset({"HAS_NUMBA", "config", "implementation"})
_real_import = builtins.__import__


def _numba_cuda_module(sub: str) -> bool:
    """Whether numba-cuda has a module numba.cuda.SUB (its harness and internals)."""
    return importlib.util.find_spec("numba.cuda." + sub) is not None


class _CudaNames:
    """What ``from numba.cuda import NAME`` gives a test (see the module docstring)."""

    def __getattr__(self, name: str):
        from cujit import numba_drop_in

        if name in API_MODULES:
            value = numba_drop_in.cuda_module("numba.cuda." + name)
            if value is None:
                raise AttributeError(name)
            return value
        if name in HARNESS_VALUES:
            return getattr(_real_import("numba.cuda").cuda, name)
        if not name.startswith("_") and _numba_cuda_module(name):
            _real_import("numba.cuda." + name)
            return getattr(sys.modules["numba.cuda"], name)
        return getattr(importlib.import_module("cujit.cuda"), name)


class _NumbaView(pytypes.ModuleType):
    """``numba`` as a test sees it: numba, but with ``cuda`` being cujit.cuda."""

    def __getattr__(self, name: str):
        if name == "cuda":
            return importlib.import_module("cujit.cuda")
        return getattr(_real_import("numba"), name)


_NUMBA = _NumbaView("numba")


def _resolve_cuda(name: str):
    """The object a test's ``numba.cuda[.X...]`` import names."""
    from cujit import numba_drop_in

    if name == "numba.cuda":
        return _CudaNames()
    first = name.split(".")[2]
    if first in API_MODULES or name in CUJIT_MODULES:
        value = numba_drop_in.cuda_module(name)
        if value is None:
            raise ModuleNotFoundError(f"No module named {name!r} (cujit has none)", name=name)
        return value
    _real_import(name)
    return sys.modules[name]


class _PackageOverlay:
    """A numba-cuda package as ``from PACKAGE import NAME`` sees it: its submodules in
    ``CUJIT_MODULES`` are cujit's (as ``import PACKAGE.NAME`` gives), the rest its own."""

    def __init__(self, module, name: str) -> None:
        self._module, self._name = module, name

    def __getattr__(self, attr: str):
        full = f"{self._name}.{attr}"
        if full in CUJIT_MODULES:
            from cujit import numba_drop_in

            numba_drop_in.adopt_numba_errors()
            return _resolve_cuda(full)
        return getattr(self._module, attr)


def routed_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level != 0 or not (name == "numba" or name.startswith("numba.")):
        return _real_import(name, globals, locals, fromlist, level)
    parts = name.split(".")
    to_cujit = name in ("numba", "numba.cuda", *CUJIT_MODULES) or (
        len(parts) > 2 and parts[1] == "cuda" and parts[2] in API_MODULES
    )
    if not to_cujit:  # numba's own modules (numba.core...) and numba-cuda's harness
        module = _real_import(name, globals, locals, fromlist, level)
        if fromlist and any(f"{name}.{item}" in CUJIT_MODULES for item in fromlist):
            return _PackageOverlay(module, name)  # from numba.cuda.core import errors
        return module if fromlist else _NUMBA
    # What the drop-in does when it serves numba.cuda: cujit's errors also become
    # numba's classes of the same meaning (numba_drop_in.adopt_numba_errors).
    from cujit import numba_drop_in

    numba_drop_in.adopt_numba_errors()
    if not fromlist or name == "numba":
        if name != "numba":
            _resolve_cuda(name)  # a module cujit lacks is an ImportError here too
        return _NUMBA
    return _resolve_cuda(name)


_ROUTED_BUILTINS = dict(vars(builtins), __import__=routed_import)


class _RoutedLoader(importlib.abc.Loader):
    def __init__(self, inner) -> None:
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module) -> None:
        module.__dict__["__builtins__"] = _ROUTED_BUILTINS
        self.inner.exec_module(module)


def is_routed(name: str) -> bool:
    """Whether module ``name`` is test code: the test packages, the transpose kernel, and
    the copies of usecase modules test_caching imports under top-level names such as
    ``cuda_caching_test_fodder`` (from a temporary folder on sys.path)."""
    return name.startswith(ROUTED_PACKAGES) or ("." not in name and name.endswith(FODDER))


class TestModuleRouter(importlib.abc.MetaPathFinder):
    """Loads the test packages' modules with the routed ``__import__``."""

    def find_spec(self, name, path=None, target=None):
        if not is_routed(name):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and not spec.submodule_search_locations:
                    spec.loader = _RoutedLoader(spec.loader)
                return spec
        return None


def numpy_row_stack_shim() -> None:
    """Harness shim: NumPy 2.5 removed ``np.row_stack`` (an alias of ``np.vstack``), which
    numba-cuda 0.30.4's own ``numba/cuda/np/arrayobj.py`` names at import (it registers
    an overload for it), so that every numba-cuda module importing it fails there.  Where
    NumPy lacks the name, it is set to ``np.vstack``, the function it always was; cujit
    neither uses nor checks it."""
    import numpy as np

    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


def child_environment(events_path: str) -> dict[str, str]:
    """The variables that give a test's child processes the routing: the child folder's
    ``sitecustomize`` first on PYTHONPATH, and the file its events go to."""
    path = os.environ.get("PYTHONPATH", "")
    parts = [CHILD_DIR] + [p for p in path.split(os.pathsep) if p and p != CHILD_DIR]
    return {"PYTHONPATH": os.pathsep.join(parts), CHILD_EVENTS: events_path}


class _CujitDevices:
    """numba-cuda's harness ``devices`` (``numba.cuda.testing.devices``) answered by
    cujit's current device: see ``device_queries_from_cujit``."""

    @staticmethod
    def get_context():
        from cujit import cuda

        return cuda.current_context()


def cpu_device_mode() -> bool:
    """The CPU target with the harness in device mode (``--harness device``)."""
    return os.environ.get("CUJIT_TARGET") == "cpu" and not os.environ.get("NUMBA_ENABLE_CUDASIM")


def device_queries_from_cujit(testing) -> None:
    """Harness shim for the CPU target's device mode: the harness module ``testing`` asks
    numba-cuda's driver for the device's compute capability (``cc_X_or_above``, applied
    when a test file is imported) and that driver finds no GPU.  Here it asks cujit's
    current device instead: the CPU target's, which describes itself as compute
    capability 9.0.  Only the harness module's name is replaced, never what a test or a
    kernel calls."""
    testing.devices = _CujitDevices


class _AfterHarnessImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """In a child: applies ``device_queries_from_cujit`` to ``numba.cuda.testing`` once it
    is imported (a spawned ``multiprocessing`` worker imports the test file, whose
    decorators query the device, to unpickle what it runs), without importing the harness
    in children that never use it."""

    NAME = "numba.cuda.testing"

    def find_spec(self, name, path=None, target=None):
        if name != self.NAME:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                self.inner, spec.loader = spec.loader, self
                return spec
        return None

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module) -> None:
        self.inner.exec_module(module)
        device_queries_from_cujit(module)


def _main_import(name, globals=None, locals=None, fromlist=(), level=0):
    """``__import__`` of a child: code run as ``__main__`` (``python -c``) is routed as a
    test module is; every other module imports as usual."""
    if globals is not None and globals.get("__name__") == "__main__":
        return routed_import(name, globals, locals, fromlist, level)
    return _real_import(name, globals, locals, fromlist, level)


def _append_event(kind: str, name: str, target: str) -> None:
    path = os.environ.get(CHILD_EVENTS)
    if not path:
        return
    # One write of one short line to a file opened for appending: children running at
    # once never interleave within a line.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{kind}\t{name}\n".encode())
    finally:
        os.close(fd)


def install_in_child() -> None:
    """What ``sitecustomize`` does in a test's child process (see the module docstring)."""
    numpy_row_stack_shim()
    sys.meta_path.insert(0, TestModuleRouter())
    if cpu_device_mode():
        sys.meta_path.insert(0, _AfterHarnessImport())
    builtins.__import__ = _main_import
    from cujit import events

    events.subscribe(_append_event)
    import numba_suite_audit

    numba_suite_audit.Audit(main_is_test=True, sink=_append_audit).install()


def _append_audit(kind: str, name: str) -> None:
    _append_event(kind, name, "")


def read_child_events(path: str) -> list[tuple[str, str]]:
    """The (kind, name) events the children wrote to ``path``: cujit's ``compile`` and
    ``launch``, and the host-API audit's ``cujit-call`` and ``numba-call``
    (tools/numba_suite_audit.py); the file is removed."""
    try:
        with open(path) as f:
            lines = [line.rstrip("\n").split("\t", 1) for line in f]
        os.unlink(path)
    except FileNotFoundError:
        return []
    return [(parts[0], parts[1] if len(parts) > 1 else "") for parts in lines]
