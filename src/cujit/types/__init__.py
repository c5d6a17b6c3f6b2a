"""cujit's type system: the types, typeof for launch arguments, signature parsing."""

from cujit.types.convert import from_dtype, parse_signature, to_type, typeof  # noqa: F401
from cujit.types.core import (  # noqa: F401
    ALIASES,
    SCALAR_BY_NAME,
    SCALARS,
    Array,
    NamedTuple,
    NamedUniTuple,
    NoneType,
    PyObject,
    RangeIter,
    RangeType,
    Scalar,
    Signature,
    Tuple,
    Type,
    b1,
    bfloat16,
    bool_,
    boolean,
    byte,
    c8,
    c16,
    complex64,
    complex128,
    describe_object,
    double,
    f2,
    f4,
    f8,
    float16,
    float32,
    float64,
    float_,
    i1,
    i2,
    i4,
    i8,
    int8,
    int16,
    int32,
    int64,
    intp,
    is_namedtuple_class,
    none,
    u1,
    u2,
    u4,
    u8,
    uint8,
    uint16,
    uint32,
    uint64,
    uintp,
    void,
)

# The rarer kinds load on first use (``cujit.types.Record``, ``from cujit.types import
# CPointer``): numba's names, the fp8 types and the record types.  ``from cujit import
# cuda`` then makes none of their classes; a compile imports them where it needs them.
_LAZY = {
    **dict.fromkeys("FP8 fp8_e4m3 fp8_e5m2 fp8_e8m0".split(), "cujit.types.fp8"),
    **dict.fromkeys(
        "Any Boolean Complex CPointer Float Function Integer IntegerLiteral Literal Module "
        "Number Omitted UniTuple complex_domain integer_domain number_domain real_domain "
        "signed_domain unsigned_domain".split(),
        "cujit.types.numba_names",
    ),
    **dict.fromkeys("CharSeq NestedArray Record field_alignment".split(), "cujit.types.records"),
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:  # a submodule not imported yet is found by the import system
        raise AttributeError(f"module 'cujit.types' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


globals().update(ALIASES)  # ulonglong, intc, np_float32... (numba's spellings)
