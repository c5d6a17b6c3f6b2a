"""One worker of tools/numba_suite.py: runs numba-cuda's test files under pytest with
``numba.cuda`` served by cujit, and writes one JSON line per test.

    python tools/numba_suite_worker.py EVENTS.jsonl TIMEOUT_S FILE.py [FILE.py...] [--skip ID...]

Routing (imports only).  numba-cuda's test harness (``numba.cuda.testing``,
``numba.cuda.tests.support``, ``numba.cuda.core.config``...) is built on numba-cuda's
own internals, so numba-cuda stays installed under its own names and the harness runs
on it unchanged.  What the *tests* import is routed: every module under
``numba.cuda.tests.cudapy`` and ``numba.cuda.tests.doc_examples`` (the test files and
their usecase modules) is executed with an ``__import__`` that resolves

- ``from numba import cuda`` / ``import numba`` / ``numba.cuda``: ``cujit.cuda``
  (``numba`` itself stays numba for everything but ``cuda``);
- ``numba.cuda.X`` for numba.cuda's API modules (``types``, ``random``, ``cg``,
  ``libdevice``, ``fp16``, ``bf16``, ``fp8``, ``vector_types``, ``compiler``,
  ``np.numpy_support``, ``extending``, ``cudaimpl``, ``cgutils``): cujit's, or an
  ImportError where cujit has none (``cujit.numba_drop_in.cuda_module``);
- ``from numba.cuda import NAME``: cujit.cuda's NAME for every value (``jit``,
  ``to_device``, ``float32``...), numba-cuda's for its other modules (``testing``,
  ``core``, ``dispatcher``...) and the harness flags in ``HARNESS_VALUES``.

A test that reaches numba-cuda's compiler through a harness module compiles with
numba-cuda: the worker counts those compilations too, and such a test is no pass.

Harness shims (for the test harness only, never for API a kernel uses):
``initialize_from_pytest_config``, the fixture numba-cuda's CUDATestCase names, lives in
numba-cuda's source tree but not in its wheel: a fixture that does nothing stands in.

Where the ``filecheck`` package is not installed (a machine without the ``conformance``
extra's dependencies), stand-in modules let ``numba.cuda.testing`` import; the
FileCheck assertions then fail, naming the missing package.

Counting: ``cujit.events`` tells the worker of every compile and launch; a test that
passes with no cujit compile or launch is 'no-kernel', and one during which numba-cuda
compiled or simulated a kernel is 'numba-compiled'.  A test running past TIMEOUT_S
ends the worker (faulthandler): the parent records it as 'timeout' and starts a new
worker for the tests left.
"""

from __future__ import annotations

import builtins
import faulthandler
import importlib
import importlib.abc
import importlib.util
import json
import os
import sys
import time
import types as pytypes

import pytest

ROUTED_PACKAGES = ("numba.cuda.tests.cudapy", "numba.cuda.tests.doc_examples")
API_MODULES = frozenset(
    {"types", "random", "cg", "libdevice", "libdevicefuncs", "fp16", "bf16", "fp8", "vector_types"}
    | {"api", "_internal"}  # numba.cuda.api.is_fp8_supported, _internal.cuda_bf16
    # numba.cuda's API modules for libraries: the ahead-of-time compile functions
    # (compiler.compile_ptx...), dtype conversions (np.numpy_support) and the extension
    # API (extending, cudaimpl.lower, cgutils.create_struct_proxy).
    | {"compiler", "np", "extending", "cudaimpl", "cgutils"}
)
HARNESS_VALUES = frozenset({"HAS_NUMBA", "config", "implementation"})
_real_import = builtins.__import__
# The worker's own stderr, which pytest's capturing of fd 2 leaves alone: a timeout's
# report must reach the parent.
_STDERR = os.fdopen(os.dup(2), "w")


class Counts:
    """What cujit and numba-cuda did during the current test."""

    compiles = launches = numba_compiles = 0

    @classmethod
    def reset(cls) -> None:
        cls.compiles = cls.launches = cls.numba_compiles = 0

    @classmethod
    def cujit_event(cls, kind: str, name: str, target: str) -> None:
        if kind == "compile":
            cls.compiles += 1
        else:
            cls.launches += 1


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
    if first in API_MODULES:
        value = numba_drop_in.cuda_module(name)
        if value is None:
            raise ModuleNotFoundError(f"No module named {name!r} (cujit has none)", name=name)
        return value
    _real_import(name)
    return sys.modules[name]


def routed_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level != 0 or not (name == "numba" or name.startswith("numba.")):
        return _real_import(name, globals, locals, fromlist, level)
    parts = name.split(".")
    to_cujit = name in ("numba", "numba.cuda") or (
        len(parts) > 2 and parts[1] == "cuda" and parts[2] in API_MODULES
    )
    if not to_cujit:  # numba's own modules (numba.core...) and numba-cuda's harness
        module = _real_import(name, globals, locals, fromlist, level)
        return module if fromlist else _NUMBA
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


class TestModuleRouter(importlib.abc.MetaPathFinder):
    """Loads the test packages' modules with the routed ``__import__``."""

    def find_spec(self, name, path=None, target=None):
        if not name.startswith(ROUTED_PACKAGES):
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


def _stand_in_for_filecheck() -> None:
    """Harness shim: ``numba.cuda.testing`` imports filecheck at its top."""
    if importlib.util.find_spec("filecheck") is not None:
        return

    class Missing:
        def __init__(self, *args, **kwargs) -> None:
            raise RuntimeError(
                "the filecheck package is not installed (pip install -e '.[conformance]')"
            )

    names = {
        "matcher": ("Matcher",),
        "options": ("Options",),
        "parser": ("Parser", "pattern_for_opts"),
        "finput": ("FInput",),
    }
    sys.modules["filecheck"] = pytypes.ModuleType("filecheck")
    for sub, attrs in names.items():
        module = pytypes.ModuleType("filecheck." + sub)
        for attr in attrs:
            setattr(module, attr, Missing)
        sys.modules["filecheck." + sub] = module


def _device_queries_from_cujit() -> None:
    """Harness shim for the CPU target's device mode (``--harness device``): the harness
    asks numba-cuda's driver for the device's compute capability (``cc_X_or_above``,
    applied when a file is imported) and that driver finds no GPU.  Here the harness
    asks cujit's current device instead: the CPU target's, which describes itself as
    compute capability 9.0.  Only the harness module's name is replaced, never what a
    test or a kernel calls."""
    if os.environ.get("CUJIT_TARGET") != "cpu" or os.environ.get("NUMBA_ENABLE_CUDASIM"):
        return
    testing = importlib.import_module("numba.cuda.testing")

    class Devices:
        @staticmethod
        def get_context():
            from cujit import cuda

            return cuda.current_context()

    testing.devices = Devices


def _count_numba_cuda() -> None:
    """Count numba-cuda's own compilations (GPU) and simulated kernels (simulator)."""

    def counting(fn):
        def wrapper(*args, **kwargs):
            Counts.numba_compiles += 1
            return fn(*args, **kwargs)

        return wrapper

    for module, owner, attr in (
        ("numba.cuda.compiler", None, "compile_cuda"),
        ("numba.cuda.dispatcher", None, "compile_cuda"),
        ("numba.cuda.simulator.kernel", "FakeCUDAKernel", "__call__"),
    ):
        try:
            mod = importlib.import_module(module)
        except Exception:  # that mode of numba-cuda is not in use here
            continue
        holder = getattr(mod, owner) if owner else mod
        if hasattr(holder, attr):
            setattr(holder, attr, counting(getattr(holder, attr)))


def _route_numba_ufunc_builders() -> None:
    """``numba.vectorize(target='cuda')`` imports numba.cuda.vectorizers from numba's own
    module, which no routing reaches: point numba's builder registries at cujit's."""
    try:
        from numba.np.ufunc.decorators import GUVectorize, Vectorize
    except ImportError:  # no numba: nothing to route
        return
    from cujit.cuda import vectorizers

    for registry, builder in (
        (Vectorize.target_registry, vectorizers.CUDAVectorize),
        (GUVectorize.target_registry, vectorizers.CUDAGUFuncVectorize),
    ):
        registry.ondemand.pop("cuda", None)  # a UniqueDict: a key is set only once
        registry.ondemand["cuda"] = lambda builder=builder: builder


def _dotted_name(path: str) -> str:
    """numba.cuda.tests.cudapy.test_x for .../numba_cuda/numba/cuda/tests/cudapy/test_x.py"""
    parts = os.path.splitext(os.path.abspath(path))[0].split(os.sep)
    return ".".join(parts[parts.index("numba", len(parts) - 6) :])


class _Module(pytest.Module):
    """A test file imported by its package name (numba.cuda.tests...), so that the
    router sees it: pytest's own import would name it after the nearest sys.path entry."""

    def _getobj(self):
        return importlib.import_module(_dotted_name(str(self.path)))


class Plugin:
    """Writes one JSON line per test: its outcome, message and what was compiled."""

    def __init__(self, out, skip: set[str], timeout: float) -> None:
        self.out, self.skip, self.timeout = out, skip, timeout
        self.reports: list = []
        self.started = 0.0

    def write(self, record: dict) -> None:
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    @pytest.hookimpl(tryfirst=True)
    def pytest_collect_directory(self, path, parent):
        # A plain folder, not a Package: a Package would import its __init__ by pytest's
        # own module naming (see _Module).
        return pytest.Dir.from_parent(parent, path=path)

    @pytest.hookimpl(tryfirst=True)
    def pytest_pycollect_makemodule(self, module_path, parent):
        return _Module.from_parent(parent, path=module_path)

    def pytest_collection_modifyitems(self, items, config) -> None:
        keep = [i for i in items if test_id(i.nodeid) not in self.skip]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.write({"collect_error": test_id(report.nodeid), "message": _message(report)})

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        self.write({"start": test_id(nodeid)})
        # A test that hangs, in Python or in native code, ends this process: the parent
        # records it as a timeout and starts another worker for the rest.
        faulthandler.dump_traceback_later(self.timeout, exit=True, file=_STDERR)
        self.reports = []
        Counts.reset()
        self.started = time.perf_counter()

    def pytest_runtest_logreport(self, report) -> None:
        self.reports.append(report)

    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        outcome, message = classify(self.reports)
        if outcome == "passed":
            if Counts.numba_compiles:
                outcome = "numba-compiled"
            elif not (Counts.compiles or Counts.launches):
                outcome = "no-kernel"
        self.write(
            {
                "id": test_id(nodeid),
                "outcome": outcome,
                "message": message,
                "compiles": Counts.compiles,
                "launches": Counts.launches,
                "numba_compiles": Counts.numba_compiles,
                "seconds": round(time.perf_counter() - self.started, 3),
            }
        )


@pytest.fixture
def initialize_from_pytest_config():
    """Harness shim: numba-cuda's CUDATestCase names this fixture of its source tree."""
    yield


def test_id(nodeid: str) -> str:
    """cudapy/test_x.py::TestY::test_z, whatever the folder pytest ran from."""
    path, sep, rest = nodeid.partition("::")
    parts = path.replace(os.sep, "/").split("/")
    return "/".join(parts[-2:]) + sep + rest


def _message(report) -> str:
    text = str(report.longrepr or "")
    lines = [ln for ln in text.splitlines() if ln.startswith("E ")]
    if lines:
        return "\n".join(ln[1:].strip() for ln in lines[:3])[:500]
    return text.strip().splitlines()[-1][:500] if text.strip() else ""


def classify(reports) -> tuple[str, str]:
    """pytest's phase reports as one outcome: passed, failed, error or skipped."""
    for rep in reports:
        if rep.failed:
            return ("failed" if rep.when == "call" else "error"), _message(rep)
    for rep in reports:
        if rep.skipped:
            reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
            return "skipped", str(reason)[:300]
    return "passed", ""


def main(argv: list[str]) -> int:
    skip: set[str] = set()
    if "--skip" in argv:
        at = argv.index("--skip")
        argv, skip = argv[:at], set(argv[at + 1 :])
    events_path, timeout, files = argv[0], float(argv[1]), argv[2:]
    sys.meta_path.insert(0, TestModuleRouter())
    from cujit import events

    events.subscribe(Counts.cujit_event)
    _stand_in_for_filecheck()
    _device_queries_from_cujit()
    _count_numba_cuda()
    _route_numba_ufunc_builders()
    # Collection (importing the files) has a bound of its own, apart from the tests'.
    faulthandler.dump_traceback_later(max(timeout * 4, 300), exit=True, file=_STDERR)
    with open(events_path, "a") as out:
        plugin = Plugin(out, skip, timeout)
        args = [
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "--assert=plain",
            "--continue-on-collection-errors",
            "-o",
            "python_files=test_*.py",
            "--rootdir",
            os.path.dirname(os.path.dirname(files[0])),
            "--noconftest",
            "-W",
            "ignore::DeprecationWarning",
            *files,
        ]
        pytest.main(args, plugins=[plugin, sys.modules[__name__]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
