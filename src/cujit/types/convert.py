"""From Python values, NumPy dtypes and signature strings to cujit types."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from cujit.types import core as _core
from cujit.types.core import (
    SCALAR_BY_NAME,
    Array,
    NamedTuple,
    NoneType,
    Scalar,
    Signature,
    Tuple,
    Type,
    boolean,
    complex128,
    float64,
    int64,
    is_namedtuple_class,
)

if TYPE_CHECKING:
    from cujit.types.records import CharSeq, Record

# The modules of the rarer kinds (records, strings, datetimes, enum members, extension
# types, numba's type objects) are imported where a value of that kind is met: a
# program that launches float arrays never loads them before its first compile.
_np = None  # numpy, imported on first use so that ``import cujit`` does not load it


def _numpy():
    global _np
    if _np is None:
        import numpy

        _np = numpy
    return _np


def from_dtype(dtype) -> Scalar | Record | CharSeq:
    """The scalar type of a NumPy dtype (or anything ``np.dtype`` accepts); a structured
    dtype's Record."""
    if isinstance(dtype, Scalar):
        return dtype
    if isinstance(dtype, Type):  # a Record or CharSeq is its own dtype
        from cujit.types.records import CharSeq, Record

        if isinstance(dtype, (Record, CharSeq)):
            return dtype
    dt = _numpy().dtype(dtype)
    if dt.names is not None:
        from cujit.types.records import from_structured

        return from_structured(dt, from_dtype)
    if dt.kind in "SU" and dt.itemsize and dt.byteorder != ">":
        from cujit.types.records import CharSeq

        return CharSeq(dt.kind, dt.itemsize // (4 if dt.kind == "U" else 1))
    if dt.kind in "Mm" and dt.byteorder != ">":
        from cujit.types.datetimes import datetime_type

        return datetime_type(dt.kind, _numpy().datetime_data(dt)[0].replace("generic", ""))
    name = "bool" if dt.kind == "b" else dt.name
    if dt.byteorder == ">" or name not in SCALAR_BY_NAME:
        raise TypeError(
            f"unsupported dtype {dt}: kernel arrays hold bool, int8-64, "
            f"uint8-64, float16-64 or complex64/128{_DTYPE_NOTES.get(dt.kind, '')}"
        )
    return SCALAR_BY_NAME[name]


# Why a dtype kind cannot reach a kernel, and what to pass instead.
_DTYPE_NOTES = {
    "O": ", not Python objects",
    "V": "; unstructured void dtypes have no fields to read",
}


def to_type(spec) -> Type:
    """A cujit type from a cujit type, one of numba's type objects, a NumPy type/dtype,
    or Python's int/float/bool.  An extension type with a struct model is its Record
    (``types.extension.storage``)."""
    if isinstance(spec, Type):
        from cujit.types.extension import storage

        return storage(spec)
    from cujit.types.foreign import from_numba_type, is_numba_type

    if is_numba_type(spec):  # numba.float32, numba.types.float32[:, ::1]...
        return from_numba_type(spec)
    if spec is bool:
        return boolean
    if spec is int:
        return int64
    if spec is float:
        return float64
    if spec is complex:
        return complex128
    return from_dtype(spec)


def _layout_of(strides, shape, itemsize: int) -> str:
    """'C' or 'F' when the strides are exactly contiguous, else 'A'."""
    c_ok = f_ok = True
    expect = itemsize
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        if n > 1 and s != expect:
            c_ok = False
        expect *= n
    expect = itemsize
    for n, s in zip(shape, strides, strict=True):
        if n > 1 and s != expect:
            f_ok = False
        expect *= n
    if c_ok:
        return "C"
    if f_ok:
        return "F"
    return "A"


def typeof(value) -> Type:  # noqa: C901 -- one branch per launch argument kind numba.cuda accepts
    """The cujit type of a kernel launch argument."""
    np = _numpy()
    if isinstance(value, (bool, np.bool_)):
        return boolean
    if isinstance(value, enum.Enum):  # IntEnum's members too: typed by their class
        from cujit.types.enums import member_type

        return member_type(value, typeof)
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    if isinstance(value, np.generic):
        return from_dtype(value.dtype)
    if isinstance(value, np.ndarray):
        return Array(
            from_dtype(value.dtype),
            value.ndim,
            _layout_of(value.strides, value.shape, value.itemsize),
        )
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        dt = np.dtype(cai["typestr"])
        own = getattr(value, "dtype", None)  # a structured dtype: its typestr is only |V<n>
        if dt.kind == "V" and isinstance(own, np.dtype) and own.itemsize == dt.itemsize:
            dt = own
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is None:
            return Array(from_dtype(dt), len(shape), "C")
        return Array(from_dtype(dt), len(shape), _layout_of(strides, shape, dt.itemsize))
    if isinstance(value, tuple):
        items = tuple(typeof(v) for v in value)
        cls = type(value)
        return NamedTuple(items, cls) if is_namedtuple_class(cls) else Tuple(items)
    if value is None:
        raise TypeError("cannot pass None to a kernel")
    from cujit.types.extension import typeof_value

    found = typeof_value(value)  # a library's class (cujit.extending.typeof_impl)
    if found is not None:
        return found
    if hasattr(value, "py_func"):  # a cujit kernel or device function
        raise TypeError(
            f"cannot pass {value!r} to a kernel: kernels and device functions are "
            "not values; call a device function by its global name inside the "
            "kernel instead"
        )
    raise TypeError(f"cannot pass a value of Python type {type(value).__name__} to a kernel")


_SIG_NAMES: dict[str, object] | None = None  # the names a signature may use, made on first use


def _sig_names() -> dict[str, object]:
    global _SIG_NAMES
    if _SIG_NAMES is None:
        from cujit.types.numba_names import CPointer

        names = {n: getattr(_core, n) for n in dir(_core)}
        names = {n: t for n, t in names.items() if isinstance(t, (Scalar, NoneType))}
        names["CPointer"] = CPointer  # "float32(CPointer(float32), int32)"
        _SIG_NAMES = names
    return _SIG_NAMES


def _eval_signature(text: str):
    """Evaluate signature text over its grammar only: type names, calls of types,
    ``[...]`` with ``:``/``::1`` slices, tuples.  Nothing else of Python is reachable
    (no attributes, no other names), so any text is safe to parse."""
    import ast
    import warnings

    with warnings.catch_warnings():  # odd text may draw SyntaxWarnings from the parser
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            at = max((exc.offset or 1) - 1, 0)
            near = text.strip()[at : at + 12] or "the end"
            raise _BadToken(f"syntax error at {near!r} (column {at + 1})") from None

    names = _sig_names()

    def ev(node):
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.Name):
            raise _name_error(node.id)
        if isinstance(node, ast.Call) and not node.keywords:
            return ev(node.func)(*map(ev, node.args))
        if isinstance(node, ast.Subscript):
            return ev(node.value)[ev(node.slice)]
        if isinstance(node, ast.Slice):
            return slice(
                *(None if n is None else ev(n) for n in (node.lower, node.upper, node.step))
            )
        if isinstance(node, ast.Tuple):
            return tuple(map(ev, node.elts))
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        raise _BadToken(f"unexpected {ast.unparse(node)!r}")

    return ev(tree.body)


def parse_signature(sig) -> Signature:  # noqa: C901 -- one branch per signature spelling numba accepts (object, tuple, string, return-less)
    """numba's signature syntax (``"void(float32[:], int64)"``), a Signature, or a tuple of
    args."""
    if isinstance(sig, Signature):
        return sig
    from cujit.types.foreign import from_numba_signature, is_numba_signature

    if is_numba_signature(sig):  # numba.void(numba.float32[:])
        try:
            return from_numba_signature(sig)
        except TypeError as exc:  # a numba type cujit has not (Optional...)
            raise _sig_error(f"cannot use {sig} as a signature: {exc}") from None
    if isinstance(sig, (tuple, list)):
        try:
            return Signature(_core.void, tuple(to_type(a) for a in sig))
        except TypeError as exc:
            raise _sig_error(f"cannot use {sig!r} as argument types: {exc}") from None
    if not isinstance(sig, str):
        raise _sig_error(
            f"a signature is a string like 'void(float32[:])', a Signature or "
            f"a tuple of types, not {type(sig).__name__} {sig!r}"
        )
    try:
        result = _eval_signature(sig)
    except _BadToken as exc:
        raise _sig_error(f"cannot parse signature {sig!r}: {exc.args[0]}", exc.hint) from None
    except Exception as exc:  # noqa: BLE001 - e.g. float32[:](...) with a wrong arity
        raise _sig_error(f"cannot parse signature {sig!r}: {exc}") from None
    if isinstance(result, Signature):
        return result
    if isinstance(result, Type):  # "(float32[:], int64)" style without return
        return Signature(_core.void, (result,))
    if isinstance(result, tuple) and all(isinstance(a, Type) for a in result):
        return Signature(_core.void, result)
    raise _sig_error(f"cannot parse signature {sig!r}: it is not a list of types")


class _BadToken(ValueError):
    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.hint = hint


def _sig_error(message: str, hint: str | None = None):
    from cujit.diagnostics import SignatureError, caller_loc

    return SignatureError(
        message, caller_loc(), hint or "a signature reads like 'void(float32[:], int64)'"
    )


def _name_error(name: str) -> _BadToken:
    import difflib

    close = difflib.get_close_matches(name, list(_sig_names()), n=1)
    hint = f"did you mean {close[0]!r}?" if close else None
    return _BadToken(f"{name!r} is not a type name", hint)
