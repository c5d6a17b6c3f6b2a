"""What the kernel cache trusts, and how its files are made (docs/cache-trust.md).

An entry holds machine code that a hit runs, so a file is used only where no one but
the current user could have written it, or where it proves it was written by a holder
of the user's key:

- private folders (every folder but a declared shared one): the folder and the file
  are owned by the current user and writable by no group or other user; the file is a
  regular file reached without following a symbolic link.  Anything else is refused.
- the declared shared folder (``CUJIT_CACHE_SHARED`` with ``CUJIT_CACHE_DIR``): any
  owner and mode, but every entry carries an HMAC-SHA256 of its bytes under the key
  in the user's private config (``mac_key``); one without the right MAC is refused.

Folders cujit makes are 0700 and files 0600 (0644 in the shared folder, whose own
permissions say who may read it), whatever the umask.  Nothing here reads a file as
anything but bytes: the formats that read them (``store``, ``pickledata``) are data.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from cujit import config

FOLDER_MODE = 0o700
FILE_MODE = 0o600
SHARED_FILE_MODE = 0o644
KEY_BYTES = 32

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted at an entry's path must not block
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
POSIX = hasattr(os, "geteuid")


class Refused(Exception):
    """A cache file or folder that is not to be trusted; ``str`` says why."""


def shared(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is the cache folder and ``CUJIT_CACHE_SHARED`` declares it
    shared (a ``__pycache__`` beside a source file never is)."""
    if not config.CACHE_SHARED.get():
        return False
    return os.path.abspath(folder) == os.path.abspath(config.cache_dir())


def owner_refusal(st: os.stat_result, what: str) -> str | None:
    """Why a file or folder with status ``st`` is not private to this user, or None."""
    if not POSIX:
        return None
    if st.st_uid != os.geteuid():
        return f"{what} is owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"{what} is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def folder_refusal(folder: str | os.PathLike) -> str | None:
    """Why ``folder`` (not the shared one) cannot hold entries this process loads, or
    None: it is private to this user, or does not exist yet (``make_folder`` makes it
    0700).  The default per-user folder, cujit's own, is made private again where an
    older cujit left it open to the group."""
    if not POSIX:
        return None
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"its folder cannot be examined ({exc.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "its folder is not a folder"
    why = owner_refusal(st, "its folder")
    if why is not None and st.st_uid == os.geteuid() and _default_folder(folder):
        try:
            os.chmod(folder, FOLDER_MODE)
            return owner_refusal(os.stat(folder), "its folder")
        except OSError:
            pass
    return why


def _default_folder(folder) -> bool:
    return not config.CACHE_DIR.is_set() and os.path.abspath(folder) == os.path.abspath(
        config.cache_dir()
    )


def read(path: str | os.PathLike, shared_folder: bool = False) -> bytes | None:
    """The bytes of the cache file at ``path``; None where there is none (or it cannot
    be opened); ``Refused`` where it is a symbolic link, not a regular file, or, outside
    the shared folder, not private to this user (``owner_refusal``)."""
    found = read_with_status(path, shared_folder)
    return None if found is None else found[0]


def read_with_status(path, shared_folder: bool = False) -> tuple[bytes, os.stat_result] | None:
    """``read``, with the file's status."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | CLOEXEC | _NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused("it is a symbolic link") from None
        return None  # not readable, or a folder in the way: a miss
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("it is not a regular file")
        if not shared_folder:
            why = owner_refusal(st, "it")
            if why is not None:
                raise Refused(why)
        parts = []
        size = st.st_size + 1
        while True:
            chunk = os.read(fd, size)
            if not chunk:
                break
            parts.append(chunk)
            size = 1 << 20
        return b"".join(parts), st
    finally:
        os.close(fd)


def make_folder(folder: str | os.PathLike) -> None:
    """Make ``folder`` and its missing parents, each 0700 whatever the umask (OSError
    where that cannot be done); an existing folder is left as it is."""
    folder = Path(folder)
    missing = []
    p = folder
    while not os.path.lexists(p) and p.parent != p:
        missing.append(p)
        p = p.parent
    for p in reversed(missing):
        try:
            os.mkdir(p, FOLDER_MODE)
        except FileExistsError:
            continue
        fix_mode(p, FOLDER_MODE, folder=True)


def fix_mode(path, mode: int, folder: bool = False) -> None:
    """Set ``path``'s mode to exactly ``mode`` (the umask may have taken bits away, or
    a platform added some), without following a symbolic link put in its place."""
    if not POSIX:
        return
    fd = os.open(path, os.O_RDONLY | NOFOLLOW | CLOEXEC | (_DIRECTORY if folder else 0))
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def file_mode(folder) -> int:
    """The mode of the files cujit writes in ``folder``."""
    return SHARED_FILE_MODE if shared(folder) else FILE_MODE


# -- the shared folder's key ------------------------------------------------------------

_keys: dict[str, bytes] = {}


def key_path() -> Path:
    """Where the shared folder's key lives: ``CUJIT_CACHE_KEY_FILE``, else
    ``$XDG_CONFIG_HOME/cujit/cache-key`` (``~/.config/cujit/cache-key``)."""
    explicit = config.CACHE_KEY_FILE.get()
    if explicit:
        return Path(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "cujit" / "cache-key"


def mac_key() -> bytes:
    """The key of the shared folder's MACs (``Refused`` where the key file is not
    private to this user or holds too short a key).  Made where absent: 32 random
    bytes, as hex, in a file 0600 in a folder 0700."""
    path = key_path()
    found = _keys.get(str(path))
    if found is not None:
        return found
    try:
        found = _read_key(path)
    except FileNotFoundError:
        _create_key(path)
        found = _read_key(path)
    _keys[str(path)] = found
    return found


def _read_key(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | CLOEXEC | _NONBLOCK)  # a link to a secret is fine
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"the cache key file {path} is not a regular file")
        if POSIX and st.st_uid != os.geteuid():
            raise Refused(f"the cache key file {path} is owned by another user (uid {st.st_uid})")
        if POSIX and st.st_mode & 0o077:
            raise Refused(
                f"the cache key file {path} is open to group or others "
                f"(mode {stat.S_IMODE(st.st_mode):04o}; it must be 0600)"
            )
        data = os.read(fd, 4096).strip()
    finally:
        os.close(fd)
    if len(data) < 16:
        raise Refused(f"the cache key file {path} holds no key (16 bytes or more)")
    return data


def _create_key(path: Path) -> None:
    """Write a new random key at ``path`` unless another process did first."""
    import secrets
    import tempfile

    make_folder(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=".cache-key-", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        os.write(fd, (secrets.token_hex(KEY_BYTES) + "\n").encode())
        os.fsync(fd)
        os.close(fd)
        fd = -1
        try:
            os.link(tmp, path)  # never replaces a key that is there
        except FileExistsError:
            pass
    finally:
        if fd >= 0:
            os.close(fd)
        os.unlink(tmp)


def mac(key: bytes, data: bytes) -> bytes:
    """HMAC-SHA256 of ``data`` under ``key``."""
    import hmac

    return hmac.new(key, data, "sha256").digest()


def same_mac(a: bytes, b: bytes) -> bool:
    import hmac

    return hmac.compare_digest(a, b)
