"""One call run in a thread of its own while the calling thread goes on.

A kernel's stage 7 is libNVVM, then nvJitLink: C calls that let go of the GIL for
milliseconds.  ``Beside`` runs them in a thread so that the compiling thread can do its
own Python work meanwhile (the launch facts of ``pipeline._compile``, the collector's
pass held off during the compile).

The hand-over is explicit.  ``Beside(work)`` starts the thread and returns only once
``work`` has called the ``ready`` it is given, just before its long C call: until then
the caller waits, so the thread never waits for the GIL on its way into that call.  A
``work`` that returns or raises without calling ``ready`` releases the caller too.
``result()`` joins the thread and returns what ``work`` returned, or raises what it
raised (its traceback is the thread's).  The thread is not a daemon: a process that
ends meanwhile lets the toolchain finish its call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Beside:
    """``work(ready)`` in a thread named ``name``, begun before the constructor returns."""

    def __init__(self, work: Callable, name: str):
        self._ready = threading.Event()
        self._value = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), name=name)
        self._thread.start()
        self._ready.wait()

    def _run(self, work: Callable) -> None:
        try:
            self._value = work(self._ready.set)
        except BaseException as exc:  # noqa: BLE001 -- raised again by result()
            self._error = exc
        finally:
            self._ready.set()

    def result(self):
        self._thread.join()
        error, self._error = self._error, None
        if error is not None:
            raise error
        return self._value


class Now:
    """``work`` run at once in the calling thread, with the interface of ``Beside``."""

    def __init__(self, work: Callable):
        self._value = work(_nothing)

    def result(self):
        return self._value


def _nothing() -> None:
    pass
