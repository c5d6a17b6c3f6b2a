"""Which implementation served a test that compiled no kernel: the host-API audit of
tools/numba_suite.py.

A numba-cuda test can pass while cujit compiles and launches nothing: one that checks a
device array's shape, a stream, an event, or an error raised before any compile.  Such a
pass says something about cujit only if the test's own code called cujit, and nothing of
numba-cuda's implementation.  This module watches, with ``sys.monitoring`` (Python 3.12
and later), every Python function that starts while a test runs, and looks at its direct
caller:

- a function of cujit's package called from test code (a module ``is_routed`` names) is a
  **cujit call**;
- a function of numba-cuda's implementation (its package, less its test packages and its
  harness module ``numba/cuda/testing.py``) called from test code is a **numba-cuda call**,
  recorded by its qualified name.

Calls that numba-cuda's harness makes (setUp, tearDown, skip decorators, FileCheck) are
neither, nor are the calls cujit makes.  A test that passed without a kernel is a host-API
pass ('host') only with at least one cujit call and no numba-cuda call; with a numba-cuda
call it is 'numba-served', a failure of the audit, and without a cujit call it stays
'no-kernel'.

Each function is looked at once per test: after its first start it is disabled
(``sys.monitoring.DISABLE``) until the next test restarts the events.  The one exception
is a numba-cuda function first called from outside test code, which stays watched, since
a later call in the same test may come from test code.  Where ``sys.monitoring`` is
missing (Python 3.11), ``AVAILABLE`` is false and nothing is audited.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import numba_suite_routing as routing

MONITORING = getattr(sys, "monitoring", None)
AVAILABLE = MONITORING is not None


def _dir(path: str) -> str:
    return os.path.realpath(path) + os.sep


def _package_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return "\0"  # matches no file
    return _dir(list(spec.submodule_search_locations)[0])


class Audit:
    """What the current test's code called, of cujit and of numba-cuda."""

    def __init__(
        self,
        main_is_test: bool = False,
        sink=None,
        cujit_dir: str | None = None,
        numba_cuda_dir: str | None = None,
    ) -> None:
        # In a test's child process, the code run as ``__main__`` (``python -c``) is test
        # code, and each finding goes to ``sink(kind, name)`` as it is made (a child may
        # end by os._exit, which runs no exit handler).
        self._main_is_test = main_is_test
        self._sink = sink
        self.cujit_calls = 0
        self.numba_calls: list[str] = []
        self._tool: int | None = None
        self._cujit = _package_dir("cujit") if cujit_dir is None else _dir(cujit_dir)
        if numba_cuda_dir is None:
            root = _package_dir("numba_cuda")
            self._numba_cuda = root if root == "\0" else _dir(os.path.join(root, "numba", "cuda"))
        else:
            self._numba_cuda = _dir(numba_cuda_dir)
        self._harness = (
            self._numba_cuda + "tests" + os.sep,
            self._numba_cuda + "testing.py",
        )
        self._kinds: dict[str, str] = {}

    def uninstall(self) -> None:
        if self._tool is not None:
            MONITORING.set_events(self._tool, 0)
            MONITORING.register_callback(self._tool, MONITORING.events.PY_START, None)
            MONITORING.free_tool_id(self._tool)
            self._tool = None

    def install(self) -> bool:
        """Start watching; False where sys.monitoring is missing or every tool id is taken."""
        if not AVAILABLE:
            return False
        for tool in (MONITORING.PROFILER_ID, 3, 4):
            if MONITORING.get_tool(tool) is None:
                MONITORING.use_tool_id(tool, "cujit-suite-audit")
                self._tool = tool
                break
        else:
            return False
        MONITORING.register_callback(self._tool, MONITORING.events.PY_START, self._started)
        MONITORING.set_events(self._tool, MONITORING.events.PY_START)
        return True

    def reset(self) -> None:
        """A new test: counts cleared and every function watched again."""
        self.cujit_calls = 0
        self.numba_calls = []
        if self._tool is not None:
            MONITORING.restart_events()

    def _kind(self, filename: str) -> str:
        kind = self._kinds.get(filename)
        if kind is None:
            path = os.path.realpath(filename)
            if path.startswith(self._cujit):
                kind = "cujit"
            elif path.startswith(self._numba_cuda) and not path.startswith(self._harness):
                kind = "numba-cuda"
            else:
                kind = "other"
            self._kinds[filename] = kind
        return kind

    def _is_test(self, module: str) -> bool:
        return routing.is_routed(module) or (self._main_is_test and module == "__main__")

    def _started(self, code, offset):
        kind = self._kind(code.co_filename)
        if kind == "other":
            return MONITORING.DISABLE
        # Frame 0 is this callback, 1 the function that started, its f_back the caller.
        caller = sys._getframe(1).f_back
        from_test = caller is not None and self._is_test(caller.f_globals.get("__name__", ""))
        if kind == "cujit":
            if from_test:
                self.cujit_calls += 1
                self._found("cujit-call", code.co_qualname)
            return MONITORING.DISABLE
        if not from_test:
            return None
        self.numba_calls.append(code.co_qualname)
        self._found("numba-call", code.co_qualname)
        return MONITORING.DISABLE

    def _found(self, kind: str, name: str) -> None:
        if self._sink is not None:
            self._sink(kind, name)


def outcome(cujit_calls: int, numba_calls: list[str]) -> tuple[str, str]:
    """The outcome of a passed test with no cujit compile or launch, and its reason."""
    if numba_calls:
        names = ", ".join(sorted(set(numba_calls))[:4])
        return "numba-served", f"the test's code called numba-cuda's implementation: {names}"
    if cujit_calls:
        return "host", ""
    return "no-kernel", ""
