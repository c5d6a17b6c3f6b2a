"""Whether a cache entry that decoded whole can be launched from.

``store.decode`` proves an entry is the bytes some process wrote (its checksum);
it does not prove the header says what this cujit needs.  An entry written by a
damaged or different writer could name no symbol, lack a section, or carry a
parameter mask (``LaunchRecord.passed``) of the wrong length, which would make the launch pass the
wrong
parameters.  ``usable`` checks every field a hit reads; an entry that fails is
treated as damaged: removed, and the kernel compiled again.
"""

from __future__ import annotations

from cujit.abi import flat_param_kinds

SECTIONS = ("cubin", "ptx", "llvm")


def usable(entry, arg_types) -> bool:
    """Whether ``entry`` (a ``store.Entry``) has every field a cache hit reads, each of
    the right type and length for ``arg_types``."""
    header, sections = entry.header, entry.sections
    if not isinstance(header, dict) or not isinstance(sections, dict):
        return False
    if not all(isinstance(sections.get(s), bytes) for s in SECTIONS) or not sections["cubin"]:
        return False
    try:
        sections["ptx"].decode()
        sections["llvm"].decode()
    except UnicodeDecodeError:
        return False
    return record_fits(entry, arg_types)


def record_fits(entry, arg_types) -> bool:
    """Whether the entry's launch record (either target's) is whole and fits ``arg_types``."""
    header = entry.header
    if not isinstance(header, dict):
        return False
    record = header.get("record")  # abi.LaunchRecord.to_json
    if not isinstance(record, dict):
        return False
    if not isinstance(record.get("symbol"), str) or not record["symbol"]:
        return False
    if not isinstance(record.get("cooperative"), bool):
        return False
    if not _bools(record.get("written"), len(arg_types)):
        return False
    return _bools(record.get("passed"), len(flat_param_kinds(arg_types)))


def _bools(value, n: int) -> bool:
    return isinstance(value, list) and len(value) == n and all(isinstance(v, bool) for v in value)


def discard(entry) -> None:
    """Remove an unusable entry's file (another process may have done it already)."""
    try:
        entry.path.unlink()
    except OSError:
        pass
