"""numba's conversions between NumPy dtypes and types, for cujit's types.

``from_dtype(dtype)`` is the cujit type of a NumPy dtype (a scalar, a datetime, a
record, a fixed-size string); ``as_dtype(type)`` goes back, for cujit's types and for
numba's type objects alike.  ``carray`` / ``farray`` view host memory behind a ctypes
pointer (or an address) as a NumPy array, in C or Fortran order, as numba's do on the
host.
"""

from __future__ import annotations

import ctypes

import numpy as np

from cujit.types import convert
from cujit.types.core import Scalar, Type
from cujit.types.foreign import from_numba_type, is_numba_type
from cujit.types.records import CharSeq, NestedArray, Record

numpy_version = tuple(int(p) for p in np.__version__.split(".")[:2])


def from_dtype(dtype) -> Type:
    """The cujit type of a NumPy dtype (or of what ``np.dtype`` accepts)."""
    return convert.from_dtype(dtype)


def as_dtype(ty) -> np.dtype:
    """The NumPy dtype of a cujit type (or of one of numba's type objects); a
    NotImplementedError where the type has none (tuples, arrays, functions)."""
    if is_numba_type(ty):
        ty = from_numba_type(ty)
    literal = getattr(ty, "literal_type", None)
    if literal is not None:  # IntegerLiteral: its value's type
        ty = literal
    if isinstance(ty, (Scalar, Record, CharSeq)):
        return ty.dtype
    if isinstance(ty, NestedArray):
        return np.dtype((as_dtype(ty.dtype), ty.shape))
    raise NotImplementedError(f"{ty} cannot be represented as a NumPy dtype")


def _address(ptr) -> tuple[int, np.dtype | None]:
    """The address behind ``ptr`` and the dtype its ctypes pointer type names."""
    ptr = getattr(ptr, "_as_parameter_", ptr)
    if isinstance(ptr, int):
        return ptr, None
    if isinstance(ptr, ctypes.c_void_p):
        return ptr.value or 0, None
    if isinstance(ptr, ctypes._Pointer):
        address = ctypes.cast(ptr, ctypes.c_void_p).value or 0
        return address, np.dtype(ptr._type_)
    raise TypeError(f"expected a ctypes pointer or an address, not {type(ptr).__name__}")


def carray(ptr, shape, dtype=None) -> np.ndarray:
    """A C-ordered NumPy view of ``shape`` over the memory ``ptr`` points to."""
    address, ptr_dtype = _address(ptr)
    if dtype is None:
        if ptr_dtype is None:
            raise TypeError("explicit dtype required for a void* or an integer address")
        dtype = ptr_dtype
    dtype = np.dtype(dtype)
    if ptr_dtype is not None and ptr_dtype != dtype:
        raise TypeError(f"mismatching dtype {dtype} for pointer to {ptr_dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    count = int(np.prod(shape, dtype=np.int64))
    buffer = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    return np.frombuffer(buffer, dtype, count).reshape(shape)


def farray(ptr, shape, dtype=None) -> np.ndarray:
    """A Fortran-ordered NumPy view of ``shape`` over the memory ``ptr`` points to."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return carray(ptr, shape[::-1], dtype).T


__all__ = ["as_dtype", "carray", "farray", "from_dtype", "numpy_version"]
