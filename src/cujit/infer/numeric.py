"""Numeric typing rules: which type an operator computes in, and how types unify.

The rules follow numba's, so kernels ported from numba compute in the same
types (facts taken from numba's ``core/typing/builtins.py`` and its typeconv
unification; no code copied):

- Arithmetic on integers computes in at least 64 bits: signed if either side is
  signed (bool counts as signed), so ``int32 + int32 -> int64``,
  ``uint32 + uint32 -> uint64``, ``uint64 + int64 -> int64``.
- A float meets an int by unification: ``float32`` absorbs bool and ints of up
  to 16 bits, anything wider gives ``float64``.
- ``/`` on two integers gives float64; shifts keep the left side's signedness
  in 64 bits; comparisons (and block parameters) use plain unification, where
  ``int32 < int32`` stays int32 and ``uint64`` meeting a signed int gives float64.
- float16 meets float16 in float16 (numba computes in half precision); meeting an
  int it widens as NumPy does (int8 stays float16, int16 float32, wider float64).
  bfloat16 does the same; float16 meeting bfloat16 gives float32, and bfloat16's
  operators other than ``+ - * /`` compute in float32 (numba-cuda defines only those).
- A complex meets a real by unifying its part type with the real: complex64 with
  float32 or an int of up to 16 bits stays complex64, with float64 or a wider int it
  becomes complex128.  Complex numbers take ``+ - * /`` (``**``, ``//``, ``%``, shifts
  and bitwise operators raise) and compare only with ``==`` and ``!=``.
"""

from __future__ import annotations

import dataclasses

from cujit.types import (
    SCALAR_BY_NAME,
    NoneType,
    PyObject,
    Scalar,
    Tuple,
    Type,
    bfloat16,
    boolean,
    complex64,
    complex128,
    float32,
    float64,
    int64,
    uint64,
)


def _int(bits: int, signed: bool) -> Scalar:
    return SCALAR_BY_NAME[f"{'' if signed else 'u'}int{bits}"]


def is_number(t: Type | None) -> bool:
    """A Scalar (bool counts: it converts to every number)."""
    return isinstance(t, Scalar)


def complex_of(part: Scalar) -> Scalar:
    """The complex type whose parts hold ``part`` (a float16/32 part is complex64)."""
    return complex64 if part.bits <= 32 else complex128


def _unify_scalars(a: Scalar, b: Scalar) -> Scalar:  # noqa: C901 -- NumPy's promotion rules for scalar kinds, case by case as NumPy states them
    if a == b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.is_complex or b.is_complex:
        pa = a.part_type if a.is_complex else a
        pb = b.part_type if b.is_complex else b
        return complex_of(_unify_scalars(pa, pb))
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            if a.bits == b.bits:  # float16 meets bfloat16: neither holds the other
                return float32
            return a if a.bits >= b.bits else b
        f, i = (a, b) if a.is_float else (b, a)
        if f.bits == 16:  # NumPy's float16 rules (bfloat16's too): int8 fits, int16 needs float32
            return f if i.bits <= 8 else float32 if i.bits <= 16 else float64
        # float32 represents every int of up to 16 bits exactly; wider ints need float64.
        return float32 if f.bits == 32 and i.bits <= 16 else float64
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if a.kind == "i" else (b, a)
    if s.bits > u.bits:
        return s
    if u.bits < 64:
        return _int(2 * u.bits, True)
    return float64  # no integer type holds both uint64 and a signed int


def unify(a: Type, b: Type) -> Type | None:
    """The type both ``a`` and ``b`` convert to (numba's unification), or None."""
    if a == b:
        return a
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        return _unify_scalars(a, b)
    from cujit.infer.optional import unify_optional

    merged = unify_optional(a, b, unify)
    if merged is not None:  # a number or None with an optional number: an optional
        return merged
    if (
        isinstance(a, Tuple)
        and isinstance(b, Tuple)
        and len(a.items) == len(b.items)
        and getattr(a, "cls", None) is getattr(b, "cls", None)
    ):  # one namedtuple class
        items = [unify(x, y) for x, y in zip(a.items, b.items, strict=True)]
        if any(t is None for t in items):
            return None
        return dataclasses.replace(a, items=tuple(items))
    from cujit.infer.extension_casts import unify_library

    merged = unify_library(a, b)  # a library's type: its unify, conversions and casts
    if merged is not None:
        return merged
    from cujit.infer.enums import unify_members

    return unify_members(a, b)  # members of one enum class: a run-time member


def int_result(*types: Scalar) -> Scalar:
    """numba's ``choose_result_int``: 64 bits, signed when any input is (bool is)."""
    return int64 if any(t.kind in "ib" for t in types) else uint64


def arith_type(op: str, a: Scalar, b: Scalar) -> tuple[Scalar, Scalar, Scalar] | str:  # noqa: C901 -- numba's operator typing, one rule per operator class (complex, shift, bitwise, /, **)
    """(lhs type, rhs type, result type) the operands are cast to for ``a op b``,
    or an error message when the operator does not apply to these types."""
    if a.is_complex or b.is_complex:
        if op not in ("+", "-", "*", "/"):
            return "complex numbers take + - * / only"
        t = _unify_scalars(a, b)
        return t, t, t
    both_int = not a.is_float and not b.is_float
    if op in ("<<", ">>"):
        if not both_int:
            return "shifts need integer operands"
        t = int64 if a.kind in "ib" else uint64  # only the left side's signedness counts
        return t, t, t
    if op in ("&", "|", "^"):
        if not both_int:
            return "bitwise operators need integer or bool operands"
        if a.kind == "b" and b.kind == "b":
            return boolean, boolean, boolean
        t = int_result(a, b)
        return t, t, t
    if a.bits == 8 and a.is_float or b.bits == 8 and b.is_float:  # fp8: storage only
        t = _unify_scalars(_unify_scalars(a, b), float32)
        return t, t, t
    if op == "/":
        t = float64 if both_int else _unify_scalars(a, b)
        return t, t, t
    if op not in ("+", "-", "*") and bfloat16 in (a, b):
        # numba-cuda's bfloat16 takes + - * / only; the others compute in float32
        t = _unify_scalars(_unify_scalars(a, b), float32)
        return t, t, t
    if op == "**" and a.is_float and not b.is_float:
        # numba types float ** int in the float's type (float32 stays float32).
        return a, a, a
    if both_int:
        t = int_result(a, b)
        return t, t, t
    t = _unify_scalars(a, b)
    return t, t, t


def unary_type(op: str, a: Scalar) -> Scalar | str:
    """The type ``op a`` computes in (the operand is cast to it), or an error message."""
    if op == "~":
        if a.is_float or a.is_complex:
            return "bitwise inversion needs an integer or bool operand"
        return boolean if a.kind == "b" else int_result(a)
    if a.is_float or a.is_complex:
        return a
    return int_result(a)  # -b, +b on bool and small ints widen as in numba


def describe(t: Type | None) -> str:
    """How a type is named in messages."""
    if isinstance(t, PyObject):
        return repr(t.value) if isinstance(t.value, str) else str(t)
    if isinstance(t, NoneType):
        return "None"
    return str(t)
