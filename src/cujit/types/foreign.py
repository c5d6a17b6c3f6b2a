"""numba's type objects and Signatures, converted to cujit's types by their shape.

``numba.float32``, ``numba.types.float32[:, ::1]``, ``numba.core.types.UniTuple(...)``,
numba-cuda's ``numba.cuda.types`` and the ``Signature`` objects of ``numba.core.typing``
are recognised by their class names and attributes, never by importing numba: cujit
accepts them wherever it takes a type, with or without numba installed.
"""

from __future__ import annotations

from cujit.types.core import (
    SCALAR_BY_NAME,
    Array,
    NamedTuple,
    NoneType,
    Signature,
    Tuple,
    Type,
    none,
)
from cujit.types.records import NestedArray, Record


def _is_numba_class(cls: type, name: str) -> bool:
    return any(c.__name__ == name and c.__module__.startswith("numba") for c in cls.__mro__)


def is_numba_type(obj: object) -> bool:
    """Whether ``obj`` is one of numba's type objects (numba's or numba-cuda's)."""
    return _is_numba_class(type(obj), "Type")


def is_numba_signature(obj: object) -> bool:
    """Whether ``obj`` is a ``numba.core.typing.Signature`` (or numba-cuda's)."""
    return (
        _is_numba_class(type(obj), "Signature")
        and hasattr(obj, "args")
        and hasattr(obj, "return_type")
    )


def _scalar(obj) -> Type:
    name = getattr(obj, "name", None)
    if name in SCALAR_BY_NAME:
        return SCALAR_BY_NAME[name]
    raise TypeError(f"numba type {obj} has no cujit equivalent")


def _array(obj) -> Type:
    return Array(from_numba_type(obj.dtype), int(obj.ndim), str(obj.layout))


def _unituple(obj) -> Type:
    return Tuple((from_numba_type(obj.dtype),) * int(obj.count))


def _tuple(obj) -> Type:
    return Tuple(tuple(from_numba_type(t) for t in obj.types))


def _named(obj) -> Type:
    return NamedTuple(tuple(from_numba_type(t) for t in obj.types), obj.instance_class)


def _none(obj) -> Type:
    return none


# numba's class name -> its conversion.  Classes are looked up along the MRO, so
# numba's subclasses (IntegerLiteral's base Integer, NamedUniTuple's NamedTuple...)
# convert as their bases do.
def _record(obj) -> Type:
    fields = tuple(
        (str(name), from_numba_type(f.type), int(f.offset)) for name, f in obj.fields.items()
    )
    return Record(fields, int(obj.size), bool(obj.aligned))


def _nested_array(obj) -> Type:
    return NestedArray(from_numba_type(obj.dtype), tuple(int(n) for n in obj.shape))


def _datetime(obj) -> Type:
    from cujit.types.datetimes import datetime_type

    return datetime_type("M", str(obj.unit))


def _pointer(obj) -> Type:
    from cujit.types.numba_names import CPointer

    return CPointer(from_numba_type(obj.dtype), getattr(obj, "addrspace", None))


def _enum_member(obj) -> Type:
    from cujit.types.enums import EnumMember

    return EnumMember(obj.instance_class, from_numba_type(obj.dtype))


def _timedelta(obj) -> Type:
    from cujit.types.datetimes import datetime_type

    return datetime_type("m", str(obj.unit))


_CONVERSIONS = {
    "Integer": _scalar,
    "Float": _scalar,
    "Complex": _scalar,
    "Boolean": _scalar,
    "Array": _array,
    "UniTuple": _unituple,
    "Tuple": _tuple,
    "NamedUniTuple": _named,
    "NamedTuple": _named,
    "NoneType": _none,
    "Record": _record,
    "NestedArray": _nested_array,
    "Bfloat16": lambda obj: SCALAR_BY_NAME["bfloat16"],  # numba-cuda's, named __nv_bfloat16
    "NPDatetime": _datetime,
    "NPTimedelta": _timedelta,
    "CPointer": _pointer,
    "EnumMember": _enum_member,  # IntEnumMember's base too
}


def from_numba_type(obj) -> Type:
    """The cujit type of one of numba's type objects (cujit's own pass through)."""
    if isinstance(obj, Type):
        return obj
    for cls in type(obj).__mro__:
        convert = _CONVERSIONS.get(cls.__name__)
        if convert is not None and cls.__module__.startswith("numba"):
            return convert(obj)
    if type(obj).__name__ == "Optional" and hasattr(obj, "type"):
        raise TypeError(
            f"numba type {obj} (Optional: a value of type {obj.type} or None) has no cujit "
            f"equivalent: a kernel argument is a value; declare it {obj.type}"
        )
    raise TypeError(f"numba type {obj} ({type(obj).__name__}) has no cujit equivalent")


def from_numba_signature(sig) -> Signature:
    """A cujit Signature from numba's: ``numba.void(numba.float32[:])``."""
    ret = from_numba_type(sig.return_type) if sig.return_type is not None else none
    if isinstance(ret, NoneType):
        ret = NoneType("void")
    return Signature(ret, tuple(from_numba_type(a) for a in sig.args))
