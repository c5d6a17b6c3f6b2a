"""``math`` functions served by libdevice's functions: ``exp2``, ``frexp``, ``ldexp``,
``modf``, ``nextafter``, ``remainder``.

Each call becomes the ``libdevice.<name>`` intrinsic of its float type (``name`` for
float64, ``namef`` for float32; integers compute in float64, float16 in float32 and
back, as numba does).  ``frexp`` and ``modf`` return tuples, as Python's do:

    %3 = call <math.frexp>(%1)        # %1: float32
  becomes
    %3: tuple(float32, int32) = intrinsic libdevice.frexpf (%1)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer.context import Typer
from cujit.ir import Intrinsic, Value
from cujit.types import Tuple, float16, float32, float64, int32

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

# math name -> (libdevice name for float64, number of float arguments, an int argument)
_TABLE = {
    "exp2": ("exp2", 1, False),
    "frexp": ("frexp", 1, False),
    "ldexp": ("ldexp", 1, True),
    "modf": ("modf", 1, False),
    "nextafter": ("nextafter", 2, False),
    "remainder": ("remainder", 2, False),
}


def _float_type(t: Typer, site: CallSite, values: list[Value], what: str):
    ft = float32
    for v in values:
        st = t.scalar(v, site.loc, what)
        if st.is_complex:
            raise TypingError(f"{what} of a complex number is not supported", site.loc)
        if not (st.is_float and st in (float32, float16)):
            ft = float64
    return ft


def _rule(name: str):
    base, nfloat, takes_int = _TABLE[name]

    def rule(t: Typer, site: CallSite) -> Value:
        n = nfloat + (1 if takes_int else 0)
        site.expect(n, n)
        floats = site.args[:nfloat]
        ft = _float_type(t, site, floats, f"math.{name}()")
        from cujit.libdevice import FUNCTIONS  # its table loads with the first such call

        fn = FUNCTIONS[base if ft == float64 else base + "f"]
        args = [t.cast(v, ft, site.loc) for v in floats]
        if takes_int:
            args.append(
                t.cast(
                    t.integer(site.args[nfloat], site.loc, f"math.{name}()'s exponent"),
                    int32,
                    site.loc,
                )
            )
        res = fn.returns
        half = all(v.type == float16 for v in floats) and not isinstance(res, Tuple)
        out = t.emit(
            Intrinsic(
                loc=site.loc,
                result=t.fresh(res) if half else site.result(res),
                name=f"libdevice.{fn.name}",
                args=tuple(args),
            )
        )
        return t.cast(out, float16, site.loc) if half else out

    return rule


def math_extra_rules() -> dict:
    return {getattr(math, name): _rule(name) for name in _TABLE if hasattr(math, name)}
