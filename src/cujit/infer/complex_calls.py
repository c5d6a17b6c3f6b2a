"""Typing rules for complex numbers, ``cmath``, NumPy's scalar math and ``cuda.fp16``.

Complex values (``complex64``/``complex128``, numba's types) get the attributes
``.real``/``.imag`` and the method ``.conjugate()``; ``complex(re, im)`` builds one
(complex128, as numba).  The ``cmath`` functions numba's CUDA target types (its
``cmathdecl``) that are simple on the parts are intrinsics (``cmath.sqrt`` ...);
``phase``, ``polar``, ``rect`` and the ``isnan`` family are written here with the
real math intrinsics.  A real argument becomes complex first (float32 -> complex64,
other reals -> complex128).

NumPy's ufuncs on scalars (``np.sin(x)``) type as numba's ufunc loops do: ints
compute in float64, float32 stays float32, ``np.floor`` returns a float (unlike
``math.floor``), ``np.minimum``/``np.maximum`` propagate NaN.

``cuda.fp16.h*`` take float16 (other numbers are cast to it) and lower to the
ordinary float16 ops: half arithmetic, comparisons, and math through float32.
"""

from __future__ import annotations

import cmath
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cujit import device_api as cuda
from cujit.diagnostics import TypingError, UnsupportedError
from cujit.infer import builtin_calls as bi
from cujit.infer.context import Typer
from cujit.infer.numeric import unify
from cujit.ir import BinOp, BuildTuple, Compare, Const, GetAttr, Intrinsic, UnaryOp, Value
from cujit.types import (
    PyObject,
    Scalar,
    Tuple,
    boolean,
    complex64,
    complex128,
    float16,
    float32,
    float64,
)

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


# -- attributes and methods of numbers ---------------------------------------------------


@dataclass(frozen=True, eq=False)
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
            t.emit(Intrinsic(loc=op.loc, result=Value(op.result.id, ty.part_type),
                             name=f"complex.{name}", args=(obj,)))
        elif name == "real":
            t.alias(op.result, obj)
        else:
            t.alias(op.result, t.cast(t.const(0, op.loc), ty, op.loc))
        return
    if name in ("conjugate", "conj"):
        method = BoundMethod(complex.conjugate, obj)
        t.emit(Const(loc=op.loc, result=Value(op.result.id, PyObject(method)), value=method))
        return
    raise TypingError(f"'{ty}' has no attribute '{name}' in kernels (numbers have "
                      "real, imag and conjugate())", op.loc)


def conjugate(t: Typer, z: Value, site: CallSite) -> Value:
    ty = t.scalar(z, site.loc, "conjugate()")
    if not ty.is_complex:
        return z
    return t.emit(Intrinsic(loc=site.loc, result=site.result(ty), name="complex.conj",
                            args=(z,)))


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
    return t.emit(Intrinsic(loc=site.loc, result=site.result(complex128), name="complex.build",
                            args=(re, im)))


def call_abs_complex(t: Typer, site: CallSite, z: Value) -> Value:
    return t.emit(Intrinsic(loc=site.loc, result=site.result(z.type.part_type),
                            name="complex.abs", args=(z,)))


# -- cmath -------------------------------------------------------------------------------

CMATH_INTRINSICS = ("sqrt", "exp", "log", "log10", "sin", "cos")
# numba's CUDA cmath functions that cujit does not have (yet): a clear error.
CMATH_MISSING = ("acos", "asin", "asinh", "atan", "atanh", "tan", "acosh", "cosh", "sinh",
                 "tanh")


def as_complex(t: Typer, v: Value, loc, what: str) -> Value:
    ty = t.scalar(v, loc, what)
    if ty.is_complex:
        return v
    return t.cast(v, complex64 if ty in (float32, float16) else complex128, loc)


def cmath_unary(fname: str):
    def rule(t: Typer, site: CallSite) -> Value:
        if fname == "log" and len(site.args) == 2:
            raise UnsupportedError("cmath.log(z, base) is not supported in kernels", site.loc,
                                   hint="divide cmath.log(z) by math.log(base)")
        site.expect(1, 1)
        z = as_complex(t, site.args[0], site.loc, f"cmath.{fname}()")
        return t.emit(Intrinsic(loc=site.loc, result=site.result(z.type),
                                name=f"cmath.{fname}", args=(z,)))
    return rule


def call_phase(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    z = as_complex(t, site.args[0], site.loc, "cmath.phase()")
    return t.emit(Intrinsic(loc=site.loc, result=site.result(z.type.part_type),
                            name="cmath.phase", args=(z,)))


def call_polar(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    z = as_complex(t, site.args[0], site.loc, "cmath.polar()")
    pt = z.type.part_type
    r = t.emit(Intrinsic(loc=site.loc, result=t.fresh(pt), name="complex.abs", args=(z,)))
    phi = t.emit(Intrinsic(loc=site.loc, result=t.fresh(pt), name="cmath.phase", args=(z,)))
    return t.emit(BuildTuple(loc=site.loc, result=site.result(Tuple((pt, pt))),
                             items=(r, phi)))


def call_rect(t: Typer, site: CallSite) -> Value:
    """``cmath.rect(r, phi)``: r * cos(phi) + 1j * r * sin(phi), complex128 (numba)."""
    site.expect(2, 2)
    for v in site.args:
        if t.scalar(v, site.loc, "cmath.rect()").is_complex:
            raise TypingError("cmath.rect() takes real numbers", site.loc)
    r, phi = (t.cast(v, float64, site.loc) for v in site.args)
    loc = site.loc
    cos = t.emit(Intrinsic(loc=loc, result=t.fresh(float64), name="math.cos", args=(phi,)))
    sin = t.emit(Intrinsic(loc=loc, result=t.fresh(float64), name="math.sin", args=(phi,)))
    re = t.emit(BinOp(loc=loc, result=t.fresh(float64), op="*", lhs=r, rhs=cos))
    im = t.emit(BinOp(loc=loc, result=t.fresh(float64), op="*", lhs=r, rhs=sin))
    return t.emit(Intrinsic(loc=loc, result=site.result(complex128), name="complex.build",
                            args=(re, im)))


def cmath_test(fname: str):
    """``cmath.isnan``/``isinf``: either part; ``isfinite``: both parts."""
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1)
        z = site.args[0]
        if not t.scalar(z, site.loc, f"cmath.{fname}()").is_complex:
            return bi.float_test(fname, fname == "isfinite")(t, site)
        loc, pt = site.loc, z.type.part_type
        tests = []
        for part in ("real", "imag"):
            x = t.emit(Intrinsic(loc=loc, result=t.fresh(pt), name=f"complex.{part}",
                                 args=(z,)))
            tests.append(t.emit(Intrinsic(loc=loc, result=t.fresh(boolean),
                                          name=f"math.{fname}", args=(x,))))
        join = "&" if fname == "isfinite" else "|"
        return t.emit(BinOp(loc=loc, result=site.result(boolean), op=join, lhs=tests[0],
                            rhs=tests[1]))
    return rule


def unsupported(what: str):
    def rule(t: Typer, site: CallSite) -> Value:
        raise UnsupportedError(f"{what} is not supported in kernels by cujit", site.loc)
    return rule


def cmath_rules() -> dict:
    rules: dict = {getattr(cmath, f): cmath_unary(f) for f in CMATH_INTRINSICS}
    rules.update({
        cmath.phase: call_phase, cmath.polar: call_polar, cmath.rect: call_rect,
        cmath.isnan: cmath_test("isnan"), cmath.isinf: cmath_test("isinf"),
        cmath.isfinite: cmath_test("isfinite"),
        complex: call_complex, complex.conjugate: call_conjugate,
    })
    rules.update({getattr(cmath, f): unsupported(f"cmath.{f}") for f in CMATH_MISSING})
    return rules


# -- NumPy's scalar math ------------------------------------------------------------------

# np name -> the math intrinsic with the same meaning on one real argument.
NP_UNARY = {
    "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
    "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp",
    "log": "log", "log2": "log2", "log10": "log10", "sqrt": "sqrt", "floor": "floor",
    "ceil": "ceil", "fabs": "fabs", "expm1": "expm1", "log1p": "log1p", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh",
}
NP_BINARY = {"arctan2": "atan2", "hypot": "hypot", "copysign": "copysign", "power": "pow"}
# Complex arguments go to the cmath intrinsic of the same name.
_NP_COMPLEX = {"sin", "cos", "exp", "log", "log10", "sqrt"}


def np_unary(np_name: str):
    fname = NP_UNARY[np_name]

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1)
        x = site.args[0]
        ty = t.scalar(x, site.loc, f"np.{np_name}()")
        if ty.is_complex:
            if np_name not in _NP_COMPLEX:
                raise UnsupportedError(f"np.{np_name}() of a complex number is not supported "
                                       "in kernels", site.loc)
            return cmath_unary(fname)(t, site)
        x = t.as_float(x, site.loc, f"np.{np_name}()")  # a float result, even from floor
        return t.emit(Intrinsic(loc=site.loc, result=site.result(x.type), name=f"math.{fname}",
                                args=(x,)))
    return rule


def np_binary(np_name: str):
    fname = NP_BINARY[np_name]

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 2)
        for v in site.args:
            if t.scalar(v, site.loc, f"np.{np_name}()").is_complex:
                raise UnsupportedError(f"np.{np_name}() of complex numbers is not supported "
                                       "in kernels", site.loc)
        if fname == "pow":
            a, b = site.args
            if not (a.type.is_float or b.type.is_float):
                raise UnsupportedError("np.power() of two integers is not supported in "
                                       "kernels", site.loc, hint="use the ** operator")
        return bi.math_binary(fname)(t, site)
    return rule


def np_abs(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1)
    x = site.args[0]
    if t.scalar(x, site.loc, "np.abs()").is_complex:
        return call_abs_complex(t, site, x)
    return bi.call_abs(t, site)


def np_minmax(which: str):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 2)
        a, b = site.args
        ta, tb = t.scalar(a, site.loc, f"np.{which}()"), t.scalar(b, site.loc, f"np.{which}()")
        common = unify(ta, tb)
        if common.is_complex:
            raise UnsupportedError(f"np.{which}() of complex numbers is not supported in "
                                   "kernels", site.loc)
        a, b = t.cast(a, common, site.loc), t.cast(b, common, site.loc)
        name = f"np.{which}" if common.is_float else ("min" if which == "minimum" else "max")
        return t.emit(Intrinsic(loc=site.loc, result=site.result(common), name=name,
                                args=(a, b)))
    return rule


def numpy_rules() -> dict:
    import numpy as np

    from cujit.infer.ufunc_calls import with_arrays

    # Each also takes arrays with an ``out`` (``ufunc_calls``): np.sin(x, out).
    unary = {n: np_unary(n) for n in NP_UNARY}
    unary.update({"abs": np_abs, "absolute": np_abs, "isnan": cmath_test("isnan"),
                  "isinf": cmath_test("isinf"), "isfinite": cmath_test("isfinite"),
                  "conjugate": call_conjugate, "conj": call_conjugate})
    binary = {n: np_binary(n) for n in NP_BINARY}
    binary.update({"minimum": np_minmax("minimum"), "maximum": np_minmax("maximum")})
    rules: dict = {getattr(np, n): with_arrays(n, 1, r) for n, r in unary.items()}
    rules.update({getattr(np, n): with_arrays(n, 2, r) for n, r in binary.items()})
    return rules


# -- cuda.fp16 ----------------------------------------------------------------------------

_FP16_BINARY = {"hadd": "+", "hsub": "-", "hmul": "*", "hdiv": "/"}
_FP16_COMPARE = {"heq": "==", "hne": "!=", "hlt": "<", "hle": "<=", "hgt": ">", "hge": ">="}
_FP16_MATH = {"hsqrt": "sqrt", "hexp": "exp", "hlog": "log", "hlog2": "log2",
              "hlog10": "log10", "hsin": "sin", "hcos": "cos", "htanh": "tanh",
              "hfloor": "floor", "hceil": "ceil"}
FP16_SUPPORTED = (*_FP16_BINARY, *_FP16_COMPARE, *_FP16_MATH, "hneg", "habs", "hfma", "hmax",
                  "hmin", "hrcp", "hrsqrt")


def _halves(t: Typer, site: CallSite, n: int) -> list[Value]:
    site.expect(n, n)
    out = []
    for v in site.args:
        ty = t.scalar(v, site.loc, f"cuda.fp16.{site.name}()")
        if ty.is_complex:
            raise TypingError(f"cuda.fp16.{site.name}() takes float16, not {ty}", site.loc)
        out.append(t.cast(v, float16, site.loc))
    return out


def fp16_rule(name: str):
    def rule(t: Typer, site: CallSite) -> Value:
        loc = site.loc
        if name in _FP16_BINARY:
            a, b = _halves(t, site, 2)
            return t.emit(BinOp(loc=loc, result=site.result(float16), op=_FP16_BINARY[name],
                                lhs=a, rhs=b))
        if name in _FP16_COMPARE:
            a, b = _halves(t, site, 2)
            return t.emit(Compare(loc=loc, result=site.result(boolean),
                                  op=_FP16_COMPARE[name], lhs=a, rhs=b))
        if name in _FP16_MATH:
            (x,) = _halves(t, site, 1)
            return t.emit(Intrinsic(loc=loc, result=site.result(float16),
                                    name=f"math.{_FP16_MATH[name]}", args=(x,)))
        if name == "hneg":
            (x,) = _halves(t, site, 1)
            return t.emit(UnaryOp(loc=loc, result=site.result(float16), op="-", operand=x))
        if name == "habs":
            (x,) = _halves(t, site, 1)
            return t.emit(Intrinsic(loc=loc, result=site.result(float16), name="abs",
                                    args=(x,)))
        if name in ("hmax", "hmin"):
            a, b = _halves(t, site, 2)
            return t.emit(Intrinsic(loc=loc, result=site.result(float16), name=name[1:],
                                    args=(a, b)))
        if name == "hfma":  # in float32: a * b is exact there, one rounding to half
            a, b, c = (t.cast(v, float32, loc) for v in _halves(t, site, 3))
            ab = t.emit(BinOp(loc=loc, result=t.fresh(float32), op="*", lhs=a, rhs=b))
            s = t.emit(BinOp(loc=loc, result=t.fresh(float32), op="+", lhs=ab, rhs=c))
            return t.cast(s, float16, loc)
        if name in ("hrcp", "hrsqrt"):
            (x,) = _halves(t, site, 1)
            if name == "hrsqrt":
                x = t.emit(Intrinsic(loc=loc, result=t.fresh(float16), name="math.sqrt",
                                     args=(x,)))
            one = t.cast(t.const(1.0, loc), float16, loc)
            return t.emit(BinOp(loc=loc, result=site.result(float16), op="/", lhs=one, rhs=x))
        raise AssertionError(name)
    return rule


def fp16_rules() -> dict:
    rules: dict = {}
    for name in cuda.FP16_FUNCTIONS:
        fn = getattr(cuda.fp16, name)
        rules[fn] = fp16_rule(name) if name in FP16_SUPPORTED else unsupported(
            f"cuda.fp16.{name}")
    return rules


__all__ = ["BoundMethod", "cmath_rules", "fp16_rules", "numpy_rules", "scalar_attr"]
