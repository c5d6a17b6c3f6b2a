"""A sanity check of object code before MCJIT loads it: LLVM's object loader trusts its
input, and a malformed object crashes the process instead of raising.

``check`` reads the ELF header and section table with ``struct`` and raises ValueError
unless the bytes are a 64-bit little-endian relocatable ELF object for this machine
whose section table and sections lie within the bytes.  It stops accidents (a file
damaged after its checksum was made, an entry of another architecture), not a file
crafted to pass it: cache entries are trusted as Python trusts its ``.pyc`` files.
"""

from __future__ import annotations

import struct

_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr
_SECTION = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_ET_REL = 1
_SHT_NOBITS = 8
# e_machine by the triple's architecture (the ELF specification's numbers).
_MACHINES = {"x86_64": 62, "aarch64": 183, "powerpc64le": 21, "ppc64le": 21, "riscv64": 243}


def check(data: bytes, triple: str) -> None:
    """Raise ValueError unless ``data`` is a well-formed ELF object for ``triple``."""
    if len(data) < _HEADER.size:
        raise ValueError("object code shorter than an ELF header")
    ident, etype, machine, _, _, _, shoff, _, ehsize, _, _, shentsize, shnum, shstrndx = (
        _HEADER.unpack_from(data)
    )
    if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF object")
    if etype != _ET_REL or ehsize != _HEADER.size:
        raise ValueError("not a relocatable ELF object")
    want = _MACHINES.get(triple.split("-")[0])
    if want is not None and machine != want:
        raise ValueError(f"ELF object for machine {machine}, not this one's ({want})")
    if shentsize != _SECTION.size or shnum == 0 or shstrndx >= shnum:
        raise ValueError("malformed ELF section table")
    if shoff + shnum * shentsize > len(data):
        raise ValueError("ELF section table past the end of the object")
    for k in range(shnum):
        fields = _SECTION.unpack_from(data, shoff + k * shentsize)
        kind, offset, size, link = fields[1], fields[4], fields[5], fields[6]
        if kind != _SHT_NOBITS and offset + size > len(data):
            raise ValueError(f"ELF section {k} past the end of the object")
        if link >= shnum:
            raise ValueError(f"ELF section {k} links to a section that does not exist")
