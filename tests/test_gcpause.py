"""The cyclic collector is off while a kernel compiles (``cujit.gcpause``) and comes
back as the program had it: on after a compile, a failed compile and nested or
concurrent compiles; off after them where the program had turned it off.  One compile
holds the pause: one beside it on another thread does not extend it."""

import gc
import threading

import pytest

from cujit import cuda, gcpause, pipeline
from cujit.diagnostics import CujitError
from cujit.options import Options
from cujit.types import float32


def _kernel(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2.0 * out[i]


def _seen_during_compile(monkeypatch) -> list:
    """gc.isenabled() as each stage 3 runs."""
    import cujit.irgen as irgen  # front_end imports stage 3 from here at each compile

    seen = []

    real = irgen.build_ir

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(irgen, "build_ir", spy)
    return seen


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_off_during_a_compile_and_on_after(monkeypatch):
    seen = _seen_during_compile(monkeypatch)
    pipeline.compile_kernel(_kernel, (float32[::1],), Options(arch=(9, 0)), stop_after="llvm")
    assert seen == [False]
    assert gc.isenabled()


def test_a_program_that_turned_it_off_keeps_it_off(monkeypatch):
    seen = _seen_during_compile(monkeypatch)
    gc.disable()
    pipeline.compile_kernel(_kernel, (float32[::1],), Options(arch=(9, 0)), stop_after="llvm")
    assert seen == [False]
    assert not gc.isenabled()


def test_on_again_after_a_failed_compile():
    def bad(out):
        out[0] = undefined_name  # noqa: F821

    with pytest.raises(CujitError):
        pipeline.compile_kernel(bad, (float32[::1],), Options(arch=(9, 0)), stop_after="llvm")
    assert gc.isenabled()


def test_nested_pauses_end_with_the_outermost():
    with gcpause.paused():
        with gcpause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer compile is still running
    assert gc.isenabled()


def _hold_on_another_thread():
    """A pause taken on another thread: (thread, taken, release) events."""
    taken, release = threading.Event(), threading.Event()

    def other():
        with gcpause.paused():
            taken.set()
            release.wait(30)

    thread = threading.Thread(target=other)
    thread.start()
    assert taken.wait(30)
    return thread, release


def test_a_compile_beside_another_runs_under_its_pause():
    thread, release = _hold_on_another_thread()
    with gcpause.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's compile is still under way
    release.set()
    thread.join(30)
    assert gc.isenabled()


def test_a_compile_beside_another_does_not_extend_its_pause():
    thread, release = _hold_on_another_thread()
    with gcpause.paused():
        release.set()
        thread.join(30)
        # the pause ended with the compile that took it: overlapping compiles from
        # several threads never keep the collector off for longer than one compile
        assert gc.isenabled()
    assert gc.isenabled()


def test_a_kernel_holds_it_until_its_specialisation_lets_go(monkeypatch):
    """Through the kernel's compile, its variant plan and ``let_go``; on again after."""
    from cujit import dispatcher

    seen = _seen_during_compile(monkeypatch)
    real = dispatcher.Specialization.let_go
    at_let_go = []

    def spy(self):
        at_let_go.append(gc.isenabled())
        real(self)

    monkeypatch.setattr(dispatcher.Specialization, "let_go", spy)
    kernel = cuda.jit(_kernel, target="cpu")
    kernel.compile((float32[::1],))
    assert seen == [False] and at_let_go == [False]
    assert gc.isenabled()


def test_a_kernel_whose_compile_fails_turns_it_on_again():
    def bad(out):
        out[0] = undefined_name  # noqa: F821

    with pytest.raises(CujitError):
        cuda.jit(bad, target="cpu").compile((float32[::1],))
    assert gc.isenabled()
