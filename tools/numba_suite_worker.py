"""One worker of tools/numba_suite.py: runs numba-cuda's test files under pytest with
``numba.cuda`` served by cujit, and writes one JSON line per test.

    python tools/numba_suite_worker.py EVENTS.jsonl TIMEOUT_S FILE.py [FILE.py...]
        [--skip ID...] [--leave-out ID...]

``--skip``: tests already recorded (by an earlier worker over these files); ``--leave-out``:
the entries of conformance/excluded.txt with ``::`` (one test, or ``FILE::Class`` for all
of a class's tests), which are not run and are reported as left out.

Routing (imports only; tools/numba_suite_routing.py says exactly what goes where).
numba-cuda's test harness (``numba.cuda.testing``, ``numba.cuda.tests.support``,
``numba.cuda.core.config``...) is built on numba-cuda's own internals, so numba-cuda
stays installed under its own names and the harness runs on it unchanged.  What the
*tests* import is routed: ``numba.cuda`` and its API modules are cujit's.  A test's
child processes get the same routing (the ``sitecustomize`` of tools/numba_suite_child,
put first on their PYTHONPATH), and cujit's compiles and launches in them are counted
as the test's.

A test that reaches numba-cuda's compiler through a harness module compiles with
numba-cuda: the worker counts those compilations too, and such a test is no pass.

Harness shims (for the test harness only, never for API a kernel uses):

- ``initialize_from_pytest_config``, the fixture numba-cuda's CUDATestCase names, lives
  in numba-cuda's source tree but not in its wheel: a fixture that only turns off the
  dumping of failed FileChecks to files (``_dump_failed_filechecks``) stands in;
- ``np.row_stack``, removed in NumPy 2.5, is set to ``np.vstack`` where NumPy lacks it
  (in the worker and its children): numba-cuda's own ``np/arrayobj.py`` names it at
  import (``numba_suite_routing.numpy_row_stack_shim``);
- on the CPU target in device mode, numba-cuda's harness asks cujit's CPU device for the
  compute capability (``_device_queries_from_cujit``), and the NRT allocation counters
  that ``MemoryLeakMixin`` compares are those of a heap nothing allocates from
  (``_nrt_statistics_without_a_gpu``: no cujit kernel uses numba-cuda's NRT);
- where the ``filecheck`` package is not installed (a machine without the ``conformance``
  extra's dependencies), stand-in modules let ``numba.cuda.testing`` import; the
  FileCheck assertions then fail, naming the missing package.

Counting: ``cujit.events`` tells the worker of every compile and launch (a child's come
through the file ``CUJIT_SUITE_CHILD_EVENTS`` names); a test that passes with no cujit
compile or launch is 'no-kernel', and one during which numba-cuda compiled or simulated
a kernel is 'numba-compiled'.  A test running past TIMEOUT_S ends the worker
(faulthandler): the parent records it as 'timeout' and starts a new worker for the
tests left.
"""

from __future__ import annotations

import faulthandler
import importlib
import importlib.util
import json
import os
import sys
import tempfile
import time
import types as pytypes

import numba_suite_audit
import numba_suite_routing as routing
import pytest

_stderr_copy = None


def _stderr():
    """The worker's own stderr, which pytest's capturing of fd 2 leaves alone: a
    timeout's report must reach the parent.  Made at first use, so that a process that
    only imports this module (the tests do) leaves no file open at exit."""
    global _stderr_copy
    if _stderr_copy is None:
        _stderr_copy = os.fdopen(os.dup(2), "w")
    return _stderr_copy


class Counts:
    """What cujit and numba-cuda did during the current test."""

    compiles = launches = numba_compiles = 0
    audited = False
    audit = numba_suite_audit.Audit()

    @classmethod
    def reset(cls) -> None:
        cls.compiles = cls.launches = cls.numba_compiles = 0
        cls.audit.reset()

    @classmethod
    def add_child_events(cls, events: list[tuple[str, str]]) -> None:
        for kind, name in events:
            if kind == "compile":
                cls.compiles += 1
            elif kind == "launch":
                cls.launches += 1
            elif kind == "cujit-call":
                cls.audit.cujit_calls += 1
            elif kind == "numba-call":
                cls.audit.numba_calls.append(name)

    @classmethod
    def outcome(cls, outcome: str, message: str) -> tuple[str, str]:
        """A passed test's outcome from what cujit and numba-cuda did during it."""
        if outcome != "passed":
            return outcome, message
        if cls.numba_compiles:
            return "numba-compiled", message
        if cls.compiles or cls.launches:
            return outcome, message
        if not cls.audited:
            return "no-kernel", message
        return numba_suite_audit.outcome(cls.audit.cujit_calls, cls.audit.numba_calls)

    @classmethod
    def cujit_event(cls, kind: str, name: str, target: str) -> None:
        if kind == "compile":
            cls.compiles += 1
        else:
            cls.launches += 1


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
    """Harness shim for the CPU target's device mode (``--harness device``): numba-cuda's
    harness asks cujit's CPU device for the compute capability
    (``routing.device_queries_from_cujit``; the test's children get the same shim)."""
    if not routing.cpu_device_mode():
        return
    routing.device_queries_from_cujit(importlib.import_module("numba.cuda.testing"))


class _UnusedNRTStatistics:
    """numba-cuda's NRT statistics (``rtsys``) of a heap nothing allocates from: see
    ``_nrt_statistics_without_a_gpu``."""

    def __init__(self, stats_type) -> None:
        self._stats_type, self._enabled = stats_type, False

    def memsys_enable_stats(self, stream=None) -> None:
        self._enabled = True

    def memsys_disable_stats(self, stream=None) -> None:
        self._enabled = False

    def memsys_stats_enabled(self, stream=None) -> bool:
        return self._enabled

    def get_allocation_stats(self, stream=None):
        if not self._enabled:
            raise RuntimeError("NRT stats are disabled.")  # numba-cuda's own refusal
        return self._stats_type(alloc=0, free=0, mi_alloc=0, mi_free=0)


def _nrt_statistics_without_a_gpu() -> None:
    """Harness shim for the CPU target's device mode: ``MemoryLeakMixin`` (test_array_
    reductions) reads numba-cuda's NRT allocation counters (``numba.cuda.tests.support.
    rtsys``) before and after each test.  Those count numba-cuda's device heap, which no
    cujit kernel uses on any target (cujit has no NRT: its kernels allocate nothing on a
    heap), so on a GPU the check sees none of cujit's work.  Without a GPU numba-cuda's
    NRT cannot start (it launches its own memsys kernel through numba-cuda's driver), and
    setUp failed before any kernel ran.  Here the harness module's name is replaced by
    the counters of a heap nothing allocates from: the leak check stays as empty as on a
    GPU, and the test's kernels run and are checked as there."""
    if os.environ.get("CUJIT_TARGET") != "cpu" or os.environ.get("NUMBA_ENABLE_CUDASIM"):
        return
    support = importlib.import_module("numba.cuda.tests.support")
    nrt = importlib.import_module("numba.cuda.memory_management.nrt")
    support.rtsys = _UnusedNRTStatistics(nrt._nrt_mstats)


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

    def __init__(self, out, skip: set[str], leave_out: set[str], timeout: float) -> None:
        self.out, self.skip, self.leave_out, self.timeout = out, skip, leave_out, timeout
        self.reports: list = []
        self.started = 0.0
        self.child_events = ""

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
        keep = []
        for item in items:
            tid = test_id(item.nodeid)
            if tid in self.skip:
                continue
            if left_out(tid, self.leave_out):
                self.write({"left_out": tid})
                continue
            keep.append(item)
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.write({"collect_error": test_id(report.nodeid), "message": _message(report)})

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        self.write({"start": test_id(nodeid)})
        # A test that hangs, in Python or in native code, ends this process: the parent
        # records it as a timeout and starts another worker for the rest.
        faulthandler.dump_traceback_later(self.timeout, exit=True, file=_stderr())
        self.reports = []
        Counts.reset()
        fd, self.child_events = tempfile.mkstemp(prefix="cujit-child-", suffix=".events")
        os.close(fd)
        os.environ.update(routing.child_environment(self.child_events))
        self.started = time.perf_counter()

    def pytest_runtest_logreport(self, report) -> None:
        self.reports.append(report)

    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        Counts.add_child_events(routing.read_child_events(self.child_events))
        outcome, message = Counts.outcome(*classify(self.reports))
        self.write(
            {
                "id": test_id(nodeid),
                "outcome": outcome,
                "message": message,
                "compiles": Counts.compiles,
                "launches": Counts.launches,
                "numba_compiles": Counts.numba_compiles,
                "cujit_calls": Counts.audit.cujit_calls,
                "seconds": round(time.perf_counter() - self.started, 3),
            }
        )


@pytest.fixture
def initialize_from_pytest_config(request):
    """Harness shim: numba-cuda's CUDATestCase names this fixture of its source tree, which
    sets the test's ``_dump_failed_filechecks`` (write a failed FileCheck's input to
    files); here it is off, so a failed FileCheck fails with its own message."""
    if request.instance is not None:
        request.instance._dump_failed_filechecks = False
    yield


def left_out(tid: str, leave_out: set[str]) -> bool:
    """Whether ``tid`` (FILE::Class::test) is left out by id or by its class."""
    return tid in leave_out or tid.rsplit("::", 1)[0] in leave_out


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


def _option(argv: list[str], flag: str) -> set[str]:
    """The values after ``flag`` (to the next ``--`` flag or the end), taken out of argv."""
    if flag not in argv:
        return set()
    at = argv.index(flag)
    end = next((i for i in range(at + 1, len(argv)) if argv[i].startswith("--")), len(argv))
    values = set(argv[at + 1 : end])
    del argv[at:end]
    return values


def _numba_config_from_numba_cuda() -> None:
    """numba-cuda's harness sets numba's config on numba-cuda's own module
    (``override_config``, ``CUDATestCase.setUp``): cujit reads its numba config from that
    module (``cujit.numba_config.follow``) in the worker, as a drop-in user's program
    would set it on ``numba.cuda.core.config``, which is cujit's there."""
    from numba.cuda.core import config

    from cujit import numba_config

    numba_config.follow(config)


def main(argv: list[str]) -> int:
    leave_out = _option(argv, "--leave-out")
    skip = _option(argv, "--skip")
    events_path, timeout, files = argv[0], float(argv[1]), argv[2:]
    routing.numpy_row_stack_shim()
    sys.meta_path.insert(0, routing.TestModuleRouter())
    from cujit import events

    events.subscribe(Counts.cujit_event)
    Counts.audited = Counts.audit.install()
    _stand_in_for_filecheck()
    _device_queries_from_cujit()
    _nrt_statistics_without_a_gpu()
    _count_numba_cuda()
    _route_numba_ufunc_builders()
    _numba_config_from_numba_cuda()
    # Collection (importing the files) has a bound of its own, apart from the tests'.
    faulthandler.dump_traceback_later(max(timeout * 4, 300), exit=True, file=_stderr())
    with open(events_path, "a") as out:
        plugin = Plugin(out, skip, leave_out, timeout)
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
