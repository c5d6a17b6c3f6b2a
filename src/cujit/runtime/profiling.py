"""numba's profiler control (``cuda.profile_start``, ``profile_stop``, ``profiling``):
the CUDA driver's ``cuProfilerStart``/``cuProfilerStop`` in the calling thread's
context, which a profiler such as Nsight Systems run with its capture range set to the
profiler API (``nsys profile --capture-range=cudaProfilerApi``) records between."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from cujit.runtime import context
from cujit.runtime.driver import call


def profile_start() -> None:
    """Start the profiler's collection in the current context."""
    context.get_context()  # the calls act on the calling thread's context
    call("cuProfilerStart")


def profile_stop() -> None:
    """Stop the profiler's collection in the current context."""
    context.get_context()
    call("cuProfilerStop")


def profiling() -> contextlib.AbstractContextManager[None]:
    """Collect while the ``with`` block runs (stopped even when it raises).  The
    current context is bound at the call, so that its error comes from the call."""
    context.get_context()
    return _profiling()


@contextlib.contextmanager
def _profiling() -> Iterator[None]:
    profile_start()
    try:
        yield
    finally:
        profile_stop()
