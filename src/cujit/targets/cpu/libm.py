"""The CPU target's math table: (math function, float type) -> host function.

Functions with an LLVM intrinsic that becomes one instruction on the host
(``sqrt``, ``floor``, ``ceil``, ``fabs``, ``copysign``) use it, so the optimiser
can fold and vectorise them; the rest call the C library (libm is loaded in every
CPython process, so the JIT resolves them there).  Single-precision variants use
C99's ``f``-suffixed functions.  ``fmod`` serves codegen's float ``//`` and ``%``.

``fmod`` is called under another name (``cujit_fmod``/``cujit_fmodf``, registered
with the JIT by ``register_symbols`` as the C library's functions): LLVM knows the
name ``fmod`` and rewrites ``fmod(x, y)`` into ``frem nnan x, y`` when it can prove x
is not infinite and y is not zero, forgetting that a NaN x still gives NaN.  Under
a branch on ``x != x`` (so x is known NaN, hence "not infinite") that made
``x %= 1.0`` return 0.0 instead of NaN.  LLVM cannot see through the other name.
"""

import ctypes
import ctypes.util
import functools

from cujit.targets import MathFn

_INTRINSIC = ("sqrt", "floor", "ceil", "fabs", "copysign")
_LIBM_1 = (
    "exp",
    "log",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "erf",
    "erfc",
    "expm1",
    "log1p",
    "asinh",
    "acosh",
    "atanh",
    "lgamma",
    "cbrt",
)
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
        table[("gamma", t)] = MathFn("tgamma" + _C_SUFFIX[t])  # math.gamma is C's tgamma
        table[("fmod", t)] = MathFn(_FMOD_ALIAS[t], 2)
    return table


_FMOD_ALIAS = {"float32": "cujit_fmodf", "float64": "cujit_fmod"}


@functools.cache
def register_symbols() -> None:
    """Make the ``fmod`` aliases resolve to the C library's ``fmodf``/``fmod``."""
    from llvmlite import binding as llvm

    libm = ctypes.CDLL(ctypes.util.find_library("m") or None)
    for t, alias in _FMOD_ALIAS.items():
        fn = getattr(libm, "fmod" + _C_SUFFIX[t])
        llvm.add_symbol(alias, ctypes.cast(fn, ctypes.c_void_p).value)
    _register_half_conversions(llvm)


# LLVM lowers a double <-> half conversion on x86 to these runtime calls (no instruction
# does it); MCJIT does not find them by itself, and an unresolved call crashes the
# process.  GCC 12's libgcc_s has them.
_HALF_HELPERS = ("__truncdfhf2", "__truncsfhf2", "__extendhfsf2", "__extendhfdf2")


def _register_half_conversions(llvm) -> None:
    name = ctypes.util.find_library("gcc_s")
    try:
        libgcc = ctypes.CDLL(name or "libgcc_s.so.1")
    except OSError:
        return
    for symbol in _HALF_HELPERS:
        fn = getattr(libgcc, symbol, None)
        if fn is not None:
            llvm.add_symbol(symbol, ctypes.cast(fn, ctypes.c_void_p).value)


LIBM: dict[tuple[str, str], MathFn] = _table()
