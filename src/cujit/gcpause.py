"""The cyclic garbage collector held off while a kernel compiles.

A compile allocates tens of thousands of short-lived objects (instructions, IR ops,
types, llvmlite values): enough to set off several of the collector's passes, each of
which walks every tracked object of its generations, the compile's own live IR among
them, and now and then a full pass over the whole heap of a warm process (its imported
modules, the user's data).  Nearly all of a compile's objects die by reference count
when the compile returns, so those passes find little to free.  ``paused()`` disables
the collector for the compile and enables it again after, unless the program had
disabled it itself; nested and concurrent compiles share one pause.  What a compile
leaves in reference cycles is collected by the next pass after it.
"""

from __future__ import annotations

import contextlib
import gc
import threading

_lock = threading.Lock()
_depth = 0  # compiles under way
_restore = False  # whether the first of them found the collector enabled


@contextlib.contextmanager
def paused():
    """Hold the cyclic collector off for the ``with`` block."""
    global _depth, _restore
    with _lock:
        if _depth == 0:
            _restore = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _restore:
                gc.enable()
