"""Typing rules for complex numbers: their attributes and methods, ``complex()``.

Complex values (``complex64``/``complex128``, numba's types) get the attributes
``.real``/``.imag`` and the method ``.conjugate()`` (numba gives them to reals too);
``complex(re, im)`` builds one (complex128, as numba).  ``cmath`` is typed in
``cmath_calls``, NumPy's scalar math in ``numpy_calls``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.frozen import frozen
from cujit.infer.context import Typer
from cujit.ir import Const, GetAttr, Intrinsic, Value
from cujit.types import PyObject, Scalar, complex128, float64, int64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


# -- attributes and methods of numbers ---------------------------------------------------


@frozen(eq=False)
class BoundMethod:
    """``z.conjugate`` before its call: ``func`` keys the CALLS table, ``obj`` is ``z``
    (``calls.type_call`` passes it as the first argument)."""

    func: object
    obj: Value

    def __post_init__(self):
        # Named like the method in messages (``calls.callee_name``): "conjugate".
        object.__setattr__(self, "__qualname__", self.func.__name__)
        object.__setattr__(self, "__module__", None)


def scalar_attr(t: Typer, op: GetAttr, obj: Value) -> None:
    """``z.real``, ``z.imag``, ``z.conjugate`` on a number (numba: on reals too)."""
    ty: Scalar = obj.type
    name = op.name
    if name in ("real", "imag"):
        if ty.is_complex:
            t.emit(
                Intrinsic(
                    loc=op.loc,
                    result=Value(op.result.id, ty.part_type),
                    name=f"complex.{name}",
                    args=(obj,),
                )
            )
        elif name == "real":
            t.alias(op.result, obj)
        else:
            t.alias(op.result, t.cast(t.const(0, op.loc), ty, op.loc))
        return
    if name in ("conjugate", "conj") or (name == "bit_count" and not ty.is_float):
        method = BoundMethod(int.bit_count if name == "bit_count" else complex.conjugate, obj)
        t.emit(Const(loc=op.loc, result=Value(op.result.id, PyObject(method)), value=method))
        return
    raise TypingError(
        f"'{ty}' has no attribute '{name}' in kernels (numbers have "
        "real, imag and conjugate(); integers also bit_count())",
        op.loc,
    )


def conjugate(t: Typer, z: Value, site: CallSite) -> Value:
    ty = t.scalar(z, site.loc, "conjugate()")
    if not ty.is_complex:
        return z
    return t.emit(Intrinsic(loc=site.loc, result=site.result(ty), name="complex.conj", args=(z,)))


def call_conjugate(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    return conjugate(t, site.args[0], site)


def call_complex(t: Typer, site: CallSite) -> Value:
    """``complex(re[, im])``: complex128, as numba."""
    site.expect(0, 2, keywords=("real", "imag"))
    re = site.arg(0, "real", None)
    im = site.arg(1, "imag", None)
    if re is None:
        re = t.const(0.0, site.loc)
    tre = t.scalar(re, site.loc, "complex()")
    if im is None:
        return t.cast(re, complex128, site.loc)
    tim = t.scalar(im, site.loc, "complex()")
    if tre.is_complex or tim.is_complex:
        raise TypingError("complex(re, im) takes real parts", site.loc)
    re, im = t.cast(re, float64, site.loc), t.cast(im, float64, site.loc)
    return t.emit(
        Intrinsic(loc=site.loc, result=site.result(complex128), name="complex.build", args=(re, im))
    )


def call_abs_complex(t: Typer, site: CallSite, z: Value) -> Value:
    return t.emit(
        Intrinsic(loc=site.loc, result=site.result(z.type.part_type), name="complex.abs", args=(z,))
    )


def call_bit_count(t: Typer, site: CallSite) -> Value:
    """``n.bit_count()``: the ones in ``abs(n)``, as Python's, of n's type (``cuda.popc``)."""
    site.expect(1, 1)
    (x,) = site.args
    ty = t.scalar(x, site.loc, "bit_count()")
    if ty.kind == "i":
        x = t.emit(Intrinsic(loc=site.loc, result=t.fresh(ty), name="abs", args=(x,)))
    elif ty.kind == "b":
        x = t.cast(x, int64, site.loc)
    return t.emit(Intrinsic(loc=site.loc, result=site.result(x.type), name="cuda.popc", args=(x,)))


def complex_rules() -> dict:
    return {complex: call_complex, complex.conjugate: call_conjugate, int.bit_count: call_bit_count}


__all__ = ["BoundMethod", "call_abs_complex", "call_conjugate", "complex_rules", "scalar_attr"]
