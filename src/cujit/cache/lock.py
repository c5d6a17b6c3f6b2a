"""One compile per cache entry across processes: an advisory lock around a miss.

Processes of one machine that miss the same entry at once (Dask workers starting
the same graph) would each compile it: the atomic writes keep the entry whole,
but the work is done once per process.  So a process that misses takes an
exclusive ``flock`` on a lock file beside the entry, looks again, and compiles
only if the entry is still absent; the others wait on the lock, then load what it
wrote.  The holder removes the lock file as it lets go; a leftover is named like
a temporary file, so ``clear`` removes it.  Correctness never rests on the lock
(the entry's writes are atomic): it only saves the duplicate work.  The
operating system releases the lock of a process that dies; a holder that takes
longer than ``WAIT`` seconds is given up on and the waiter compiles.  Where there
is no ``flock`` (Windows) or no lock file can be made, nothing is locked.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from cujit.cache.store import TEMP_PREFIX

WAIT = 600.0  # seconds
_POLL = 0.01


@contextlib.contextmanager
def held(entry: Path) -> Iterator[bool]:
    """Hold the lock of cache entry ``entry`` for the block; yields whether it is held."""
    try:
        import fcntl
    except ImportError:  # no flock here
        yield False
        return
    path = entry.parent / f"{TEMP_PREFIX}lock-{entry.stem}"
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a read-only folder: the compile goes on unlocked
        yield False
        return
    mine = False
    try:
        mine = _acquire(fd, fcntl)
        yield mine
    finally:
        if mine:  # leave no file behind; by now the entry is there for all who come later
            _unlink_if_same(path, fd)
        os.close(fd)  # closing the descriptor releases the lock


def _unlink_if_same(path: Path, fd: int) -> None:
    # Only the file this descriptor locks: a newer lock file at the same path is another's.
    try:
        if os.path.samestat(os.stat(path), os.fstat(fd)):
            os.unlink(path)
    except OSError:
        pass


def _acquire(fd: int, fcntl) -> bool:
    deadline = time.monotonic() + WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(_POLL)
        except OSError:  # a file system without locks
            return False
