"""cujit's types: scalars, arrays, tuples (named too) and the compile-time-only kinds.

The scalar instances double as numba's type objects, so kernels port unchanged:
``float32[:]`` is an array type, ``float32(int32, int32)`` a signature, and in
a kernel ``float32(x)`` is a cast.  Types are frozen dataclasses: equal types
compare equal and hash alike, so they key caches and specialisations.
"""

from __future__ import annotations

import sys
from dataclasses import field
from typing import TYPE_CHECKING

from cujit.frozen import frozen

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where a dtype is needed, not here: it is ~85% of the time
# ``from cujit import cuda`` would otherwise take (see tests/test_import.py).


def loaded_module(name: str):
    """The module ``name`` if the process has imported it, else None (nothing is
    imported for the asking).  Where another thread is importing it at this moment (the
    compiler's warm-up beside the driver's start imports numpy), this waits for that
    import to finish, as an ``import`` statement does: ``sys.modules`` already holds the
    module then, but not yet its names (importlib marks its spec ``_initializing``)."""
    module = sys.modules.get(name)
    if module is None or not getattr(getattr(module, "__spec__", None), "_initializing", False):
        return module
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:  # the other thread's import failed
        return None


class Type:
    """Base of all cujit types.

    cujit's own types are frozen dataclasses with their own fields.  A library's type
    (an extension type, ``cujit.extending``) subclasses ``Type`` directly and calls
    ``super().__init__(name)``, as numba's do: such types are equal when their class and
    ``key`` (by default the name) are, and ``T[::1]`` / ``T(args)`` make an array type
    and a signature as for the built-in types.
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"a type's name is a str, not {type(name).__name__}")
        self.name = name

    @property
    def key(self) -> object:
        """What identifies an extension type within its class (numba's ``Type.key``)."""
        return self.name

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.key == self.key

    def __hash__(self) -> int:
        return hash((type(self), self.key))

    def __str__(self) -> str:
        return str(getattr(self, "name", type(self).__name__))

    def __getitem__(self, spec) -> "Array":
        from cujit.types.extension import storage

        return Array.from_slices(storage(self), spec)

    def __call__(self, *args: "Type") -> "Signature":
        return Signature(self, tuple(args))

    def _cached_hash(self) -> int:
        # Types key every specialisation lookup at launch: hash a type's fields once,
        # not on every lookup.  (Classes opt in with ``__hash__ = Type._cached_hash``,
        # which also stops dataclass from generating its own.)
        h = self.__dict__.get("_hash")
        if h is None:
            import dataclasses

            h = hash(
                (type(self).__name__,)
                + tuple(getattr(self, f.name) for f in dataclasses.fields(self))
            )
            object.__setattr__(self, "_hash", h)
        return h

    def __repr__(self) -> str:
        return str(self)


@frozen(repr=False)
class Scalar(Type):
    """A machine scalar: ``kind`` is 'b' (bool), 'i' (signed), 'u' (unsigned), 'f' (float)
    or 'c' (complex: ``bits`` counts both parts, so complex64 is two float32)."""

    name: str
    kind: str
    bits: int

    __hash__ = Type._cached_hash

    def __str__(self) -> str:
        return self.name

    @property
    def dtype(self) -> np.dtype:
        import numpy as np

        if self.name == "bfloat16":  # NumPy has none: ml_dtypes' (cujit.types.bf16)
            from cujit.types.bf16 import numpy_dtype

            return numpy_dtype()
        return np.dtype(self.name if self.name != "bool" else np.bool_)

    @property
    def itemsize(self) -> int:
        return 1 if self.kind == "b" else self.bits // 8

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def part_type(self) -> Scalar:
        """The float type of a complex number's real and imaginary parts."""
        return float32 if self.bits == 64 else float64

    @property
    def underlying_float(self) -> Scalar:
        """numba's name for a complex type's ``part_type``."""
        if self.kind != "c":
            raise AttributeError(f"{self} is not complex: it has no underlying_float")
        return self.part_type

    @property
    def signed(self) -> bool:
        return self.kind in "ifc"

    def __getitem__(self, spec) -> "Array":
        return Array.from_slices(self, spec)

    def __call__(self, *args):
        """``float32(int32, int32)`` builds a signature; ``float32(1.5)`` casts on the host."""
        if args and all(isinstance(a, Type) for a in args) or not args:
            return Signature(self, tuple(args))
        (value,) = args
        return self.dtype.type(value)


@frozen(repr=False)
class NoneType(Type):
    """The type of ``None``; as a return type it is spelled ``void``.  The spellings
    are one type (numba's ``void`` is its ``none``): equal, hashed alike."""

    name: str = field(default="none", compare=False)

    def __str__(self) -> str:
        return self.name

    def __call__(self, *args: Type) -> "Signature":
        return Signature(self, tuple(args))


@frozen(repr=False)
class Array(Type):
    """An n-dimensional view: element type, rank and layout ('C', 'F' or 'A' for any strides)."""

    dtype: Scalar
    ndim: int
    layout: str = "A"

    __hash__ = Type._cached_hash

    def __str__(self) -> str:
        return f"array({self.dtype}, {self.ndim}d, {self.layout})"

    @property
    def name(self) -> str:
        """The type's name, as numba's types have one: ``array(float32, 1d, C)``."""
        return str(self)

    @staticmethod
    def from_slices(dtype: Scalar, spec) -> "Array":
        """numba's spelling: ``[:]`` any, ``[::1]`` C-contiguous, ``[::1, :]`` Fortran."""
        items = spec if isinstance(spec, tuple) else (spec,)
        if not items or not all(isinstance(s, slice) for s in items):
            raise TypeError(f"array types are written {dtype}[:], {dtype}[:, ::1] or similar")
        for s in items:
            if s.start is not None or s.stop is not None or s.step not in (None, 1):
                raise TypeError(f"bad array type slice {s!r}: use ':' or '::1'")
        ones = [s.step == 1 for s in items]
        layout = "A"
        if ones[-1] and not any(ones[:-1]):
            layout = "C"
        elif ones[0] and not any(ones[1:]) and len(items) > 1:
            layout = "F"
        elif any(ones):
            raise TypeError("'::1' may mark only the first or the last dimension")
        return Array(dtype, len(items), layout)

    def __call__(self, *args: Type) -> "Signature":
        return Signature(self, tuple(args))


@frozen(repr=False)
class Tuple(Type):
    """A fixed-size tuple of values, possibly of different types."""

    items: tuple[Type, ...]

    __hash__ = Type._cached_hash

    def __post_init__(self):
        if not isinstance(self.items, tuple):  # numba's Tuple([a, b]) takes any iterable
            object.__setattr__(self, "items", tuple(self.items))

    def __call__(self, *args: Type) -> "Signature":
        return Signature(self, tuple(args))

    # numba's tuple types are sequences of their item types.
    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:  # a type is never false, even the empty tuple's
        return True

    def __getitem__(self, k):
        return self.items[k]

    @property
    def count(self) -> int:
        return len(self.items)

    @property
    def dtype(self) -> Type:
        """The item type of a homogeneous tuple (numba's ``UniTuple.dtype``)."""
        if not self.items or any(t != self.items[0] for t in self.items):
            raise AttributeError(f"{self} is not a homogeneous tuple: it has no dtype")
        return self.items[0]

    def __str__(self) -> str:
        return "tuple(" + ", ".join(map(str, self.items)) + ")"


@frozen(repr=False)
class NamedTuple(Tuple):
    """A tuple made by a namedtuple class (``collections.namedtuple``, ``typing.NamedTuple``).

    It is a Tuple (same layout, same ops) that also names its class: two classes with
    the same fields are different types.  numba's ``types.NamedTuple(types, cls)``.
    """

    cls: type

    __hash__ = Type._cached_hash

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))
        if len(self.items) != len(self.fields):
            raise TypeError(
                f"{self.cls.__name__} has {len(self.fields)} fields, not {len(self.items)}"
            )

    @property
    def fields(self) -> tuple[str, ...]:
        return self.cls._fields

    def __str__(self) -> str:
        return (
            f"{self.cls.__name__}("
            + ", ".join(f"{f}: {t}" for f, t in zip(self.fields, self.items, strict=True))
            + ")"
        )


def NamedUniTuple(dtype: Type, count: int, cls: type) -> NamedTuple:
    """numba's ``types.NamedUniTuple(dtype, count, cls)``: ``count`` fields of one type."""
    return NamedTuple((dtype,) * count, cls)


def is_namedtuple_class(obj: object) -> bool:
    """A class made by ``collections.namedtuple`` or ``typing.NamedTuple``."""
    return (
        isinstance(obj, type)
        and issubclass(obj, tuple)
        and isinstance(getattr(obj, "_fields", None), tuple)
    )


def is_device_array_global(value: object) -> bool:
    """Whether a global or closure value is an array kernels take by reference: a device
    array (anything with a CUDA Array Interface: cujit's, CuPy's...) or a NumPy array
    subclass over memory kernels address (the CPU target's device arrays, mapped and
    managed arrays).  A plain NumPy array is frozen into the kernel instead."""
    np = loaded_module("numpy")
    if np is not None and isinstance(value, np.ndarray):
        return type(value) is not np.ndarray
    try:
        return getattr(value, "__cuda_array_interface__", None) is not None
    except Exception:  # noqa: BLE001 - a property that refuses (a CPU torch tensor)
        return False


@frozen(repr=False)
class RangeType(Type):
    """The value of ``range(...)`` over integers of type ``itype``."""

    itype: Scalar

    def __str__(self) -> str:
        return f"range({self.itype})"


@frozen(repr=False)
class RangeIter(Type):
    """The state of a ``for`` loop over a range: next value, stop, step."""

    itype: Scalar

    def __str__(self) -> str:
        return f"range_iter({self.itype})"


class PyObject(Type):
    """A Python object known at compile time (a module, a function, a dtype).

    Such values exist only during compilation: type inference folds attribute
    lookups and calls on them into constants and intrinsics.  Equality is by
    identity of the object.
    """

    __slots__ = ("value",)

    def __init__(self, value: object):
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PyObject) and other.value is self.value

    def __hash__(self) -> int:
        return hash(("PyObject", id(self.value)))

    def __str__(self) -> str:
        return f"pyobject({describe_object(self.value)})"


@frozen
class Signature:
    """A kernel or function signature: ``void(float32[:], int64)``."""

    return_type: Type
    args: tuple[Type, ...]

    def __str__(self) -> str:
        return f"{self.return_type}(" + ", ".join(map(str, self.args)) + ")"


def describe_object(value: object) -> str:
    """A short, deterministic name for a Python object (no addresses, no paths)."""
    import types as pytypes

    if isinstance(value, pytypes.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, Type):
        return f"type {value}"
    mod = getattr(value, "__module__", None)
    qual = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if qual is not None:
        return f"{mod}.{qual}" if mod else str(qual)
    return type(value).__name__


# -- instances ---------------------------------------------------------------

boolean = bool_ = b1 = Scalar("bool", "b", 8)
int8 = Scalar("int8", "i", 8)
int16 = Scalar("int16", "i", 16)
int32 = Scalar("int32", "i", 32)
int64 = Scalar("int64", "i", 64)
uint8 = Scalar("uint8", "u", 8)
uint16 = Scalar("uint16", "u", 16)
uint32 = Scalar("uint32", "u", 32)
uint64 = Scalar("uint64", "u", 64)
float16 = Scalar("float16", "f", 16)
# float32's upper half; its own module (types/bf16.py) says how cujit computes with it.
bfloat16 = Scalar("bfloat16", "f", 16)
float32 = Scalar("float32", "f", 32)
float64 = Scalar("float64", "f", 64)
complex64 = Scalar("complex64", "c", 64)
complex128 = Scalar("complex128", "c", 128)
none = NoneType()
void = NoneType("void")

intp = int64
uintp = uint64
i1, i2, i4, i8 = int8, int16, int32, int64
u1, u2, u4, u8 = uint8, uint16, uint32, uint64
f2, f4, f8 = float16, float32, float64
c8, c16 = complex64, complex128
byte = uint8
float_ = float32
double = float64

SCALARS: tuple[Scalar, ...] = (
    boolean,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float16,
    float32,
    float64,
    complex64,
    complex128,
)
# bfloat16 is no NumPy scalar (ml_dtypes' dtype): it is found by name, not in SCALARS.
SCALAR_BY_NAME: dict[str, Scalar] = {t.name: t for t in (*SCALARS, bfloat16)}

# numba's C and NumPy spellings of the scalars (``cuda.types.ulonglong``, ``intc``,
# ``np_float32``...): name -> cujit scalar name, as numba's cuda.types defines them.
_ALIASES = """
char=int8 uchar=uint8 short=int16 ushort=uint16 intc=int32 uintc=uint32 int_=int64
uint=uint64 long_=int64 ulong=uint64 longlong=int64 ulonglong=uint64 size_t=uint64
ssize_t=int64 bool=bool py_bool=bool py_int=int64 py_float=float64 py_complex=complex128
c_bool=bool c_int8=int8 c_int16=int16 c_int32=int32 c_int64=int64 c_intp=int64
c_uint8=uint8 c_uint16=uint16 c_uint32=uint32 c_uint64=uint64 c_uintp=uint64
c_float16=float16 c_float32=float32 c_float64=float64
np_bool_=bool np_char=int8 np_uchar=uint8 np_short=int16 np_ushort=uint16 np_intc=int32
np_uintc=uint32 np_int_=int64 np_uint=uint64 np_long=int64 np_ulong=uint64
np_longlong=int64 np_ulonglong=uint64 np_intp=int64 np_uintp=uint64 np_int8=int8
np_int16=int16 np_int32=int32 np_int64=int64 np_uint8=uint8 np_uint16=uint16
np_uint32=uint32 np_uint64=uint64 np_float16=float16 np_float32=float32 np_float64=float64
np_float_=float32 np_double=float64 np_complex64=complex64 np_complex128=complex128
"""
ALIASES: dict[str, Scalar] = {
    k: SCALAR_BY_NAME[v] for k, v in (item.split("=") for item in _ALIASES.split())
}
