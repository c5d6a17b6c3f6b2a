"""Host reads of mapped and managed memory that a kernel may still be writing.

A mapped or managed array is host memory that kernels write directly, and a
launch returns before its kernel has run: reading the array on the host before
``cuda.synchronize()`` can see old values.  After a launch whose kernel may store
into such an array (``ir.analysis.written_arguments``), the launch records an event
on its stream (:class:`PendingWrite`, one of ``prepare_args``' writebacks).  A host
read through the array's own methods (indexing, printing, ``tolist``,
``copy_to_host``) asks that event whether the kernel has finished; while it has not,
the read is racing the kernel and draws one :class:`UnsynchronizedReadWarning` with
the fix.  A finished event is forgotten, so a program that synchronizes pays one
query per write.  A warning, not an error: a host polling a flag that a running
kernel sets is a deliberate use of mapped memory.
"""

from __future__ import annotations

import warnings
import weakref

from cujit.hints import with_hint

# allocation (a mapped.ReachableBuffer) -> (its last writer's event, the stream's words)
WRITES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class UnsynchronizedReadWarning(RuntimeWarning):
    """A host read of memory that a launched kernel may still be writing."""


class PendingWrite:
    """Run after a launch (as a writeback): mark ``buf`` as written by the work
    queued on ``stream`` so far."""

    __slots__ = ("buf", "stream")

    def __init__(self, buf, stream):
        self.buf, self.stream = buf, stream

    def __call__(self) -> None:
        from cujit.runtime.event import Event

        note_written(self.buf, Event(timing=False).record(self.stream), self.stream)


def note_written(buf, event, stream) -> None:
    """``buf`` is being written by the work before ``event`` (anything with ``query()``)."""
    where = (
        "the default stream"
        if stream is None or (isinstance(stream, int) and stream == 0)
        else f"stream {stream!r}"
    )
    WRITES[buf] = (event, where)


def check_read(buf, stacklevel: int = 3) -> None:
    """Warn when the last kernel that may write ``buf`` has not finished yet."""
    entry = WRITES.get(buf) if buf is not None else None
    if entry is None:
        return
    event, where = entry
    del WRITES[buf]  # one warning per write; a finished write needs no more queries
    try:
        if event.query():
            return
    except Exception:  # noqa: BLE001 - e.g. an event recorded while a graph was captured
        return  # (CUDA_ERROR_CAPTURED_EVENT): nothing is known, so nothing is said
    warnings.warn(
        with_hint(
            "reading a mapped or managed array on the host while a kernel may still be writing it",
            "unsynchronized-read",
            stream=where,
        ),
        UnsynchronizedReadWarning,
        stacklevel=stacklevel,
    )
