"""DWARF types of kernel values, as LLVM debug metadata (``DIBasicType``...).

- a bool, integer or float is a ``DIBasicType`` named after cujit's type (``int32``);
- a complex number is the struct it is in memory: ``real``, ``imag``;
- an array is described as numba describes its arrays, so a debugger shows what a
  numba user knows: the struct ``{meminfo, parent, nitems, itemsize, data, shape,
  strides}``, ``data`` a pointer to the element.  Debug builds store exactly that
  struct into the variable's slot (``debugvars.array_struct``);
- a record (structured dtype) is a struct of its fields at NumPy's offsets;
- a variable holding values of several types (``x = 1`` then ``x = 2.5``) is a union
  of them, its members named ``_<type>``.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.types import Array, Record, Scalar, Type, int64

# Scalar kind -> DWARF base type encoding.
_ENCODING = {
    "b": "DW_ATE_boolean",
    "i": "DW_ATE_signed",
    "u": "DW_ATE_unsigned",
    "f": "DW_ATE_float",
}
_PARTS = ("real", "imag")
# numba's array struct, field by field.
ARRAY_FIELDS = ("meminfo", "parent", "nitems", "itemsize", "data", "shape", "strides")


def bits_of(t: Type) -> int:
    """The size in bits of what ``type_of(t)`` describes."""
    if isinstance(t, Scalar):
        return 8 if t.kind == "b" else t.bits
    if isinstance(t, Array):
        return 64 * (4 + 1 + 2 * t.ndim)
    if isinstance(t, Record):
        return 8 * t.itemsize
    return 0


class TypeTable:
    """The DWARF type of each cujit type, made once per module."""

    def __init__(self, module: ll.Module):
        self.module = module
        self.file: ll.DIValue | None = None  # the compile unit's (LLVM wants one on unions)
        self._types: dict[Type, ll.DIValue | None] = {}

    def _add(self, kind: str, fields: dict, distinct: bool = False) -> ll.DIValue:
        return self.module.add_debug_info(kind, fields, is_distinct=distinct)

    def _basic(self, name: str, bits: int, encoding: str) -> ll.DIValue:
        return self._add(
            "DIBasicType", {"name": name, "size": bits, "encoding": ll.DIToken(encoding)}
        )

    def _member(self, name: str, base, bits: int, offset: int | None) -> ll.DIValue:
        fields = {"tag": ll.DIToken("DW_TAG_member"), "name": name, "baseType": base}
        fields["size"] = bits
        if offset is not None:
            fields["offset"] = offset
        return self._add("DIDerivedType", fields)

    def _struct(
        self, name: str, bits: int, members: list, tag: str = "structure", ident: str = ""
    ) -> ll.DIValue:
        fields = {
            "tag": ll.DIToken(f"DW_TAG_{tag}_type"),
            "name": name,
            "size": bits,
            "elements": self.module.add_metadata(members),
            "identifier": ident or name,
        }
        if tag == "union":
            fields["file"] = self.file
        return self._add("DICompositeType", fields, distinct=True)

    def pointer(self, base) -> ll.DIValue:
        return self._add(
            "DIDerivedType",
            {"tag": ll.DIToken("DW_TAG_pointer_type"), "baseType": base, "size": 64},
        )

    def type_of(self, t: Type) -> ll.DIValue | None:
        """The DWARF type of a value of type ``t`` (None: cujit describes none)."""
        if t not in self._types:
            self._types[t] = self._make(t)
        return self._types[t]

    def _make(self, t: Type) -> ll.DIValue | None:
        if isinstance(t, Scalar) and t.kind == "c":
            part = self.type_of(t.part_type)
            half = t.bits // 2
            members = [self._member(n, part, half, k * half) for k, n in enumerate(_PARTS)]
            return self._struct(t.name, t.bits, members)
        if isinstance(t, Scalar) and t.kind in _ENCODING:
            return self._basic(t.name, bits_of(t), _ENCODING[t.kind])
        if isinstance(t, Array):
            return self.array(t)
        if isinstance(t, Record):
            members = [
                self._member(name, self.type_of(ft), bits_of(ft), 8 * off)
                for name, ft, off in t.fields
                if self.type_of(ft) is not None
            ]
            return self._struct(t.name, bits_of(t), members)
        return None

    def array(self, t: Array, owner: str = "") -> ll.DIValue:
        """numba's array struct for ``t``; ``owner``: the variable whose own type it is
        (LLVM keeps one node per identifier: each array variable gets its own, as
        numba's do)."""
        i64 = self.type_of(int64)
        void_ptr = self.pointer(self._basic("uint8", 8, "DW_ATE_unsigned"))
        dims = self._add(
            "DICompositeType",
            {
                "tag": ll.DIToken("DW_TAG_array_type"),
                "baseType": i64,
                "size": 64 * t.ndim,
                "elements": self.module.add_metadata([self._add("DISubrange", {"count": t.ndim})]),
            },
        )
        bases = (void_ptr, void_ptr, i64, i64, self.pointer(self.type_of(t.dtype)), dims, dims)
        members, offset = [], 0
        for name, base in zip(ARRAY_FIELDS, bases, strict=True):
            bits = 64 * t.ndim if base is dims else 64
            members.append(self._member(name, base, bits, offset))
            offset += bits
        ident = f"{t} {owner}" if owner else str(t)
        return self._struct(str(t), offset, members, ident=ident)

    def union(self, ts: list[Type]) -> ll.DIValue:
        """One variable, values of several types: a union of them (no offsets: every
        member starts at the union's start)."""
        members = sorted(((f"_{t.name}", t) for t in ts), key=lambda m: m[0])
        elements = [self._member(n, self.type_of(t), bits_of(t), None) for n, t in members]
        name = "union(" + ", ".join(n[1:] for n, _ in members) + ")"
        return self._struct(name, max(bits_of(t) for t in ts), elements, tag="union")
