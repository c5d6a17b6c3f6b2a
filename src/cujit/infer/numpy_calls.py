"""Typing rules for NumPy's scalar math (``np.sin(x)`` on a number).

They type as numba's ufunc loops do: ints compute in float64, float32 stays float32,
``np.floor`` returns a float (unlike ``math.floor``), ``np.minimum``/``np.maximum``
propagate NaN; complex arguments go to the ``cmath`` rules.  Each also takes arrays
with an ``out`` (``ufunc_calls``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import UnsupportedError
from cujit.infer import builtin_calls as bi
from cujit.infer.cmath_calls import cmath_test, cmath_unary
from cujit.infer.complex_calls import call_abs_complex, call_conjugate
from cujit.infer.context import Typer
from cujit.infer.numeric import unify
from cujit.ir import Intrinsic, Value

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


# np name -> the math intrinsic with the same meaning on one real argument.
NP_UNARY = {
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "exp": "exp",
    "log": "log",
    "log2": "log2",
    "log10": "log10",
    "sqrt": "sqrt",
    "floor": "floor",
    "ceil": "ceil",
    "fabs": "fabs",
    "expm1": "expm1",
    "log1p": "log1p",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
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
                raise UnsupportedError(
                    f"np.{np_name}() of a complex number is not supported in kernels", site.loc
                )
            return cmath_unary(fname)(t, site)
        x = t.as_float(x, site.loc, f"np.{np_name}()")  # a float result, even from floor
        return t.emit(
            Intrinsic(loc=site.loc, result=site.result(x.type), name=f"math.{fname}", args=(x,))
        )

    return rule


def np_binary(np_name: str):
    fname = NP_BINARY[np_name]

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 2)
        for v in site.args:
            if t.scalar(v, site.loc, f"np.{np_name}()").is_complex:
                raise UnsupportedError(
                    f"np.{np_name}() of complex numbers is not supported in kernels", site.loc
                )
        if fname == "pow":
            a, b = site.args
            if not (a.type.is_float or b.type.is_float):
                raise UnsupportedError(
                    "np.power() of two integers is not supported in kernels",
                    site.loc,
                    hint="use the ** operator",
                )
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
            raise UnsupportedError(
                f"np.{which}() of complex numbers is not supported in kernels", site.loc
            )
        a, b = t.cast(a, common, site.loc), t.cast(b, common, site.loc)
        name = f"np.{which}" if common.is_float else ("min" if which == "minimum" else "max")
        return t.emit(Intrinsic(loc=site.loc, result=site.result(common), name=name, args=(a, b)))

    return rule


def numpy_rules() -> dict:
    import numpy as np

    from cujit.infer.ufunc_calls import with_arrays

    # Each also takes arrays with an ``out`` (``ufunc_calls``): np.sin(x, out).
    unary = {n: np_unary(n) for n in NP_UNARY}
    unary.update(
        {
            "abs": np_abs,
            "absolute": np_abs,
            "isnan": cmath_test("isnan"),
            "isinf": cmath_test("isinf"),
            "isfinite": cmath_test("isfinite"),
            "conjugate": call_conjugate,
            "conj": call_conjugate,
        }
    )
    binary = {n: np_binary(n) for n in NP_BINARY}
    binary.update({"minimum": np_minmax("minimum"), "maximum": np_minmax("maximum")})
    rules: dict = {getattr(np, n): with_arrays(n, 1, r) for n, r in unary.items()}
    rules.update({getattr(np, n): with_arrays(n, 2, r) for n, r in binary.items()})
    return rules
