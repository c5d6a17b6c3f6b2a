"""Streams, events and pinned memory for the CPU target: the GPU runtime's API over a
"device" that runs every copy and launch to completion before returning.

So work is always already finished: a stream has nothing to wait for, an event is
complete once recorded (it keeps the host time it was recorded at, for
``elapsed_time``), and pinned memory is ordinary host memory.  Programs written for
the GPU runtime (``with stream.auto_synchronize():``, ``kernel[g, b, stream]``,
``cuda.event_elapsed_time``) run unchanged under ``CUJIT_TARGET=cpu``.
"""

from __future__ import annotations

import contextlib
import itertools
import time

import numpy as np

_DEFAULT, _LEGACY, _PER_THREAD = 0, 1, 2  # the GPU runtime's handles of the default streams
_handles = itertools.count(0x1000)  # user streams: distinct handles, never 0, 1 or 2


class Stream:
    """``cuda.stream()`` on the CPU target: work given to it is done on submission.

    Each stream has a distinct integer ``handle`` (the default streams have the GPU
    runtime's 0, 1 and 2), which device arrays made on it name in their CUDA Array
    Interface; ``external`` marks one made by ``external_stream`` from such a handle."""

    __slots__ = ("external", "handle", "kind")

    def __init__(self, kind: str = "stream", handle: int | None = None, external: bool = False):
        self.kind = kind
        self.handle = next(_handles) if handle is None else int(handle)
        self.external = external

    def synchronize(self) -> None:
        """Nothing to wait for: every copy and launch has already finished."""

    def query(self) -> bool:
        return True

    @contextlib.contextmanager
    def auto_synchronize(self):
        yield self

    def __int__(self) -> int:
        return self.handle

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)

    def __eq__(self, other) -> bool:
        if isinstance(other, Stream):
            return other.handle == self.handle
        return isinstance(other, int) and other == self.handle

    def __hash__(self) -> int:
        return hash(self.handle)

    def __repr__(self) -> str:
        return f"<cujit CPU-target {self.kind} {self.handle:#x}>"


def stream(non_blocking: bool = False) -> Stream:
    return Stream()


def default_stream() -> Stream:
    return Stream("default stream", _DEFAULT)


def legacy_default_stream() -> Stream:
    return Stream("legacy default stream", _LEGACY)


def per_thread_default_stream() -> Stream:
    return Stream("per-thread default stream", _PER_THREAD)


def external_stream(ptr) -> Stream:
    """``cuda.external_stream(ptr)``: the stream of handle ``ptr`` (an int, or an object
    with ``__cuda_stream__`` or ``handle``), as the CUDA Array Interface names it."""
    return Stream("external stream", stream_value(ptr), external=True)


def stream_value(s) -> int:
    """The integer handle of a stream argument (0 and None: the default stream)."""
    if s is None:
        return _DEFAULT
    if isinstance(s, int):
        return s
    proto = getattr(s, "__cuda_stream__", None)
    if proto is not None:
        return int((proto() if callable(proto) else proto)[1])
    handle = getattr(s, "handle", None)
    if handle is None:
        raise TypeError(f"expected a stream (a Stream, an int handle or 0), got {s!r}")
    return int(getattr(handle, "value", handle))


class Event:
    """``cuda.event()`` on the CPU target: complete when recorded."""

    __slots__ = ("recorded_at", "timing")

    def __init__(self, timing: bool = True):
        self.timing = timing
        self.recorded_at: float | None = None

    def record(self, stream=0) -> Event:
        self.recorded_at = time.perf_counter()
        return self

    def synchronize(self) -> None:
        pass

    def wait(self, stream=0) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds from this event's record to ``end``'s, as the GPU runtime's."""
        if not (self.timing and end.timing):
            raise ValueError("elapsed_time needs two events made with timing=True")
        if self.recorded_at is None or end.recorded_at is None:
            raise ValueError("elapsed_time needs both events recorded first")
        return (end.recorded_at - self.recorded_at) * 1e3


def event(timing: bool = True) -> Event:
    return Event(timing)


def event_elapsed_time(start: Event, end: Event) -> float:
    return start.elapsed_time(end)


def pinned_array(shape, dtype=np.float64, strides=None, order: str = "C") -> np.ndarray:
    """Host memory is all the CPU target's "device" needs: an ordinary NumPy array."""
    if strides is None:
        return np.empty(shape, dtype, order=order)
    from cujit.targets.cpu.memory import device_array

    return np.asarray(device_array(shape, dtype, strides, order))


def pinned_array_like(ary) -> np.ndarray:
    """A plain host array laid out as NumPy's ``zeros_like`` lays out ``ary``'s copy."""
    return np.empty_like(ary, subok=False)


@contextlib.contextmanager
def pinned(*arrays):
    """``with cuda.pinned(a, ...):`` has nothing to lock on the CPU target."""
    yield


# numba's profiler control: no CUDA profiler watches the CPU target's work, so there is
# no collection to start or stop (a host profiler sees the kernels as host code).
def profile_start() -> None:
    """``cuda.profile_start()``: nothing to start on the CPU target."""


def profile_stop() -> None:
    """``cuda.profile_stop()``: nothing to stop on the CPU target."""


@contextlib.contextmanager
def profiling():
    """``cuda.profiling()``: the block runs; nothing is collected on the CPU target."""
    yield
