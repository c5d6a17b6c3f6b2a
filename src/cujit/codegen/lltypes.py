"""How cujit types become LLVM types.

In registers (``value_type``): bool is ``i1``, intN is ``iN`` (LLVM integers
carry no sign: signedness picks the instruction, see ``scalars.py``), float16 is
``half``, bfloat16 ``i16`` (its bits: ``bf16.py``), float32 ``float`` and float64
``double``; complex64 is ``{float, float}`` and
complex128 ``{double, double}`` (real, imaginary: NumPy's memory layout too).  In memory
(``memory_type``) a bool takes one
byte (``i8``), as NumPy stores it.  Aggregates are literal structs:

- ``Array(T, n)``  -> ``{T* data, [n x i64] extents, [n x i64] byte strides}``
- ``Tuple(...)``   -> ``{item, ...}``
- ``RangeType`` and ``RangeIter`` -> ``{i64 start|next, i64 stop, i64 step}``
- ``Record`` -> ``i8*``, the address of its bytes (in memory: ``[size x i8]``)

NoneType and PyObject values exist only at compile time: ``value_type`` gives
None for them and lowering produces no LLVM value (an empty struct stands in
for them inside a tuple).
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.types import (
    Array,
    CharSeq,
    CPointer,
    NoneType,
    PyObject,
    RangeIter,
    RangeType,
    Record,
    Scalar,
    Tuple,
    Type,
)
from cujit.types.enums import EnumMember
from cujit.types.extension import is_extension_type

I1 = ll.IntType(1)
I8 = ll.IntType(8)
I32 = ll.IntType(32)
I64 = ll.IntType(64)
VOID = ll.VoidType()
F32 = ll.FloatType()
F64 = ll.DoubleType()
F16 = ll.HalfType()
C64 = ll.LiteralStructType([F32, F32])
C128 = ll.LiteralStructType([F64, F64])

# Field numbers of the aggregate structs.
ARRAY_DATA, ARRAY_SHAPE, ARRAY_STRIDES = 0, 1, 2
ITER_NEXT, ITER_STOP, ITER_STEP = 0, 1, 2
RANGE_STRUCT = ll.LiteralStructType([I64, I64, I64])
RECORD_POINTER = ll.PointerType(I8)


def scalar_type(t: Scalar) -> ll.Type:
    """The register type of a scalar."""
    if t.kind == "b":
        return I1
    if t.kind == "f":
        if t.name == "bfloat16":  # its bits: libNVVM has no bfloat (codegen/bf16.py)
            return ll.IntType(16)
        if t.bits == 8:  # the fp8 types: their byte (codegen/fp8.py)
            return I8
        return {16: F16, 32: F32}.get(t.bits, F64)
    if t.kind == "c":
        return C64 if t.bits == 64 else C128
    return ll.IntType(t.bits)


def memory_type(t: Scalar | Record | CharSeq) -> ll.Type:
    """The type a scalar has in memory (array elements): bool is a byte; a record is
    its bytes."""
    if isinstance(t, (Record, CharSeq)):
        return ll.ArrayType(I8, t.size)
    return I8 if t.kind == "b" else scalar_type(t)


def array_type(t: Array, addrspace: int = 0) -> ll.LiteralStructType:
    data = ll.PointerType(memory_type(t.dtype), addrspace)
    dims = ll.ArrayType(I64, t.ndim)
    return ll.LiteralStructType([data, dims, dims])


def value_type(t: Type) -> ll.Type | None:
    """The LLVM type of an SSA value of type ``t``; None when it has no machine form."""
    if isinstance(t, Scalar):
        return scalar_type(t)
    if isinstance(t, Array):
        return array_type(t)
    if isinstance(t, (Record, CharSeq)):  # a reference to the record's (string's) bytes
        return RECORD_POINTER
    if isinstance(t, Tuple):
        items = [value_type(i) for i in t.items]
        return ll.LiteralStructType([ll.LiteralStructType([]) if i is None else i for i in items])
    if isinstance(t, (RangeType, RangeIter)):
        return RANGE_STRUCT
    if isinstance(t, CPointer):  # its address (types.numba_names.CPointer)
        return ll.IntType(64)
    if isinstance(t, EnumMember):  # its value (types.enums)
        return value_type(t.dtype)
    if isinstance(t, (NoneType, PyObject)) or t is None:
        return None
    if is_extension_type(t):  # a library's opaque-model type: a pointer-sized handle
        return ll.IntType(8).as_pointer()
    raise TypeError(f"no LLVM representation for {t}")


def has_value(t: Type | None) -> bool:
    """Whether values of type ``t`` exist at run time."""
    return t is not None and not isinstance(t, (NoneType, PyObject))


def const_int(ty: ll.IntType, value: int) -> ll.Constant:
    """An integer constant wrapped to ``ty``'s width, printed signed (``i8 -1``, not ``i8 255``)."""
    bits = ty.width
    value = int(value) & ((1 << bits) - 1)
    if bits == 1:
        return ll.Constant(ty, bool(value))  # printed ``true``/``false``, as LLVM writes i1
    if bits > 1 and value >> (bits - 1):
        value -= 1 << bits
    return ll.Constant(ty, value)


def i64(value: int) -> ll.Constant:
    return const_int(I64, value)
