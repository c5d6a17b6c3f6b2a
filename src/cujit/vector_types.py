"""CUDA's vector types as numba.cuda names them: ``cuda.float4``, ``cuda.int32x2``...

Each is a namedtuple class with the fields ``x``, ``y``, ``z``, ``w`` (as many as it
has elements), so kernels read ``v.x`` and pass vectors to and from device functions
as cujit passes namedtuples.  In a kernel the constructor takes scalars and smaller
vectors of the same family whose elements add up (``float4(float2(a, b), c, d)``)
and converts each element to the base type (``infer/vector_calls.py``).
"""

from __future__ import annotations

import collections

from cujit.types.core import SCALAR_BY_NAME, NamedTuple

# base type -> its C names' stem (numba's aliases: int64 is both long and longlong)
_FAMILIES = {
    "int8": ("char",),
    "int16": ("short",),
    "int32": ("int",),
    "int64": ("long", "longlong"),
    "uint8": ("uchar",),
    "uint16": ("ushort",),
    "uint32": ("uint",),
    "uint64": ("ulong", "ulonglong"),
    "float32": ("float",),
    "float64": ("double",),
}
_FIELDS = ("x", "y", "z", "w")


def _make(base: str, n: int) -> type:
    cls = collections.namedtuple(f"{base}x{n}", _FIELDS[:n])
    cls.__module__ = "cujit.cuda"
    cls.base_type = SCALAR_BY_NAME[base]
    cls.num_elements = n
    cls.aliases = tuple(f"{stem}{n}" for stem in _FAMILIES[base])
    cls.name = cls.__name__  # numba's VectorType fields, for code that inspects them
    cls.user_facing_object = cls
    return cls


VECTOR_TYPES: dict[str, type] = {
    f"{base}x{n}": _make(base, n) for base in _FAMILIES for n in range(1, 5)
}
"""``float32x4`` -> its class; ``NAMES`` adds the C aliases (``float4``)."""

NAMES: dict[str, type] = {
    **VECTOR_TYPES,
    **{alias: cls for cls in VECTOR_TYPES.values() for alias in cls.aliases},
}


def is_vector_type(obj: object) -> bool:
    return isinstance(obj, type) and VECTOR_TYPES.get(obj.__name__) is obj


def vector_type(cls: type) -> NamedTuple:
    """The cujit type of a value of vector class ``cls``."""
    return NamedTuple((cls.base_type,) * cls.num_elements, cls)


__all__ = ["NAMES", "VECTOR_TYPES", "is_vector_type", "vector_type"]
