"""The host-API audit of tools/numba_suite.py (tools/numba_suite_audit.py): a test that
compiles no kernel is a pass of cujit's host API only when its own code called cujit and
nothing of numba-cuda's implementation.  Stand-in packages play cujit, numba-cuda's
implementation and its harness, so no numba-cuda install is needed."""

from __future__ import annotations

import os
import sys
import types

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "tools"))
import numba_suite_audit as audit  # noqa: E402

pytestmark = pytest.mark.skipif(
    not audit.AVAILABLE, reason="the audit uses sys.monitoring (Python 3.12 and later)"
)


def _module(name: str, path: str, source: str) -> types.ModuleType:
    """A module named ``name`` whose functions' code says it lives in file ``path``."""
    module = types.ModuleType(name)
    exec(compile(source, path, "exec"), module.__dict__)
    return module


@pytest.fixture
def world(tmp_path):
    cujit_dir = tmp_path / "cujit"
    numba_dir = tmp_path / "numba_cuda" / "numba" / "cuda"
    for d in (cujit_dir, numba_dir / "tests"):
        d.mkdir(parents=True)
    fns = "def api(x):\n    return x + 1\n"
    cujit_mod = _module("fake_cujit", str(cujit_dir / "api.py"), fns)
    numba_impl = _module("fake_numba_impl", str(numba_dir / "cudadrv.py"), fns)
    harness = _module(
        "fake_harness",
        str(numba_dir / "testing.py"),
        "def set_up(impl):\n    return impl.api(0)\n",
    )
    cujit_inner = _module(
        "fake_cujit_inner",
        str(cujit_dir / "inner.py"),
        "def uses_numba(impl):\n    return impl.api(1)\n",
    )
    # A test module: is_routed() names numba-cuda's test packages.
    test = _module(
        "numba.cuda.tests.cudapy.test_probe",
        str(numba_dir / "tests" / "cudapy" / "test_probe.py"),
        "def call(f, *a):\n    return f(*a)\n"
        "def direct_cujit(m):\n    return m.api(2)\n"
        "def direct_numba(m):\n    return m.api(3)\n",
    )
    a = audit.Audit(cujit_dir=str(cujit_dir), numba_cuda_dir=str(numba_dir))
    assert a.install()
    yield a, test, cujit_mod, numba_impl, harness, cujit_inner
    a.uninstall()


def test_a_test_calling_cujit_only_is_a_host_pass(world):
    a, test, cujit_mod, numba_impl, harness, cujit_inner = world
    a.reset()
    assert test.direct_cujit(cujit_mod) == 3
    assert (a.cujit_calls, a.numba_calls) == (1, [])
    assert audit.outcome(a.cujit_calls, a.numba_calls) == ("host", "")


def test_a_test_calling_numba_cudas_implementation_is_no_pass(world):
    a, test, cujit_mod, numba_impl, harness, cujit_inner = world
    a.reset()
    test.direct_cujit(cujit_mod)
    test.direct_numba(numba_impl)
    kind, reason = audit.outcome(a.cujit_calls, a.numba_calls)
    assert kind == "numba-served"
    assert "api" in reason


def test_calls_made_by_the_harness_or_by_cujit_are_not_the_tests(world):
    a, test, cujit_mod, numba_impl, harness, cujit_inner = world
    a.reset()
    harness.set_up(numba_impl)  # numba-cuda's harness using its own implementation
    cujit_inner.uses_numba(numba_impl)  # cujit calling numba-cuda: cujit's business
    assert (a.cujit_calls, a.numba_calls) == (0, [])
    assert audit.outcome(0, []) == ("no-kernel", "")


def test_a_numba_function_first_called_by_the_harness_is_still_seen_from_the_test(world):
    a, test, cujit_mod, numba_impl, harness, cujit_inner = world
    a.reset()
    harness.set_up(numba_impl)
    test.direct_numba(numba_impl)
    assert a.numba_calls == ["api"]


def test_each_test_starts_from_nothing_and_sees_functions_again(world):
    a, test, cujit_mod, numba_impl, harness, cujit_inner = world
    a.reset()
    test.direct_numba(numba_impl)
    test.direct_cujit(cujit_mod)
    a.reset()
    assert (a.cujit_calls, a.numba_calls) == (0, [])
    # the same functions, called again in the next test, are seen again
    test.direct_numba(numba_impl)
    test.direct_cujit(cujit_mod)
    assert (a.cujit_calls, a.numba_calls) == (1, ["api"])


def test_findings_go_to_the_sink_as_they_are_made(world, tmp_path):
    a = world[0]
    a.uninstall()
    seen = []
    child = audit.Audit(
        main_is_test=True,
        sink=lambda kind, name: seen.append((kind, name)),
        cujit_dir=str(tmp_path / "cujit"),
        numba_cuda_dir=str(tmp_path / "numba_cuda" / "numba" / "cuda"),
    )
    assert child.install()
    try:
        main = _module("__main__", "<string>", "def run(m):\n    return m.api(5)\n")
        main.run(world[2])
        main.run(world[3])
    finally:
        child.uninstall()
    assert seen == [("cujit-call", "api"), ("numba-call", "api")]
