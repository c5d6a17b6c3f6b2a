"""DWARF types of kernel values, as LLVM debug metadata (``DIBasicType``...).

Named and shaped as numba names and shapes them, so that a debugger shows a numba
user what they know, and numba-cuda's debug-info tests read cujit's output:

- a bool, integer or float is a ``DIBasicType`` named after its type (``int32``);
- a complex number is the struct ``{real, imag}`` of its LLVM parts, named
  ``complex64 ({float, float})``;
- an array is numba's array struct ``{meminfo, parent, nitems, itemsize, data,
  shape, strides}``, ``data`` a pointer to the element, ``shape`` and ``strides``
  arrays of int64.  Debug builds store exactly that struct into the variable's
  slot (``debugvars.array_struct``);
- a record (structured dtype) is a struct of its fields at NumPy's offsets;
- a variable holding values of several types (``x = 1`` then ``x = 2.5``) is a
  union of them, its members named ``_<type>``.

Base types are made once per module; each variable's pointers, members and
composites are nodes of its own (``fresh``), as numba's are.  llvmlite merges
equal nodes, ``distinct`` ones too, which would leave two array variables
sharing one type node.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.lltypes import memory_type, value_type
from cujit.types import Array, PyObject, Record, Scalar, Type, int64

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


def array_llvm_type(t: Array) -> ll.LiteralStructType:
    """The LLVM form of numba's array struct for ``t`` (what a debug slot holds)."""
    data = ll.PointerType(memory_type(t.dtype))
    dims = ll.ArrayType(ll.IntType(64), t.ndim)
    i8p = ll.PointerType(ll.IntType(8))
    return ll.LiteralStructType([i8p, i8p, ll.IntType(64), ll.IntType(64), data, dims, dims])


class TypeTable:
    """The DWARF types of one module's values: ``type_of`` (shared nodes, for
    subroutine types) and ``fresh`` (a variable's own nodes)."""

    def __init__(self, module: ll.Module):
        self.module = module
        self.file: ll.DIValue | None = None  # the compile unit's (LLVM wants one on unions)
        self._types: dict[Type, ll.DIValue | None] = {}
        self._fresh = False

    def type_of(self, t: Type) -> ll.DIValue | None:
        """The DWARF type of a value of type ``t`` (None: cujit describes none)."""
        if self._fresh:
            return self._make(t)
        if t not in self._types:
            self._types[t] = self._make(t)
        return self._types[t]

    def fresh(self, t: Type | list[Type]) -> ll.DIValue | None:
        """A variable's own type: ``t``'s, or the union of several types."""
        self._fresh = True
        try:
            if isinstance(t, list):
                return self.union(t) if len(t) > 1 else self.type_of(t[0])
            return self.type_of(t)
        finally:
            self._fresh = False

    def _add(self, kind: str, fields: dict, distinct: bool = False) -> ll.DIValue:
        if self._fresh and kind != "DIBasicType":
            m = self.module
            operands = tuple(sorted(fields.items(), key=lambda f: f[0]))
            return ll.DIValue(m, distinct, kind, operands, name=str(len(m.metadata)))
        return self.module.add_debug_info(kind, fields, is_distinct=distinct)

    def _basic(self, name: str, bits: int, encoding: str) -> ll.DIValue:
        return self.module.add_debug_info(
            "DIBasicType", {"name": name, "size": bits, "encoding": ll.DIToken(encoding)}
        )

    def _member(self, name: str, base, bits: int, offset: int | None) -> ll.DIValue:
        fields = {"tag": ll.DIToken("DW_TAG_member"), "name": name, "baseType": base}
        fields["size"] = bits
        if offset is not None:
            fields["offset"] = offset
        return self._add("DIDerivedType", fields)

    def _struct(self, name: str, ident: str, bits: int, members: list, tag="structure"):
        fields = {
            "tag": ll.DIToken(f"DW_TAG_{tag}_type"),
            "name": name,
            "size": bits,
            "elements": self.module.add_metadata(members),
            "identifier": ident,
        }
        if tag == "union":
            fields["file"] = self.file
        return self._add("DICompositeType", fields, distinct=True)

    def pointer(self, base) -> ll.DIValue:
        return self._add(
            "DIDerivedType",
            {"tag": ll.DIToken("DW_TAG_pointer_type"), "baseType": base, "size": 64},
        )

    def _make(self, t: Type) -> ll.DIValue | None:
        if isinstance(t, Scalar) and t.kind == "c":
            lt = value_type(t.part_type)
            part = self._basic(str(lt), t.bits // 2, "DW_ATE_float")
            half = t.bits // 2
            members = [self._member(n, part, half, k * half) for k, n in enumerate(_PARTS)]
            ident = str(value_type(t))
            return self._struct(f"{t.name} ({ident})", ident, t.bits, members)
        if isinstance(t, Scalar) and t.kind in _ENCODING:
            return self._basic(t.name, bits_of(t), _ENCODING[t.kind])
        if isinstance(t, Array):
            return self._array(t)
        if isinstance(t, PyObject) and type(t.value).__name__ == "GridGroup":
            return self._basic("GridGroup", 64, "DW_ATE_unsigned")  # numba's: a handle
        if isinstance(t, Record):
            members = [
                self._member(name, self.type_of(ft), bits_of(ft), 8 * off)
                for name, ft, off in t.fields
                if self.type_of(ft) is not None
            ]
            return self._struct(t.name, t.name, bits_of(t), members)
        return None

    def _dims(self, t: Array) -> ll.DIValue:
        lt = ll.ArrayType(ll.IntType(64), t.ndim)
        return self._add(
            "DICompositeType",
            {
                "tag": ll.DIToken("DW_TAG_array_type"),
                "baseType": self.type_of(int64),
                "name": f"UniTuple(int64 x {t.ndim}) ({lt})",
                "identifier": str(lt),
                "size": 64 * t.ndim,
                "elements": self.module.add_metadata(
                    [self.module.add_debug_info("DISubrange", {"count": t.ndim})]
                ),
            },
        )

    def _array(self, t: Array) -> ll.DIValue:
        byte = self._basic("i8", 8, "DW_ATE_unsigned")
        i64 = self.type_of(int64)
        bases = (
            lambda: self.pointer(byte),
            lambda: self.pointer(byte),
            lambda: i64,
            lambda: i64,
            lambda: self.pointer(self.type_of(t.dtype)),
            lambda: self._dims(t),
            lambda: self._dims(t),
        )
        members, offset = [], 0
        for name, base in zip(ARRAY_FIELDS, bases, strict=True):
            bits = 64 * t.ndim if name in ("shape", "strides") else 64
            members.append(self._member(name, base(), bits, offset))
            offset += bits
        ident = str(array_llvm_type(t))
        return self._struct(f"{t} ({ident})", ident, offset, members)

    def union(self, ts: list[Type]) -> ll.DIValue:
        """One variable, values of several types: a union of them (no offsets: every
        member starts at the union's start)."""
        members = sorted(((f"_{t.name}", t) for t in ts), key=lambda m: m[0])
        elements = [self._member(n, self.type_of(t), bits_of(t), None) for n, t in members]
        name = "union(" + ", ".join(n[1:] for n, _ in members) + ")"
        return self._struct(name, name, max(bits_of(t) for t in ts), elements, tag="union")
