"""tools/numba_suite.py's harness: a test's child processes are routed to cujit and their
kernels counted, tests and classes can be left out one by one, and NumPy's removed
``row_stack`` is given back to numba-cuda's modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import numba_suite_routing as routing  # noqa: E402
import numba_suite_worker as worker  # noqa: E402

KERNEL_CHILD = """\
from numba import cuda
import numpy as np

@cuda.jit
def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= 2

x = np.arange(5, dtype=np.float32) + 1
double[1, 8](x)
double[1, 8](x)
print(cuda.__name__, x.tolist())
"""


def _child(code: str, events: str, **extra) -> subprocess.CompletedProcess:
    """A ``python -c`` child as the worker starts one (see routing.child_environment)."""
    env = dict(os.environ, CUJIT_TARGET="cpu", NUMBA_ENABLE_CUDASIM="1")
    env.pop("CUJIT_NUMBA", None)
    # The caller's path stays after ours (filecheck may live there, as on the GPU machine).
    env["PYTHONPATH"] = os.pathsep.join(
        [routing.CHILD_DIR, os.path.join(ROOT, "src")]
        + [p for p in [os.environ.get("PYTHONPATH")] if p]
    )
    env[routing.CHILD_EVENTS] = events
    env.update(extra)
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_a_python_c_child_gets_cujit_and_its_kernels_are_counted(tmp_path):
    pytest.importorskip("numba")
    events = str(tmp_path / "child.events")
    # CUJIT_COARSEN=0: the kernel's coarsened variant would be a second compile
    proc = _child(KERNEL_CHILD, events, CUJIT_COARSEN="0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    name, values = proc.stdout.strip().split(" ", 1)
    assert name == "cujit.cuda"
    assert json.loads(values) == [4.0, 8.0, 12.0, 16.0, 20.0]  # (i + 1) * 2 * 2
    kinds = [kind for kind, name in routing.read_child_events(events)]
    assert (kinds.count("compile"), kinds.count("launch")) == (1, 2)
    # the host-API audit runs in the child too (Python 3.12 and later): its code called
    # cujit, and nothing of numba-cuda's implementation
    if sys.version_info >= (3, 12):
        assert "cujit-call" in kinds and "numba-call" not in kinds
    assert not os.path.exists(events)  # read once: the next test starts from nothing


def test_a_child_that_imports_numba_cuda_harness_modules_still_gets_them(tmp_path):
    pytest.importorskip("numba_cuda")
    # numba-cuda's own modules stay numba-cuda's in a child, as in the worker: only
    # the child's own code (its __main__) and the test modules are routed.
    code = (
        "from numba.cuda.core import config as c\n"
        "from numba import cuda\n"
        "print(c.__name__.startswith('numba.') and hasattr(c, 'ENABLE_CUDASIM'), cuda.__name__)\n"
    )
    proc = _child(code, str(tmp_path / "e"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["True", "cujit.cuda"]


def test_without_the_events_variable_the_child_folder_does_nothing(tmp_path):
    pytest.importorskip("numba_cuda")
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([routing.CHILD_DIR, os.path.join(ROOT, "src")]),
        NUMBA_ENABLE_CUDASIM="1",
    )
    env.pop(routing.CHILD_EVENTS, None)
    env.pop("CUJIT_NUMBA", None)
    code = "from numba import cuda; print(cuda.__name__)"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() != "cujit.cuda"


def test_child_events_are_read_as_kind_and_name(tmp_path):
    path = tmp_path / "ev"
    path.write_text("compile\tf\nlaunch\tf\nnumba-call\tDeviceNDArray.__init__\ncujit-call\n")
    assert routing.read_child_events(str(path)) == [
        ("compile", "f"),
        ("launch", "f"),
        ("numba-call", "DeviceNDArray.__init__"),
        ("cujit-call", ""),
    ]
    assert routing.read_child_events(str(path)) == []  # removed after reading


def test_the_child_environment_puts_the_child_folder_first_once(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/a", routing.CHILD_DIR, "/b"]))
    env = routing.child_environment("/tmp/x.events")
    assert env["PYTHONPATH"].split(os.pathsep) == [routing.CHILD_DIR, "/a", "/b"]
    assert env[routing.CHILD_EVENTS] == "/tmp/x.events"


def test_row_stack_shim_restores_the_alias_only_where_numpy_lacks_it(monkeypatch):
    if hasattr(np, "row_stack"):
        monkeypatch.delattr(np, "row_stack")
    routing.numpy_row_stack_shim()
    assert np.row_stack is np.vstack
    a, b = np.array([1, 2]), np.array([3, 4])
    assert np.array_equal(np.row_stack((a, b)), [[1, 2], [3, 4]])
    own = object()
    monkeypatch.setattr(np, "row_stack", own, raising=False)
    routing.numpy_row_stack_shim()  # NumPy has one: left alone
    assert np.row_stack is own


def test_left_out_matches_a_test_by_id_or_by_its_class():
    leave = {"cudapy/test_a.py::TestX", "cudapy/test_b.py::TestY::test_one"}
    assert worker.left_out("cudapy/test_a.py::TestX::test_any", leave)
    assert worker.left_out("cudapy/test_b.py::TestY::test_one", leave)
    assert not worker.left_out("cudapy/test_b.py::TestY::test_two", leave)
    assert not worker.left_out("cudapy/test_a.py::TestXY::test_any", leave)


def test_the_collection_writes_left_out_tests_and_keeps_the_rest():
    records = []
    plugin = worker.Plugin(
        SimpleNamespace(write=lambda s: records.append(json.loads(s)), flush=lambda: None),
        {"cudapy/test_a.py::T::test_done"},
        {"cudapy/test_a.py::Internals"},
        60,
    )
    ids = [
        "numba/cuda/tests/cudapy/test_a.py::T::test_done",
        "numba/cuda/tests/cudapy/test_a.py::T::test_new",
        "numba/cuda/tests/cudapy/test_a.py::Internals::test_graph",
    ]
    items = [SimpleNamespace(nodeid=i) for i in ids]
    deselected = []
    config = SimpleNamespace(
        hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items))
    )
    plugin.pytest_collection_modifyitems(items, config)
    assert [i.nodeid for i in items] == [ids[1]]
    assert records == [{"left_out": "cudapy/test_a.py::Internals::test_graph"}]
    assert len(deselected) == 2


def test_worker_options_are_taken_out_of_the_arguments():
    argv = ["ev.jsonl", "60", "f.py", "--skip", "a", "b", "--leave-out", "c"]
    assert worker._option(argv, "--leave-out") == {"c"}
    assert worker._option(argv, "--skip") == {"a", "b"}
    assert argv == ["ev.jsonl", "60", "f.py"]
    assert worker._option(argv, "--skip") == set()


def test_excluded_classes_of_the_suite_are_left_out_and_counted(tmp_path):
    pytest.importorskip("numba_cuda")
    pytest.importorskip("filecheck")
    # On the CPU target test_caching's class of numba-cuda's code library is left out by
    # conformance/excluded.txt, not run: it is in no outcome.
    out = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "numba_suite.py"), "-k",
         "cudapy/test_const_string", "--no-check", "--json", str(out)],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    ids = {t["id"] for t in json.loads(out.read_text())["tests"]}
    assert ids and not any("TestConstStringCodegen" in i for i in ids)
    assert any("TestConstString::" in i for i in ids)


def test_a_child_importing_a_test_module_gets_it_routed(tmp_path):
    pytest.importorskip("numba_cuda")
    # numba-cuda's harness, which the test module imports, imports filecheck (the
    # conformance extra: pip install -e '.[conformance]')
    pytest.importorskip("filecheck")
    # What a multiprocessing spawn worker does to find a test's function: import the
    # test module by name, which must see cujit as the worker's copy does.
    code = (
        "import importlib\n"
        "m = importlib.import_module('numba.cuda.tests.cudapy.test_idiv')\n"
        "print(m.cuda.__name__)\n"
    )
    proc = _child(code, str(tmp_path / "e"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-1] == "cujit.cuda"


def test_the_fixture_shim_turns_off_filecheck_dumps():
    case = SimpleNamespace()
    fixture = worker.initialize_from_pytest_config.__wrapped__
    gen = fixture(SimpleNamespace(instance=case))
    next(gen)
    assert case._dump_failed_filechecks is False
    gen = fixture(SimpleNamespace(instance=None))  # a test function, not a TestCase
    next(gen)


def test_numba_cudas_transpose_kernel_module_is_routed_like_a_usecase_module(tmp_path):
    pytest.importorskip("numba_cuda")
    code = (
        "from numba.cuda.kernels import transpose as t\n"
        "from numba.cuda import kernels\n"
        "print(t.cuda.__name__)\n"
    )
    proc = _child(code, str(tmp_path / "e"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-1] == "cujit.cuda"


def test_test_code_is_recognised_by_its_module_name():
    assert routing.is_routed("numba.cuda.tests.cudapy.test_idiv")
    assert routing.is_routed("numba.cuda.tests.cudapy.cache_usecases")
    assert routing.is_routed("cuda_caching_test_fodder")  # test_caching's copy of a usecase
    assert routing.is_routed("numba.cuda.kernels.transpose")
    assert not routing.is_routed("numba.cuda.kernels.reduction")  # numba-cuda's own cuda.reduce
    assert not routing.is_routed("numba.cuda.testing")
    assert not routing.is_routed("pkg.cuda_caching_test_fodder")


def test_numba_cudas_driver_error_module_is_cujits_in_test_code(tmp_path):
    pytest.importorskip("numba_cuda")
    code = (
        "from numba.cuda.cudadrv.error import CudaDriverError\n"
        "from numba.cuda.cudadrv import driver\n"
        "print(CudaDriverError.__module__, driver.__name__)\n"
    )
    proc = _child(code, str(tmp_path / "e"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    # The error class is cujit's; numba-cuda's driver module stays its own.
    error_module, driver_module = proc.stdout.split()
    assert error_module == "cujit.runtime.driver"
    assert driver_module.startswith("numba.cuda.")  # the simulator's here: CUDASIM is set
