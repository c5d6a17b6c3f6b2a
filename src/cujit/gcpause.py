"""The cyclic garbage collector held off while a kernel compiles.

A compile allocates tens of thousands of short-lived objects (instructions, IR ops,
types, llvmlite values): enough to set off several of the collector's passes, each of
which walks every tracked object of its generations, the compile's own live IR among
them, and now and then a full pass over the whole heap of a warm process (its imported
modules, the user's data).  Nearly all of a compile's objects die by reference count
when the compile returns, so those passes find little to free.  ``paused()`` disables
the collector for the compile and enables it again after, unless the program had
disabled it itself.  A kernel holds it from its compile until its specialisation has
let go of the stages' outputs it keeps no more (``dispatcher.Specialization.let_go``):
the pass that follows then walks what the kernel keeps, not every stage's output.
One compile holds the pause at a time: a compile nested in it, or started on another
thread meanwhile, runs under it without extending it, so compiles that overlap one
another from several threads never keep the collector off for longer than one
compile.  What a compile leaves in reference cycles is collected by the next pass
after it.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading

from cujit import forksafe

_lock = forksafe.renewed(threading.Lock())
_held = False  # a compile holds the pause (it found the collector enabled)


def _after_fork_in_child() -> None:
    """A compile of another thread held the pause at the fork: in the child that thread
    is gone, and the collector would stay off for good."""
    global _held
    if _held:
        _held = False
        gc.enable()


os.register_at_fork(after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def paused():
    """Hold the cyclic collector off for the ``with`` block, unless another block
    holds it off already or the program turned it off."""
    global _held
    with _lock:
        mine = not _held and gc.isenabled()
        if mine:
            _held = True
            gc.disable()
    try:
        yield
    finally:
        if mine:
            with _lock:
                _held = False
                gc.enable()
