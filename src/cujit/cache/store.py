"""Cache entries on disk: one file per kernel specialisation, written atomically.

An entry file, ``<kernel name>-<key>.cujit``::

    b"CUJITC03"                      magic and format version (8 bytes)
    blake2b-256(body)                32 bytes: detects a truncated or corrupt entry
    body = u32 header length (little-endian) | header (JSON) | sections

The header holds the key, the kernel's name, its whole ``abi.LaunchRecord`` (what a
launch needs: symbol, parameters passed, written arguments, cooperative), a description for
``python -m cujit cache list`` and the name and length of each section
(``cubin``, ``ptx``, ``llvm``), which follow it back to back.

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

try:  # hashlib's import loads OpenSSL (~3.5 ms), the larger part of a cache hit's imports
    from _blake2 import blake2b as _blake2b
except ImportError:  # an interpreter without the builtin module
    from hashlib import blake2b as _blake2b

MAGIC = b"CUJITC03"
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


def encode(header: dict, sections: dict[str, bytes]) -> bytes:
    header = dict(header, sections=[[k, len(v)] for k, v in sections.items()])
    head = json.dumps(header, sort_keys=True).encode()
    body = struct.pack("<I", len(head)) + head + b"".join(sections.values())
    return MAGIC + hasher(body).digest() + body


def decode(data: bytes) -> tuple[dict, dict[str, bytes]]:
    """Header and sections of an entry's bytes; ValueError if it is not whole."""
    if len(data) < len(MAGIC) + _DIGEST + 4 or not data.startswith(MAGIC):
        raise ValueError("not a cujit cache entry (bad magic or too short)")
    digest, body = data[len(MAGIC) : len(MAGIC) + _DIGEST], data[len(MAGIC) + _DIGEST :]
    if hasher(body).digest() != digest:
        raise ValueError("checksum mismatch (truncated or corrupt)")
    (n,) = struct.unpack_from("<I", body)
    header = json.loads(body[4 : 4 + n])
    sections, pos = {}, 4 + n
    for name, size in header["sections"]:
        sections[name] = body[pos : pos + size]
        pos += size
    if pos != len(body):
        raise ValueError("section lengths do not add up")
    return header, sections


def load(path: Path, key: str, on_damage=None) -> Entry | None:
    """The entry at ``path`` if it exists, is whole and has ``key``; a damaged one is
    removed (and ``on_damage(path, why)`` called, where given)."""
    try:
        data = path.read_bytes()
    except OSError:  # absent (the common miss) or unreadable
        return None
    try:
        header, sections = decode(data)
        if header.get("key") != key:
            raise ValueError("key mismatch")
    except (ValueError, KeyError, TypeError, struct.error) as exc:
        _remove(path)
        if on_damage is not None:
            on_damage(path, f"it is damaged ({exc or type(exc).__name__})")
        return None
    return Entry(path, header, sections)


def save(path: Path, header: dict, sections: dict[str, bytes]) -> None:
    """Write an entry atomically (OSError if the folder is not writable)."""
    atomic_write(path, encode(header, sections))


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` in one step: temp file, fsync, ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
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


def entries(folder: str | os.PathLike) -> list[Entry | Path]:
    """Every entry in ``folder``, read back; a damaged one is given as its bare path."""
    out: list[Entry | Path] = []
    for path in sorted(Path(folder).glob(f"*{SUFFIX}")):
        try:
            header, sections = decode(path.read_bytes())
            out.append(Entry(path, header, sections))
        except (OSError, ValueError, KeyError, TypeError, struct.error):
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
