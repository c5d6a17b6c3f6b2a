"""cujit's type system: the types, typeof for launch arguments, signature parsing."""

from cujit.types.core import (  # noqa: F401
    SCALAR_BY_NAME, SCALARS, Array, NamedTuple, NamedUniTuple, NoneType, PyObject, RangeIter,
    RangeType, Scalar, Signature, Tuple, Type, b1, bool_, boolean, byte, c8, c16, complex64,
    complex128, describe_object, double, f2, f4, f8, float16, float32, float64, float_, i1,
    i2, i4, i8, is_namedtuple_class, int8, int16, int32, int64, intp, none, u1, u2, u4, u8, uint8, uint16, uint32, uint64,
    uintp, void,
)
from cujit.types.records import CharSeq, NestedArray, Record, field_alignment  # noqa: F401
from cujit.types.convert import from_dtype, parse_signature, to_type, typeof  # noqa: F401
from cujit.types.numba_names import (  # noqa: F401
    ALIASES, Boolean, CPointer, Complex, Float, Integer, IntegerLiteral, Number, Omitted, UniTuple,
    complex_domain, integer_domain, number_domain, real_domain, signed_domain, unsigned_domain,
)

globals().update(ALIASES)  # ulonglong, intc, np_float32... (numba's spellings)
