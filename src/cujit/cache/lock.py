"""One compile per cache entry across processes: an advisory lock around a miss.

Processes of one machine that miss the same entry at once (Dask workers starting
the same graph) would each compile it: the atomic writes keep the entry whole,
but the work is done once per process.  So a process that misses takes an
exclusive ``flock`` on a lock file beside the entry, looks again, and compiles
only if the entry is still absent; the others wait on the lock, then load what it
wrote.  The holder writes its process id, host and kernel into the lock file, and
removes the file as it lets go; a leftover is named like a temporary file, so
``clear`` removes it.  Correctness never rests on the lock (the entry's writes are
atomic): it only saves the duplicate work.

The lock file is opened without following a symbolic link (``O_NOFOLLOW``), made
0600 whatever the umask, and used only where it is a plain file with one name: a
link planted at its path makes the compile go on unlocked, never creates or changes
another file.  The operating system releases the lock of a process that dies; a
lock still held although the process named in it is gone (a child it forked kept
the descriptor) is taken over.  A waiter says after ``REPORT`` seconds whom it
waits for ("waiting for process N compiling K"), and after ``CUJIT_CACHE_LOCK_WAIT``
seconds compiles without waiting any longer.  Where there is no ``flock``
(Windows) or no lock file can be made, nothing is locked.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

from cujit import config
from cujit.cache import trust
from cujit.cache.store import TEMP_PREFIX

WAIT: float | None = None  # seconds; None: CUJIT_CACHE_LOCK_WAIT
REPORT = 3.0  # seconds before a waiter says whom it waits for
_POLL = 0.01


def lock_path(entry: Path) -> Path:
    return entry.parent / f"{TEMP_PREFIX}lock-{entry.stem}"


@contextlib.contextmanager
def held(entry: Path, name: str = "") -> Iterator[bool]:
    """Hold the lock of cache entry ``entry`` (of kernel ``name``) for the block;
    yields whether it is held."""
    try:
        import fcntl
    except ImportError:  # no flock here
        yield False
        return
    path = lock_path(entry)
    fd = _open(path)
    if fd < 0:  # a read-only folder, or something planted in the way: unlocked
        yield False
        return
    mine = False
    try:
        fd, mine = _acquire(path, fd, fcntl, name or entry.stem)
        yield mine
    finally:
        if fd >= 0:
            if mine:  # leave no file behind; by now the entry is there for all who come later
                _unlink_if_same(path, fd)
            os.close(fd)  # closing the descriptor releases the lock


def _open(path: Path) -> int:
    """A descriptor of the lock file at ``path`` (made 0600 where absent), or -1 where
    it cannot be made or is not a plain file of one name (a link planted there)."""
    flags = os.O_RDWR | os.O_CREAT | trust.NOFOLLOW | trust.CLOEXEC
    try:
        trust.make_folder(path.parent)
        fd = os.open(path, flags, trust.FILE_MODE)
    except OSError:
        return -1
    try:
        st = os.fstat(fd)
        usable = stat.S_ISREG(st.st_mode) and st.st_nlink == 1
        if usable and trust.POSIX and st.st_uid == os.geteuid():
            mode = trust.file_mode(path.parent)
            if stat.S_IMODE(st.st_mode) != mode:
                os.fchmod(fd, mode)
        elif usable and not trust.shared(path.parent):
            usable = False  # another user's file in a private folder
    except OSError:
        usable = False
    if not usable:
        os.close(fd)
        return -1
    return fd


def _unlink_if_same(path: Path, fd: int) -> None:
    # Only the file this descriptor locks: a newer lock file at the same path is another's.
    try:
        if os.path.samestat(os.lstat(path), os.fstat(fd)):
            os.unlink(path)
    except OSError:
        pass


def _same(path: Path, fd: int) -> bool:
    try:
        return os.path.samestat(os.lstat(path), os.fstat(fd))
    except OSError:
        return False


def _wait() -> float:
    return max(0.0, WAIT if WAIT is not None else config.CACHE_LOCK_WAIT.get())


def _acquire(path: Path, fd: int, fcntl, name: str) -> tuple[int, bool]:
    """``(descriptor, whether the lock is held)``: the descriptor may be another than
    ``fd`` (a lock file replaced or taken over), or -1."""
    wait = _wait()
    start = time.monotonic()
    report_at = start + min(REPORT, wait / 2)
    reported = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            if holder is not None and _gone(holder):
                fd = _take_over(path, fd)
                if fd < 0:
                    return fd, False
                continue
            now = time.monotonic()
            if not reported and now >= report_at:
                reported = True
                _warn(
                    f"cujit is waiting for {_who(holder, name)} (lock {path}); "
                    f"it compiles the kernel itself after {wait:g} s (CUJIT_CACHE_LOCK_WAIT)"
                )
            if now - start >= wait:
                _warn(
                    f"cujit stopped waiting for {_who(holder, name)} after {wait:g} s "
                    f"(lock {path}): compiling the kernel here, without the lock"
                )
                return fd, False
            time.sleep(_POLL)
            continue
        except OSError:  # a file system without locks
            return fd, False
        if not _same(path, fd):  # let go and removed by its holder: lock the file there now
            os.close(fd)
            fd = _open(path)
            if fd < 0:
                return fd, False
            continue
        _write_holder(fd, name)
        return fd, True


def _who(holder, name: str) -> str:
    if holder is None:
        return f"another process compiling {name}"
    pid, host, theirs = holder
    where = "" if host == _host() else f" on {host}"
    return f"process {pid}{where} compiling {theirs or name}"


def _host() -> str:
    return os.uname().nodename if hasattr(os, "uname") else ""


def _write_holder(fd: int, name: str) -> None:
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {_host()} {name}\n".encode(errors="replace"), 0)
    except OSError:
        pass


def _holder(fd: int) -> tuple[int, str, str] | None:
    """``(process id, host, kernel)`` the lock file names, or None (not yet written)."""
    try:
        text = os.pread(fd, 512, 0).decode(errors="replace")
        pid, host, name = (text.strip().split(" ", 2) + ["", ""])[:3]
        pid = int(pid)
    except (OSError, ValueError):
        return None
    if pid <= 0:
        return None
    return pid, host, "".join(c for c in name if c.isprintable())[:128]


def _gone(holder: tuple[int, str, str]) -> bool:
    """Whether the process a lock file names is gone (judged on its own host only)."""
    pid, host, _ = holder
    if host != _host() or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


def _take_over(path: Path, fd: int) -> int:
    """Remove the lock file whose holder is gone (if it is still the one at ``path``)
    and open the one made in its place."""
    _unlink_if_same(path, fd)
    os.close(fd)
    return _open(path)


def _warn(message: str) -> None:
    from cujit.cache.key import user_level

    warnings.warn(message, RuntimeWarning, stacklevel=user_level())
