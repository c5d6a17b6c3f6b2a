"""Typing of pointers (``types.CPointer(dtype)``): a kernel's pointer argument, a
foreign function's, and ``ffi.from_buffer(array)`` of cffi.

    p[i]        intrinsic pointer.load (p, i)           : dtype
    p[i] = v    intrinsic pointer.store (p, i, v)       (v converted to dtype)
    ffi.from_buffer(a)   intrinsic array.address (a)   : CPointer(a.dtype)

A pointer is held as its address (``abi``); the element ``i`` places on is
``address + i * itemsize`` (numba's pointer arithmetic, no bounds known).
"""

from __future__ import annotations

from cujit.diagnostics import Loc, TypingError
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, Value
from cujit.types import Array, CPointer, Scalar, int64, none


def is_pointer(v: Value) -> bool:
    return isinstance(v.type, CPointer)


def _index(t, idx: Value, loc: Loc) -> Value:
    if not (isinstance(idx.type, Scalar) and idx.type.kind in "iu"):
        raise TypingError(f"a pointer's index must be an integer, not {describe(idx.type)}", loc)
    return t.cast(idx, int64, loc)


def _element(p: Value, loc: Loc) -> Scalar:
    dtype = p.type.dtype
    if not isinstance(dtype, Scalar) or dtype.kind in "cMm":
        raise TypingError(f"cannot read or write the elements of {p.type} in kernels", loc)
    return dtype


def pointer_getitem(t, op, p: Value, idx: Value) -> None:
    """``p[i]``: the element's value."""
    dtype = _element(p, op.loc)
    index = _index(t, idx, op.loc)
    t.emit(
        Intrinsic(
            loc=op.loc, result=Value(op.result.id, dtype), name="pointer.load", args=(p, index)
        )
    )


def pointer_setitem(t, op, p: Value, idx: Value, val: Value) -> None:
    """``p[i] = v``."""
    dtype = _element(p, op.loc)
    index = _index(t, idx, op.loc)
    value = t.cast(val, dtype, op.loc)
    t.emit(
        Intrinsic(loc=op.loc, result=t.fresh(none), name="pointer.store", args=(p, index, value))
    )


def is_from_buffer(fn: object) -> bool:
    """Whether ``fn`` is a cffi ``FFI`` object's ``from_buffer`` method."""
    owner = getattr(fn, "__self__", None)
    return getattr(fn, "__name__", None) == "from_buffer" and type(owner).__module__.split(".")[
        0
    ] in ("cffi", "_cffi_backend")


def call_from_buffer(t, site) -> Value:
    """``ffi.from_buffer(a)``: a pointer to ``a``'s first element."""
    if len(site.args) != 1 or site.kwargs or not isinstance(site.args[0].type, Array):
        raise TypingError("ffi.from_buffer() takes one array in kernels", site.loc)
    (a,) = site.args
    result = site.result(CPointer(a.type.dtype))
    return t.emit(Intrinsic(loc=site.loc, result=result, name="array.address", args=(a,)))


def pointer_rules(fn: object):
    """The call rule of a pointer-making callable (cffi's ``from_buffer``), or None."""
    return call_from_buffer if is_from_buffer(fn) else None
