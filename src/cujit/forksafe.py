"""Locks that a forked child finds free.

``os.fork`` copies only the thread that calls it: a lock another thread held at that
moment stays held in the child, and the child's first use of it waits forever.
``renewed(lock)`` files a ``threading.Lock`` or ``RLock``; after a fork every filed
lock that still exists is reset to free in the child (what CPython does for its own
locks, ``_at_fork_reinit``).  Module state guarded by such a lock is the module's to
reset (``os.register_at_fork`` beside it).
"""

from __future__ import annotations

import os
import weakref

_locks: weakref.WeakSet = weakref.WeakSet()


def renewed(lock):
    """``lock``, filed to be reset in a forked child; returns it."""
    _locks.add(lock)
    return lock


def _after_fork_in_child() -> None:
    for lock in list(_locks):
        lock._at_fork_reinit()


os.register_at_fork(after_in_child=_after_fork_in_child)

__all__ = ["renewed"]
