"""numba's profiler control (cujit/runtime/profiling.py): cuProfilerStart/Stop in the
calling thread's context, through a stand-in driver here and the real one on a GPU; the
CPU target's versions do nothing."""

import inspect

import pytest

from cujit import cuda
from cujit.runtime import profiling
from cujit.runtime.driver import CudaDriverError


@pytest.fixture
def calls(monkeypatch):
    from cujit.runtime import context

    made = []
    monkeypatch.setattr(context, "get_context", lambda: made.append("context"))
    monkeypatch.setattr(profiling, "call", lambda name: made.append(name))
    return made


def test_start_and_stop_call_the_driver_in_the_current_context(calls):
    profiling.profile_start()
    profiling.profile_stop()
    assert calls == ["context", "cuProfilerStart", "context", "cuProfilerStop"]


def test_profiling_stops_even_when_its_block_raises(calls):
    with pytest.raises(ZeroDivisionError), profiling.profiling():
        assert calls[-1] == "cuProfilerStart"
        1 / 0  # noqa: B018
    assert calls[-1] == "cuProfilerStop" and calls.count("cuProfilerStop") == 1


def test_a_refused_call_is_the_drivers_error_naming_it(monkeypatch):
    from cujit.runtime import context

    def refuse(name):
        raise CudaDriverError(name, 999, "CUDA_ERROR_UNKNOWN")

    monkeypatch.setattr(context, "get_context", lambda: None)
    monkeypatch.setattr(profiling, "call", refuse)
    with pytest.raises(CudaDriverError, match="cuProfilerStart"):
        profiling.profile_start()


def test_the_facade_serves_them_per_target(monkeypatch):
    monkeypatch.delenv("CUJIT_TARGET", raising=False)
    for name in ("profile_start", "profile_stop", "profiling"):
        cuda.__dict__.pop(name, None)  # the facade caches what it served
        # the runtime's function behind the host API's boundary (cujit.runtime.boundary)
        assert inspect.unwrap(getattr(cuda, name)) is getattr(profiling, name)
        cuda.__dict__.pop(name, None)
    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    from cujit.targets.cpu import streams

    try:
        for name in ("profile_start", "profile_stop", "profiling"):
            assert getattr(cuda, name) is getattr(streams, name)
    finally:
        for name in ("profile_start", "profile_stop", "profiling"):
            cuda.__dict__.pop(name, None)


def test_on_the_cpu_target_they_do_nothing_and_the_block_runs():
    from cujit.targets.cpu import streams

    ran = []
    streams.profile_start()
    with streams.profiling():
        ran.append(True)
    streams.profile_stop()
    assert ran == [True]


@pytest.mark.gpu
def test_on_the_gpu():
    import numpy as np

    x = cuda.to_device(np.arange(8, dtype=np.float32))
    with cuda.profiling():
        y = x.copy_to_host()
    cuda.profile_start()
    cuda.profile_stop()
    assert (y == np.arange(8)).all()
