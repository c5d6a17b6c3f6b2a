"""A sanity check of object code before MCJIT loads it: LLVM's object loader trusts its
input, and a malformed object crashes the process instead of raising.

``check`` reads the ELF header and section table with ``struct`` and raises ValueError
unless the bytes are a 64-bit little-endian relocatable ELF object for this machine
whose section table and sections lie within the bytes; it returns the names of the
symbols the object needs from outside (a name MCJIT cannot resolve is a fatal error in
LLVM, so the loader checks them first).  It stops accidents (a file
damaged after its checksum was made, an entry of another architecture), not a file
crafted to pass it: cache entries are trusted as Python trusts its ``.pyc`` files.
"""

from __future__ import annotations

import struct

_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr
_SECTION = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym
_ET_REL = 1
_SHT_SYMTAB = 2
_SHT_NOBITS = 8
_STB_GLOBAL = 1
# e_machine by the triple's architecture (the ELF specification's numbers).
_MACHINES = {"x86_64": 62, "aarch64": 183, "powerpc64le": 21, "ppc64le": 21, "riscv64": 243}


def check(data: bytes, triple: str) -> list[str]:
    """Raise ValueError unless ``data`` is a well-formed ELF object for ``triple``;
    return the global symbols it uses and does not define."""
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
    sections = [_SECTION.unpack_from(data, shoff + k * shentsize) for k in range(shnum)]
    for k, fields in enumerate(sections):
        kind, offset, size, link = fields[1], fields[4], fields[5], fields[6]
        if kind != _SHT_NOBITS and offset + size > len(data):
            raise ValueError(f"ELF section {k} past the end of the object")
        if link >= shnum:
            raise ValueError(f"ELF section {k} links to a section that does not exist")
    return [name for s in sections if s[1] == _SHT_SYMTAB for name in _undefined(data, s, sections)]


def _undefined(data: bytes, symtab: tuple, sections: list) -> list[str]:
    """The names of the global symbols ``symtab`` lists as undefined (section 0)."""
    strings = sections[symtab[6]]
    start, end = strings[4], strings[4] + strings[5]
    names = []
    for at in range(symtab[4], symtab[4] + symtab[5] - _SYMBOL.size + 1, _SYMBOL.size):
        name, info, _, shndx, _, _ = _SYMBOL.unpack_from(data, at)
        if shndx != 0 or not name or info >> 4 != _STB_GLOBAL:
            continue
        stop = data.find(b"\0", start + name, end)
        if start + name >= end or stop < 0:
            raise ValueError("ELF symbol name outside its string table")
        names.append(data[start + name : stop].decode("ascii", "replace"))
    return names
