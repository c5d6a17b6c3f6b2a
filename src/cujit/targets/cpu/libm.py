"""The CPU target's math table: (math function, float type) -> host function.

Functions with an LLVM intrinsic that becomes one instruction on the host
(``sqrt``, ``floor``, ``ceil``, ``fabs``, ``copysign``) use it, so the optimiser
can fold and vectorise them; the rest call the C library (libm is loaded in every
CPython process, so the JIT resolves them there).  Single-precision variants use
C99's ``f``-suffixed functions.  ``fmod`` serves codegen's float ``//`` and ``%``.
"""

from cujit.targets import MathFn

_INTRINSIC = ("sqrt", "floor", "ceil", "fabs", "copysign")
_LIBM_1 = ("exp", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
           "sinh", "cosh", "tanh", "erf", "erfc")
_LIBM_2 = ("pow", "atan2", "hypot", "fmod")
_LLVM_SUFFIX = {"float32": "f32", "float64": "f64"}
_C_SUFFIX = {"float32": "f", "float64": ""}


def _table() -> dict[tuple[str, str], MathFn]:
    table = {}
    for t in ("float32", "float64"):
        for name in _INTRINSIC:
            nargs = 2 if name == "copysign" else 1
            table[(name, t)] = MathFn(f"llvm.{name}.{_LLVM_SUFFIX[t]}", nargs)
        for name in _LIBM_1:
            table[(name, t)] = MathFn(name + _C_SUFFIX[t])
        for name in _LIBM_2:
            table[(name, t)] = MathFn(name + _C_SUFFIX[t], 2)
    return table


LIBM: dict[tuple[str, str], MathFn] = _table()
