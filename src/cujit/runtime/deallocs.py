"""Deferred frees of device memory: numba's pending-deallocation list.

As in numba, a device allocation whose last array is collected is not returned to the
driver at once: its pointer joins its context's list (``ctx.memory_manager.
deallocations``, also ``ctx.deallocations``), and the list is emptied, each pointer
freed with ``cuMemFree``, when it holds more than ``COUNT_LIMIT`` allocations or more
than ``BYTES_RATIO`` of the device's memory, when an allocation runs out of memory,
when ``clear()`` is called, and at interpreter exit.  ``cuda.defer_cleanup()`` (the
list's ``disable()``) holds every free back for the length of a block, so that work
queued on streams can still use memory its arrays no longer reference.

Freeing from the list needs no particular thread: a free that finds no context on its
thread makes the allocation's context current there first.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections import deque

from cujit.runtime.driver import get_driver

COUNT_LIMIT = 10  # numba's CUDA_DEALLOCS_COUNT
BYTES_RATIO = 0.2  # numba's CUDA_DEALLOCS_RATIO, of the device's total memory
_CUDA_ERROR_INVALID_CONTEXT = 201
_exiting = False


class PendingDeallocs:
    """One context's frees not yet made (``len()`` counts them)."""

    def __init__(self, ctx, max_bytes: int) -> None:
        self._ctx = ctx
        self._items: deque = deque()
        self._bytes = 0
        self._max_bytes = max_bytes
        self._disabled = 0
        self._lock = threading.Lock()

    def add(self, ptr: int, nbytes: int) -> None:
        """Queue the free of ``ptr`` (``nbytes`` long); empty the list past its limits."""
        with self._lock:
            self._items.append(ptr)
            self._bytes += nbytes
            over = len(self._items) > COUNT_LIMIT or self._bytes > self._max_bytes
        if over:
            self.clear()

    def clear(self) -> None:
        """Free every queued allocation now (nothing while ``disable()`` is in force)."""
        if self._disabled:
            return
        with self._lock:
            items, self._items, self._bytes = self._items, deque(), 0
        for ptr in items:
            free_now(ptr, self._ctx)

    @contextlib.contextmanager
    def disable(self):
        """Hold every free back inside the block (``cuda.defer_cleanup()``)."""
        with self._lock:
            self._disabled += 1
        try:
            yield
        finally:
            with self._lock:
                self._disabled -= 1

    @property
    def is_disabled(self) -> bool:
        return self._disabled > 0

    def __len__(self) -> int:
        return len(self._items)


class MemoryManager:
    """``ctx.memory_manager``: the context's pending frees and numba's queries on them."""

    interface_version = 1

    def __init__(self, ctx, total_bytes: int) -> None:
        self.context = ctx
        self.deallocations = PendingDeallocs(ctx, int(total_bytes * BYTES_RATIO))
        _managers.append(self)

    def defer_cleanup(self):
        """numba's ``defer_cleanup()``: no queued free happens inside the block."""
        return self.deallocations.disable()

    def get_memory_info(self) -> tuple[int, int]:
        return self.context.get_memory_info()

    def reset(self) -> None:
        """Free what is queued (numba's memory manager reset)."""
        self.deallocations.clear()


_managers: list[MemoryManager] = []


def release(ptr: int, nbytes: int, ctx) -> None:
    """An allocation's finalizer: queue its free on its context's list (free it at once
    where the context has none, or the interpreter is exiting)."""
    manager = getattr(ctx, "_memory_manager", None)
    if manager is None or _exiting:
        free_now(ptr, ctx)
    else:
        manager.deallocations.add(ptr, nbytes)


def free_now(ptr: int, ctx) -> None:
    try:
        drv = get_driver()
        (err,) = drv.cuMemFree(ptr)
        if err == _CUDA_ERROR_INVALID_CONTEXT and ctx is not None:  # a thread with no context
            ctx.make_current()
            drv.cuMemFree(ptr)
    except Exception:  # noqa: BLE001, S110 - a finalizer must never raise
        pass


def clear_all() -> None:
    """Empty every context's list (an allocation that ran out of memory retries after)."""
    for manager in list(_managers):
        manager.deallocations.clear()


@atexit.register
def _at_exit() -> None:
    # Every allocation goes back before the contexts do (compute-sanitizer's leak check):
    # what is queued now, and, through ``_exiting``, what finalizers release after this.
    global _exiting
    _exiting = True
    for manager in list(_managers):
        manager.deallocations._disabled = 0
        manager.deallocations.clear()
