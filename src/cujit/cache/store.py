"""Cache entries on disk: one file per kernel specialisation, written atomically.

An entry file, ``<kernel name>-<key>.cujit``::

    b"CUJITC03"                      magic and format version (8 bytes)
    blake2b-256(body)                32 bytes: detects a truncated or corrupt entry
    body = u32 header length (little-endian) | header (JSON) | sections

The header holds the key, the kernel's name, its whole ``abi.LaunchRecord`` (what a
launch needs: symbol, parameters passed, written arguments, cooperative), a description for
``python -m cujit cache list`` and the name and length of each section
(``cubin``, ``ptx``, ``llvm``), which follow it back to back.

In the shared folder (``trust.shared``) an entry is ``b"CUJITM03"``, then the
HMAC-SHA256 of the magic and body under the user's key (``trust.mac_key``), then the
same body: the MAC, not the file's owner, says who wrote it.  Either way a file is read
through ``trust.read`` (no symbolic link, not another user's outside the shared folder)
and decoded as data (JSON and byte lengths): nothing read from the cache can run code.

Writing goes to a temporary file in the same folder, is flushed and fsync'd,
then ``os.replace``'d over the entry: a reader sees the old entry, the new one
or none, never part of one, and two processes writing the same key at once
leave one whole entry (the last to finish).  A reader that finds a damaged
entry removes it and the caller compiles again.
"""

from __future__ import annotations

import json
import os
import re
import struct
import tempfile
from pathlib import Path

from cujit.cache import trust

try:  # hashlib's import loads OpenSSL (~3.5 ms), the larger part of a cache hit's imports
    from _blake2 import blake2b as _blake2b
except ImportError:  # an interpreter without the builtin module
    from hashlib import blake2b as _blake2b

MAGIC = b"CUJITC03"
SHARED_MAGIC = b"CUJITM03"
SUFFIX = ".cujit"
TEMP_PREFIX = ".tmp-"
_DIGEST = 32


def hasher(data: bytes = b""):
    """A new 256-bit BLAKE2b hash: the cache's one digest (keys, checksums, stamps)."""
    return _blake2b(data, digest_size=_DIGEST)


class Entry:
    """One entry as read back: its header and its sections' bytes.

    A plain class: a dataclass would cost a millisecond of import on the cache-hit path.
    """

    __slots__ = ("header", "path", "sections")

    def __init__(self, path: Path, header: dict, sections: dict[str, bytes]):
        self.path, self.header, self.sections = path, header, sections


def entry_path(folder: str | os.PathLike, name: str, key: str) -> Path:
    """Where the entry of kernel ``name`` with ``key`` lives."""
    safe = re.sub(r"[^A-Za-z0-9_.]", "_", name)[:64] or "kernel"
    return Path(folder) / f"{safe}-{key}{SUFFIX}"


def encode(header: dict, sections: dict[str, bytes], mac_key: bytes | None = None) -> bytes:
    """An entry's bytes: checksummed, or with ``mac_key`` (the shared folder's) MAC'd."""
    header = dict(header, sections=[[k, len(v)] for k, v in sections.items()])
    head = json.dumps(header, sort_keys=True).encode()
    body = struct.pack("<I", len(head)) + head + b"".join(sections.values())
    if mac_key is not None:
        return SHARED_MAGIC + trust.mac(mac_key, SHARED_MAGIC + body) + body
    return MAGIC + hasher(body).digest() + body


class Unauthentic(ValueError):
    """An entry whose MAC (or lack of one) says it is not to be loaded here."""


def decode(data: bytes, mac_key: bytes | None = None) -> tuple[dict, dict[str, bytes]]:
    """Header and sections of an entry's bytes; ValueError if it is not whole, and
    ``Unauthentic`` if, given the shared folder's ``mac_key``, its MAC is not right."""
    if len(data) < len(MAGIC) + _DIGEST + 4:
        raise ValueError("not a cujit cache entry (too short)")
    body = _checked_body(data, mac_key)
    (n,) = struct.unpack_from("<I", body)
    header = json.loads(body[4 : 4 + n])
    sections, pos = {}, 4 + n
    for name, size in header["sections"]:
        if not isinstance(size, int) or size < 0:
            raise ValueError("a section has no length")
        sections[name] = body[pos : pos + size]
        pos += size
    if pos != len(body):
        raise ValueError("section lengths do not add up")
    return header, sections


def _checked_body(data: bytes, mac_key: bytes | None) -> bytes:
    """The body of an entry whose checksum (or, with ``mac_key``, MAC) is right."""
    magic = data[: len(MAGIC)]
    digest, body = data[len(MAGIC) : len(MAGIC) + _DIGEST], data[len(MAGIC) + _DIGEST :]
    if mac_key is not None:
        if magic == MAGIC:
            raise Unauthentic("it carries no MAC, and its folder is shared (CUJIT_CACHE_SHARED)")
        if magic != SHARED_MAGIC:
            raise ValueError("not a cujit cache entry (bad magic)")
        if not trust.same_mac(trust.mac(mac_key, SHARED_MAGIC + body), digest):
            raise Unauthentic(
                "its MAC does not match: it was changed, or written with another key "
                "than this user's (docs/cache-trust.md says how a team shares one)"
            )
        return body
    if magic == SHARED_MAGIC:
        raise Unauthentic(
            "it is a shared folder's entry, and this folder is not declared shared "
            "(CUJIT_CACHE_SHARED)"
        )
    if magic != MAGIC:
        raise ValueError("not a cujit cache entry (bad magic)")
    if hasher(body).digest() != digest:
        raise ValueError("checksum mismatch (truncated or corrupt)")
    return body


def load(path: Path, key: str, on_damage=None, mac_key: bytes | None = None) -> Entry | None:
    """The entry at ``path`` if it exists, is whole, is to be trusted (``trust.read``;
    given the shared folder's ``mac_key``, its MAC is right) and has ``key``.  One
    that is not is left out, and ``on_damage(path, why)`` called where given; a damaged
    one in a private folder is removed."""
    shared_folder = mac_key is not None
    try:
        data = trust.read(path, shared_folder)
    except trust.Refused as exc:
        if on_damage is not None:
            on_damage(path, str(exc))
        return None
    if data is None:  # absent (the common miss) or unreadable
        return None
    try:
        header, sections = decode(data, mac_key)
        if header.get("key") != key:
            raise ValueError("key mismatch")
    except Unauthentic as exc:
        if on_damage is not None:
            on_damage(path, str(exc))
        return None
    except (ValueError, KeyError, TypeError, struct.error) as exc:
        if not shared_folder:  # another's file in the shared folder is not ours to remove
            _remove(path)
        if on_damage is not None:
            on_damage(path, f"it is damaged ({exc or type(exc).__name__})")
        return None
    return Entry(path, header, sections)


def save(path: Path, header: dict, sections: dict[str, bytes], mac_key=None) -> None:
    """Write an entry atomically (OSError if the folder is not writable); MAC'd with
    ``mac_key``, the shared folder's key, where given."""
    atomic_write(path, encode(header, sections, mac_key))


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` in one step: temp file, fsync, ``os.replace``.  A
    folder made on the way is 0700 and the file 0600 (0644 in the shared folder),
    whatever the umask."""
    trust.make_folder(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if trust.POSIX:
                os.fchmod(f.fileno(), trust.file_mode(path.parent))
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove(Path(tmp))
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable across a crash (POSIX); harmless to skip elsewhere.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:  # already gone (another process removed or replaced it)
        pass


def entries(folder: str | os.PathLike, mac_key: bytes | None = None) -> list[Entry | Path]:
    """Every entry in ``folder``, read back; one that is damaged or not to be trusted
    (``load``'s checks, ``mac_key`` as there) is given as its bare path."""
    out: list[Entry | Path] = []
    for path in sorted(Path(folder).glob(f"*{SUFFIX}")):
        try:
            data = trust.read(path, mac_key is not None)
            if data is None:
                raise ValueError("unreadable")
            header, sections = decode(data, mac_key)
            out.append(Entry(path, header, sections))
        except (trust.Refused, ValueError, KeyError, TypeError, struct.error):
            out.append(path)
    return out


def clear(folder: str | os.PathLike) -> int:
    """Remove every entry, stamp and leftover temporary file; return how many."""
    from cujit.cache.toolchain import STAMP_PREFIX

    folder = Path(folder)
    if not folder.is_dir():
        return 0
    n = 0
    for path in folder.iterdir():
        name = path.name
        if name.endswith(SUFFIX) or name.startswith((TEMP_PREFIX, STAMP_PREFIX)):
            _remove(path)
            n += 1
    return n
