"""Typing rules for Python builtins, casts and the ``math`` module.

Result types follow numba's (``mathdecl.py``, ``builtins.py``): ``math.sqrt``
of an int computes in float64, of a float32 in float32; ``math.floor`` returns
int64; ``min``/``max`` unify their arguments (``min(float32, int32)`` is
float64); ``abs`` keeps its argument's type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError, UnsupportedError
from cujit.infer.context import Typer
from cujit.infer.cuda_calls import is_frozen_array
from cujit.infer.numeric import describe, unify
from cujit.ir import BinOp, Intrinsic, TupleGet, Value
from cujit.types import (
    Array,
    PyObject,
    RangeType,
    Scalar,
    Tuple,
    boolean,
    float16,
    float32,
    float64,
    int8,
    int64,
)

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def call_range(t: Typer, site: CallSite) -> Value:
    site.expect(1, 3)
    bounds = [t.integer(v, site.loc, "a range() argument") for v in site.args]
    if len(bounds) == 1:
        bounds.insert(0, t.const(0, site.loc))
    if len(bounds) == 2:
        bounds.append(t.const(1, site.loc))
    if t.const_value(bounds[2]) == 0:
        raise TypingError("range() step must not be zero", site.loc)
    rng = t.emit(
        Intrinsic(
            loc=site.loc, result=site.result(RangeType(int64)), name="range", args=tuple(bounds)
        )
    )
    t.range_bounds[rng.id] = tuple(bounds)  # for enumerate() and zip() of it
    return rng


def call_literal_unroll(t: Typer, site: CallSite) -> Value:
    """``literal_unroll(tup)`` outside the ``for`` loops it unrolls: the tuple itself."""
    site.expect(1, 1)
    return site.args[0]


def call_tuple(t: Typer, site: CallSite) -> Value:
    """``tuple(t)`` of a tuple: ``t`` itself (tuples are values)."""
    site.expect(1, 1)
    (obj,) = site.args
    if not isinstance(obj.type, Tuple):
        raise TypingError(
            f"tuple() of {describe(obj.type)} is not supported: only of a tuple", site.loc
        )
    return obj


def call_len(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    (obj,) = site.args
    if isinstance(obj.type, Tuple):
        return t.const(len(obj.type.items), site.loc, result=site.result(int64))
    if (
        isinstance(obj.type, PyObject) and is_frozen_array(obj.type.value) and obj.type.value.ndim
    ):  # a global array: its length is a constant
        return t.const(len(obj.type.value), site.loc, result=site.result(int64))
    if isinstance(obj.type, Array):
        # len(x) is the first extent, as numba's len of an array.
        shape = t.emit(
            Intrinsic(
                loc=site.loc,
                result=t.fresh(Tuple((int64,) * obj.type.ndim)),
                name="array.shape",
                args=(obj,),
            )
        )
        return t.emit(TupleGet(loc=site.loc, result=site.result(int64), tuple=shape, index=0))
    raise TypingError(f"len() of a value of type {describe(obj.type)} is not supported", site.loc)


def min_max(name: str):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 99)
        args = list(site.args)
        if len(args) == 1:  # min(x.shape): over a tuple's items
            tup = args[0]
            if not isinstance(tup.type, Tuple) or not tup.type.items:
                raise TypingError(
                    f"{name}() needs two or more numbers, or a tuple of them", site.loc
                )
            args = [
                t.emit(TupleGet(loc=site.loc, result=t.fresh(it), tuple=tup, index=i))
                for i, it in enumerate(tup.type.items)
            ]
        common = t.scalar(args[0], site.loc, f"{name}()")
        for v in args[1:]:
            common = unify(common, t.scalar(v, site.loc, f"{name}()"))
        if common.is_complex:
            raise TypingError(f"{name}() of complex numbers: they are not ordered", site.loc)
        args = [t.cast(v, common, site.loc) for v in args]
        acc = args[0]
        for i, v in enumerate(args[1:]):
            # The last link of the chain gets the call's own result id.
            res = site.result(common) if i == len(args) - 2 else t.fresh(common)
            acc = t.emit(Intrinsic(loc=site.loc, result=res, name=name, args=(acc, v)))
        return acc

    return rule


def call_abs(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    (x,) = site.args
    ty = t.scalar(x, site.loc, "abs()")
    if ty.is_complex:  # the modulus, in the part type (hypot)
        return t.emit(
            Intrinsic(loc=site.loc, result=site.result(ty.part_type), name="complex.abs", args=(x,))
        )
    if ty == boolean:  # numba types abs(bool) as int8
        x, ty = t.cast(x, int8, site.loc), int8
    if ty.kind == "u":
        return x  # abs of an unsigned number is itself
    return t.emit(Intrinsic(loc=site.loc, result=site.result(ty), name="abs", args=(x,)))


def cast_to(target: Scalar):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1)
        (x,) = site.args
        t.scalar(x, site.loc, f"{target}()")
        return t.cast(x, target, site.loc)

    return rule


def call_float(t: Typer, site: CallSite) -> Value:
    """``float(x)``: as numba, a float keeps its type (float32 stays float32); ints and
    bools become float64; complex numbers are refused; ``float("nan")``, ``float("inf")``
    and other constant strings fold."""
    site.expect(1, 1)
    (x,) = site.args
    if isinstance(x.type, PyObject) and isinstance(x.type.value, str):
        try:
            return t.const(float(x.type.value), site.loc)
        except ValueError:
            raise TypingError(f"float() cannot convert {x.type.value!r}", site.loc) from None
    ty = t.scalar(x, site.loc, "float()")
    if ty.is_complex:
        raise TypingError(
            f"float() does not support complex numbers: cannot convert {ty} to float64", site.loc
        )
    return x if ty.is_float else t.cast(x, float64, site.loc)


def call_bool(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    return t.to_bool(site.args[0], site.loc)


def math_unary(fname: str):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1)
        (x,) = site.args
        if fname in ("floor", "ceil") and not t.scalar(x, site.loc, f"math.{fname}()").is_float:
            return t.cast(x, int64, site.loc)  # already integral: exact, no float detour
        x = t.as_float(x, site.loc, f"math.{fname}()")
        if fname in ("floor", "ceil"):  # numba returns int64 from math.floor/ceil
            y = t.emit(
                Intrinsic(loc=site.loc, result=t.fresh(x.type), name=f"math.{fname}", args=(x,))
            )
            return t.cast(y, int64, site.loc)
        return t.emit(
            Intrinsic(loc=site.loc, result=site.result(x.type), name=f"math.{fname}", args=(x,))
        )

    return rule


def math_trunc(t: Typer, site: CallSite) -> Value:
    """``math.trunc(x)``: toward zero, an int64 as numba returns (a float-to-int cast
    truncates)."""
    site.expect(1, 1)
    (x,) = site.args
    ty = t.scalar(x, site.loc, "math.trunc()")
    if ty.is_complex:
        raise TypingError("math.trunc() of a complex number is not supported", site.loc)
    if ty == float16:  # a float16 (as numba-cuda's htrunc): float16 -> int casts round
        x32 = t.cast(x, float32, site.loc)
        y = t.emit(
            Intrinsic(loc=site.loc, result=t.fresh(float32), name="libdevice.truncf", args=(x32,))
        )
        return t.cast(y, float16, site.loc)
    return t.cast(x, int64, site.loc)


def math_scale(fname: str, factor: float):
    """``math.degrees``/``math.radians``: one multiplication by the factor CPython's
    uses (180/pi or pi/180), in the argument's float type."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1)
        x = t.as_float(site.args[0], site.loc, f"math.{fname}()")
        k = t.const(factor, site.loc)
        k = t.cast(k, x.type, site.loc)
        return t.emit(BinOp(loc=site.loc, result=site.result(x.type), op="*", lhs=x, rhs=k))

    return rule


def math_binary(fname: str):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 2)
        a, b = site.args
        ta = t.scalar(a, site.loc, f"math.{fname}()")
        tb = t.scalar(b, site.loc, f"math.{fname}()")
        if fname == "pow":  # numba: float32 only when both are float32
            common = float32 if ta == tb == float32 else float64
        else:
            common = unify(ta, tb)
            common = common if common.is_float else float64
        a, b = t.cast(a, common, site.loc), t.cast(b, common, site.loc)
        return t.emit(
            Intrinsic(loc=site.loc, result=site.result(common), name=f"math.{fname}", args=(a, b))
        )

    return rule


def float_test(fname: str, int_answer: bool):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1)
        (x,) = site.args
        if not t.scalar(x, site.loc, f"math.{fname}()").is_float:
            return t.const(int_answer, site.loc, result=site.result(boolean))
        return t.emit(
            Intrinsic(loc=site.loc, result=site.result(boolean), name=f"math.{fname}", args=(x,))
        )

    return rule


def unsupported(what: str):
    def rule(t: Typer, site: CallSite) -> Value:
        raise UnsupportedError(f"{what} is not supported in kernels by cujit", site.loc)

    return rule
