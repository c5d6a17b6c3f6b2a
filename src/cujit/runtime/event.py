"""CUDA events: ``cuda.event()``, timing, and ordering one stream after another.

An event marks a point in a stream's work.  ``record`` places the mark,
``synchronize`` waits on the host for it, ``wait`` makes another stream wait
for it on the device (``cuStreamWaitEvent``: the host does not block).

:func:`order_after` is what the interoperability code uses to honour a
producer's stream (CUDA Array Interface v3 ``stream`` field, DLPack's
``stream`` argument): the consumer stream waits on an event recorded on the
producer stream, the ordering the CAI v3 specification asks for, without
blocking the host as a stream synchronize would.
"""

from __future__ import annotations

import threading
import weakref

from cujit.runtime.driver import call, get_driver
from cujit.runtime.stream import as_cu_stream, same_stream, stream_handle

_CU_EVENT_DEFAULT = 0
_CU_EVENT_DISABLE_TIMING = 2
_CUDA_ERROR_NOT_READY = 600
_tls = threading.local()


class Event:
    """A CUDA event on the current device; destroyed when collected."""

    __slots__ = ("__weakref__", "cu", "timing")

    def __init__(self, timing: bool = True):
        from cujit.runtime.context import get_context

        ctx = get_context()
        # Timing costs a timestamp per record; events used only for ordering skip it.
        self.timing = timing
        self.cu = call("cuEventCreate", _CU_EVENT_DEFAULT if timing else _CU_EVENT_DISABLE_TIMING)
        weakref.finalize(self, _destroy, self.cu, ctx).atexit = False

    def record(self, stream=0) -> Event:
        """Mark the current end of ``stream``'s work."""
        call("cuEventRecord", self.cu, as_cu_stream(stream))
        return self

    def synchronize(self) -> None:
        """Block the host until the recorded work has finished."""
        call("cuEventSynchronize", self.cu)

    def wait(self, stream=0) -> None:
        """Make ``stream`` wait (on the device) until the recorded work has finished."""
        call("cuStreamWaitEvent", as_cu_stream(stream), self.cu, 0)

    def query(self) -> bool:
        """True when the recorded work has finished (does not wait)."""
        (err,) = get_driver().cuEventQuery(self.cu)
        if err not in (0, _CUDA_ERROR_NOT_READY):
            call("cuEventQuery", self.cu)  # raises, naming the error
        return err == 0

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds between this event and ``end`` (both recorded and finished)."""
        return event_elapsed_time(self, end)

    def __repr__(self) -> str:
        return f"<Event {int(self.cu):#x}{'' if self.timing else ' (no timing)'}>"


def _destroy(cu_event, ctx) -> None:
    try:
        get_driver().cuEventDestroy(cu_event)
    except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
        pass


def event(timing: bool = True) -> Event:
    """``cuda.event(timing=True)``: a new event on the current device."""
    return Event(timing)


def event_elapsed_time(start: Event, end: Event) -> float:
    """``cuda.event_elapsed_time(start, end)``: milliseconds from ``start`` to ``end``."""
    if not (start.timing and end.timing):
        raise ValueError("elapsed time needs two events created with timing=True")
    return float(call("cuEventElapsedTime", start.cu, end.cu))


def order_after(producer, consumer) -> bool:
    """Make stream ``consumer`` wait for the work queued so far on stream ``producer``.

    Both are stream arguments (handles, Streams, protocol objects).  Nothing
    is enqueued when they are the same stream.  Returns whether a wait was
    enqueued.  One timing-free event per thread and device is reused: a wait
    captures the event's state when it is enqueued, so re-recording later is safe.
    """
    p, c = stream_handle(producer), stream_handle(consumer)
    if same_stream(p, c):
        return False
    from cujit.runtime.context import get_context

    ctx = get_context()
    events = getattr(_tls, "events", None)
    if events is None:
        events = _tls.events = {}
    ev = events.get(ctx.device.id)
    if ev is None:
        ev = events[ctx.device.id] = Event(timing=False)
    ev.record(p)
    ev.wait(c)
    return True
