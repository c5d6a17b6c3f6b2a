"""``cujit.beside``: one call in a thread of its own, and the GPU compile's stage 7 run
that way while the compiling thread works out the launch facts, with the collector's
pause ended.  Compiles to cubin here; no GPU needed."""

import gc
import threading

import pytest

from cujit import cuda, pipeline, ptx
from cujit.beside import Beside, Now
from cujit.options import Options
from cujit.ptx import NVVMError
from cujit.types import float32

OPTS = Options(arch=(9, 0))
SIG = (float32, float32[::1], float32[::1])


def _saxpy(a, x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


def test_beside_returns_what_the_work_returns_from_another_thread():
    seen = {}

    def work(ready):
        seen["thread"] = threading.current_thread().name
        ready()
        return 42

    assert Beside(work, "cujit-test").result() == 42
    assert seen["thread"] == "cujit-test"


def test_beside_raises_the_works_error_in_the_caller():
    def work(ready):  # raises before calling ready: the constructor still returns
        raise KeyError("from the thread")

    pending = Beside(work, "cujit-test")
    with pytest.raises(KeyError, match="from the thread"):
        pending.result()


def test_the_constructor_returns_once_the_work_is_ready():
    order = []
    go_on = threading.Event()

    def work(ready):
        order.append("before ready")
        ready()
        go_on.wait(30)
        order.append("after the caller went on")

    pending = Beside(work, "cujit-test")
    order.append("caller")
    go_on.set()
    pending.result()
    assert order == ["before ready", "caller", "after the caller went on"]


def test_now_runs_in_the_calling_thread_and_raises_at_once():
    assert Now(lambda ready: threading.current_thread().name).result() == (
        threading.current_thread().name
    )
    with pytest.raises(ZeroDivisionError):
        Now(lambda ready: 1 / 0)


def _spy_stage7(monkeypatch, wait_for=None):
    """Replace stage 7's libNVVM call with one that records its thread, and, when
    ``wait_for`` (an Event) is given, waits after ``ready()`` until the compiling thread
    sets it, recording whether it did and whether the collector was on by then."""
    seen = {}
    real = ptx.compile_ptx

    def spy(*args, ready=None, **kwargs):
        seen["thread"] = threading.current_thread()
        if wait_for is not None:
            ready()
            seen["overlapped"] = wait_for.wait(30)
            seen["collector on"] = gc.isenabled()
        return real(*args, **kwargs)

    monkeypatch.setattr(ptx, "compile_ptx", spy)
    return seen


def test_a_full_compile_runs_stage_7_beside_the_launch_facts(monkeypatch):
    import cujit.codegen.narrow as narrow

    facts_made = threading.Event()
    real = narrow.worth_narrowing

    def facts(*args, **kwargs):
        assert threading.current_thread() is threading.main_thread()
        facts_made.set()
        return real(*args, **kwargs)

    monkeypatch.setattr(narrow, "worth_narrowing", facts)
    seen = _spy_stage7(monkeypatch, wait_for=facts_made)
    was = gc.isenabled()
    gc.enable()
    try:
        result = pipeline.compile_kernel(_saxpy, SIG, OPTS)
    finally:
        (gc.enable if was else gc.disable)()
    assert seen["thread"] is not threading.main_thread()
    assert seen["thread"].name.startswith("cujit-toolchain-")
    assert seen["overlapped"] and seen["collector on"]
    assert result.cubin[:4] == b"\x7fELF"
    assert list(result.outputs)[-2:] == ["index32", "independence"]
    assert result.outputs["independence"].ok


def test_stopping_at_the_ptx_compiles_in_the_calling_thread(monkeypatch):
    seen = _spy_stage7(monkeypatch)
    result = pipeline.compile_kernel(_saxpy, SIG, OPTS, stop_after="ptx")
    assert seen["thread"] is threading.current_thread()
    assert ".entry" in result.ptx


def test_a_kernel_that_links_files_compiles_in_the_calling_thread(monkeypatch):
    from cujit.linking import CUSource, link_files

    source = CUSource(
        'extern "C" __device__ int unused_helper(int *r, int x) { *r = x; return 0; }'
    )
    seen = _spy_stage7(monkeypatch)
    opts = Options(arch=(9, 0), link=link_files([source]))
    pipeline.compile_kernel(_saxpy, SIG, opts)
    assert seen["thread"] is threading.current_thread()


def test_a_toolchain_error_in_the_thread_reaches_the_caller(monkeypatch):
    def refuse(*args, ready=None, **kwargs):
        ready()
        raise NVVMError("libNVVM could not compile 'k'", "an error from libNVVM")

    monkeypatch.setattr(ptx, "compile_ptx", refuse)
    with pytest.raises(NVVMError, match="an error from libNVVM"):
        pipeline.compile_kernel(_saxpy, SIG, OPTS)
    assert not [t for t in threading.enumerate() if t.name.startswith("cujit-toolchain-")]
