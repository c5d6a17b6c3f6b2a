"""The compiler's warm-up while the CUDA driver starts (``cujit/warmup.py``).

No GPU needed: ``start`` is called directly, the driver's and the device's starts are
stand-ins.  What is loaded is checked in fresh interpreters, where it was not before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from cujit import cuda, int32, warmup
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.ptx import ToolchainNotFoundError, libs
from cujit.runtime import context, driver

SM90 = Options(arch=(9, 0))


def fill(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * i


@pytest.fixture(autouse=True)
def state(monkeypatch):
    """A process that has started no warm-up; its thread is gone after the test."""
    fresh = warmup._State()
    monkeypatch.setattr(warmup, "_state", fresh)
    monkeypatch.delenv("CUJIT_WARMUP", raising=False)
    yield fresh
    warmup._finish(fresh)  # lets a thread waiting for an architecture end
    assert fresh.thread is None or not fresh.thread.is_alive()


def finished(state) -> str:
    thread = state.thread
    assert thread is not None and thread.daemon and thread.name == "cujit-warmup"
    warmup.wait()
    assert not thread.is_alive()
    return state.outcome


def run_fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line last."""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CUJIT_WARMUP", None)
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


# -- starting ----------------------------------------------------------------------------


def test_start_compiles_for_the_arch_and_a_compile_follows(state):
    warmup.note_kernel()
    warmup.start((9, 0))
    assert finished(state) == "compiled for sm_90"
    assert state.quiet  # later waits are one attribute check
    # NVRTC is loaded only by tests that link CUDA C++ (test_linking.py) earlier in the run.
    assert set(libs._loaded) - {"nvrtc"} == {"nvvm", "nvJitLink"}
    result = compile_kernel(fill, (int32[::1],), SM90)
    assert result.symbol == "fill" and result.cubin[:4] == b"\x7fELF"


def test_a_fresh_process_finds_the_compiler_loaded():
    found = run_fresh("""
        import json, sys
        from cujit import warmup
        before = [m for m in ("llvmlite", "cujit.codegen", "cujit.ptx.nvvm", "cujit.infer")
                  if m in sys.modules]
        warmup.note_kernel()
        warmup.start((9, 0))
        warmup.wait()
        from cujit.ptx import libs
        after = [m for m in ("llvmlite", "cujit.codegen", "cujit.ptx.nvvm", "cujit.infer",
                             "cujit.ptx.link", "cujit.passes", "cujit.targets.cuda",
                             "cuda.bindings.nvvm", "cuda.bindings.nvjitlink")
                 if m in sys.modules]
        print(json.dumps({"before": before, "after": after, "libs": sorted(libs._loaded),
                          "outcome": warmup._state.outcome}))
    """)
    assert found["before"] == []
    assert len(found["after"]) == 9, found["after"]
    assert found["libs"] == ["nvJitLink", "nvvm"]
    assert found["outcome"] == "compiled for sm_90"


def test_a_fresh_process_finds_the_variant_analysis_and_the_launch_path_warm():
    # The dispatcher analyses each new kernel for its launch-selected variant: the
    # warm-up has run that analysis once, so its rules are loaded and its records'
    # classes made before the first real compile (which then imports nothing for it);
    # and the runtime's launch path, which cuda.to_device leaves for later, is loaded.
    found = run_fresh("""
        import json, sys
        from cujit import warmup
        before = "cujit.ir.independence_rules" in sys.modules
        launch_before = "cujit.runtime.launch" in sys.modules
        warmup.note_kernel()
        warmup.start((9, 0))
        warmup.wait()
        from cujit import frozen
        from cujit.ir import independence
        lazy = isinstance(vars(independence.Verdict)["__init__"], frozen._LazyInit)
        print(json.dumps({"before": before,
                          "after": "cujit.ir.independence_rules" in sys.modules,
                          "verdict_init_made": not lazy,
                          "launch": [launch_before, "cujit.runtime.launch" in sys.modules],
                          "outcome": warmup._state.outcome}))
    """)
    assert found["before"] is False
    assert found["after"] is True
    assert found["verdict_init_made"] is True
    assert found["launch"] == [False, True]
    assert found["outcome"] == "compiled for sm_90"


def test_the_switch_turns_it_off(state, monkeypatch):
    monkeypatch.setenv("CUJIT_WARMUP", "0")
    warmup.note_kernel()
    warmup.start((9, 0))
    assert state.thread is None and not state.started
    warmup.wait()  # nothing to wait for
    assert state.quiet


def test_no_pending_kernel_starts_nothing(state):
    warmup.start((9, 0))
    assert state.thread is None and not state.started


def test_no_start_once_a_compile_has_begun(state):
    warmup.wait()  # what compile_kernel does first
    warmup.note_kernel()
    warmup.start((9, 0))
    assert state.thread is None


def test_start_twice_starts_one_thread(state, monkeypatch):
    runs = []
    run = warmup._run

    def counted(s):
        runs.append(threading.current_thread())
        run(s)

    monkeypatch.setattr(warmup, "_run", counted)
    warmup.note_kernel()
    warmup.start((9, 0))
    first = state.thread
    warmup.start((8, 0))
    assert state.thread is first
    assert finished(state) == "compiled for sm_90"  # the second arch changed nothing
    warmup.start((8, 0))  # once per process, even after it ended
    assert runs == [first]


# -- the architecture, from the device -------------------------------------------------


def test_the_compile_waits_for_the_arch(state):
    warmup.note_kernel()
    warmup.start()
    warmup.set_arch((8, 0))
    warmup.set_arch((9, 0))  # the first counts
    assert finished(state) == "compiled for sm_80"


def test_wait_before_any_arch_does_not_hang(state):
    warmup.note_kernel()
    warmup.start()
    assert finished(state) == "loaded"  # imported and loaded, compiled nothing


class FakeDriver:
    """``cuda.bindings.driver`` of a machine whose cuInit finds no device."""

    def __init__(self, state):
        self.state = state
        self.started_before_init = None

    def cuInit(self, flags):
        self.started_before_init = self.state.thread is not None
        return (100,)  # CUDA_ERROR_NO_DEVICE


def test_the_driver_starts_it_before_cuinit(state, monkeypatch):
    fake = FakeDriver(state)
    monkeypatch.setattr(driver, "_drv", None)
    monkeypatch.setattr(driver, "_init_error", None)
    monkeypatch.setattr(driver, "_import_bindings", lambda: fake)
    warmup.note_kernel()
    assert not driver.is_available()
    assert fake.started_before_init
    assert finished(state) == "loaded"  # no device: no architecture to compile for


def test_a_device_hands_its_arch_over(state, monkeypatch):
    values = {"COMPUTE_CAPABILITY_MAJOR": 8, "COMPUTE_CAPABILITY_MINOR": 6}

    def call(name, *args):
        if name == "cuDeviceGetName":
            return b"Fake GPU\0"
        if name == "cuDeviceGetAttribute":
            return values.get(args[0].removeprefix("CU_DEVICE_ATTRIBUTE_"), 1)
        return 0

    attrs = type("Attributes", (), {"__getattr__": lambda self, name: name})()
    monkeypatch.setattr(
        context, "get_driver", lambda: type("D", (), {"CUdevice_attribute": attrs})()
    )
    monkeypatch.setattr(context, "call", call)
    warmup.note_kernel()
    warmup.start()
    assert context.Device(0).compute_capability == (8, 6)
    assert finished(state) == "compiled for sm_86"


# -- failures, and the warm-up's own compile ------------------------------------------


LINUX = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's"
)
IDLE = (0.0, 0.0, 0.0)  # os.getloadavg() of a machine with every core idle


@LINUX
def test_on_an_idle_machine_the_thread_yields_to_the_driver(state, monkeypatch):
    import numpy  # noqa: F401 -- loaded first, or the thread keeps its priority

    monkeypatch.setattr(os, "getloadavg", lambda: IDLE)
    main = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    warmup.note_kernel()
    warmup.start((9, 0))
    assert finished(state) == "compiled for sm_90"
    assert state.nice == 19  # the thread's own value, read back
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main


@LINUX
def test_on_a_busy_machine_the_thread_keeps_its_priority(state, monkeypatch):
    cores = len(os.sched_getaffinity(0))
    monkeypatch.setattr(os, "getloadavg", lambda: (cores / 2 + 0.5,) * 3)
    warmup.note_kernel()
    warmup.start((9, 0))
    assert finished(state) == "compiled for sm_90"
    assert state.nice is None


NICE_OF_EVERY_THREAD = """
    import json, os, sys, threading, time
    {imports}
    from cujit import pipeline, warmup
    if {library_thread}:
        # a library that starts a long-lived thread during its first compile
        compile_kernel, keep = pipeline.compile_kernel, threading.Event()
        def starting_a_thread(*args, **kwargs):
            threading.Thread(target=keep.wait, daemon=True).start()
            return compile_kernel(*args, **kwargs)
        pipeline.compile_kernel = starting_a_thread
    os.getloadavg = lambda: (0.0, 0.0, 0.0)
    numpy_first = "numpy" in sys.modules
    warmup.note_kernel()
    warmup.start((9, 0))
    warmup.wait()
    state = warmup._state
    ended = [str(t.native_id) for t in (state.thread, getattr(state, "loader", None)) if t]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and set(ended) & set(os.listdir("/proc/self/task")):
        time.sleep(0.01)  # the warm-up's threads have returned; their tasks are ending
    nice = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{{task}}/stat") as f:
            stat = f.read()
        nice.append(int(stat[stat.rindex(")") + 2:].split()[16]))
    print(json.dumps({{"numpy_first": numpy_first, "nice": warmup._state.nice,
                      "threads": nice, "outcome": warmup._state.outcome}}))
"""


@LINUX
@pytest.mark.parametrize(
    "numpy_first, library_thread", [(True, False), (False, False), (True, True)]
)
def test_no_thread_stays_at_low_priority(numpy_first, library_thread):
    # With numpy loaded first (its OpenBLAS threads started by the main thread) the
    # warm-up's loads run at nice 19 and leave no thread behind at that value; without
    # it, they keep their priority, since the pool numpy's import starts would inherit
    # nice 19 for the life of the process.  A thread the toolchain starts in its first
    # compile (as one does with the CUDA 13 wheels) keeps the process's priority too:
    # the warm-up's compile does not run at nice 19.
    found = run_fresh(
        NICE_OF_EVERY_THREAD.format(
            imports="import numpy" if numpy_first else "", library_thread=library_thread
        )
    )
    assert found["numpy_first"] is numpy_first
    assert found["outcome"] == "compiled for sm_90"
    assert found["nice"] == (19 if numpy_first else None)
    assert found["threads"] and set(found["threads"]) == {os.getpriority(os.PRIO_PROCESS, 0)}


def test_wait_from_the_warmup_thread_returns(state, monkeypatch):
    from cujit import pipeline

    imports = pipeline.import_stages
    callers = []

    def import_stages(*args):
        warmup.wait()  # joining itself would raise, and fail the warm-up
        callers.append(threading.current_thread())
        return imports(*args)

    monkeypatch.setattr(pipeline, "import_stages", import_stages)
    warmup.note_kernel()
    warmup.start((9, 0))
    assert finished(state) == "compiled for sm_90"
    assert callers == [state.loader]  # the imports; the tiny kernel's compile then passes


def test_a_loader_thread_that_cannot_start_is_swallowed(state, monkeypatch):
    class NoLoader(threading.Thread):
        def start(self):
            if self.name == "cujit-warmup-load":
                raise RuntimeError("can't create new thread at interpreter shutdown")
            super().start()

    monkeypatch.setattr(threading, "Thread", NoLoader)
    warmup.note_kernel()
    warmup.start((9, 0))
    assert finished(state) == (
        "failed: RuntimeError: can't create new thread at interpreter shutdown"
    )


def test_a_failing_warmup_is_swallowed(state, monkeypatch):
    def missing():
        raise ToolchainNotFoundError("cannot load nvvm (test)")

    with monkeypatch.context() as patch:
        patch.setattr(libs, "nvvm_module", missing)
        warmup.note_kernel()
        warmup.start((9, 0))
        assert finished(state) == "failed: ToolchainNotFoundError: cannot load nvvm (test)"
        # The real compile meets the problem itself and reports it.
        with pytest.raises(ToolchainNotFoundError, match=r"nvvm \(test\)"):
            compile_kernel(fill, (int32[::1],), SM90)
    assert compile_kernel(fill, (int32[::1],), SM90).cubin[:4] == b"\x7fELF"


def test_a_failed_import_leaves_nothing_half_done():
    # llvmlite cannot be imported during the warm-up: the compile afterwards raises
    # the import error itself, then, once llvmlite is back, imports and compiles.
    found = run_fresh("""
        import json, sys
        from cujit import cuda, int32
        from cujit.options import Options
        from cujit import warmup

        class NoLlvmlite:
            def find_spec(self, name, path=None, target=None):
                if name == "llvmlite" or name.startswith("llvmlite."):
                    raise ImportError("llvmlite hidden (test)")

        def fill(out):
            out[0] = 1

        hide = NoLlvmlite()
        sys.meta_path.insert(0, hide)
        warmup.note_kernel()
        warmup.start((9, 0))
        warmup.wait()
        from cujit.pipeline import compile_kernel
        try:
            compile_kernel(fill, (int32[::1],), Options(arch=(9, 0)))
            own = "compiled"
        except ImportError as exc:
            own = str(exc)
        sys.meta_path.remove(hide)
        cubin = compile_kernel(fill, (int32[::1],), Options(arch=(9, 0))).cubin
        print(json.dumps({"outcome": warmup._state.outcome, "own": own,
                          "elf": cubin[:4] == b"\\x7fELF"}))
    """)
    assert found["outcome"] == "failed: ImportError: llvmlite hidden (test)"
    assert found["own"] == "llvmlite hidden (test)"
    assert found["elf"]


def test_nothing_reaches_the_disk_cache(state, monkeypatch, tmp_path):
    monkeypatch.setenv("CUJIT_CACHE", "1")
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    warmup.note_kernel()
    warmup.start((9, 0))
    assert finished(state) == "compiled for sm_90"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.gpu
def test_a_gpu_process_warms_up_for_its_device():
    found = run_fresh("""
        import json
        from cujit import warmup
        from cujit.runtime import context
        warmup.note_kernel()
        cc = context.get_context().device.compute_capability
        warmup.wait()
        print(json.dumps({"cc": cc, "outcome": warmup._state.outcome}))
    """)
    major, minor = found["cc"]
    assert found["outcome"] == f"compiled for sm_{major}{minor}"
