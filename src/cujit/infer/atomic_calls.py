"""Typing rules for ``cuda.atomic.*``: read-modify-write on one array element.

Each atomic takes an array, an index (as for ``ary[idx]``: an int for a 1-d
array, a tuple of ``ndim`` ints otherwise, negative indices counting from the
end) and operand values, which are converted to the element type, as numba's
signatures ``dtype(array, intp | tuple, dtype)`` do.  The result is the element's
value just before the operation (the "old" value).

    %7 = call %6(%1, %4, 1)           # cuda.atomic.max(hist, (i, j), 1)
  becomes
    %9: int32 = cast %8               # the constant 1 (int64) to the dtype
    %7: int32 = intrinsic atomic.max (%1, %5, %9)

Element types follow numba-cuda's ``cudadecl`` lists: every op takes int32,
uint32, int64 and uint64; ``add``/``sub``/``max``/``min``/``nanmax``/``nanmin``
also float32 and float64; ``inc``/``dec`` only the unsigned types; ``cas`` the
four integer types.  ``compare_and_swap(ary, old, val)`` is ``cas`` at index 0
of a 1-d array.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer.access import array_index
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, Value
from cujit.types import Array, Scalar, float32, float64, int32, int64, uint32, uint64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

INTEGER_TYPES = (int32, uint32, int64, uint64)
ALL_TYPES = INTEGER_TYPES + (float32, float64)
UNSIGNED_TYPES = (uint32, uint64)

# Python name under cuda.atomic -> (intrinsic name, element types numba allows).
ATOMIC_OPS: dict[str, tuple[str, tuple[Scalar, ...]]] = {
    "add": ("atomic.add", ALL_TYPES),
    "sub": ("atomic.sub", ALL_TYPES),
    "max": ("atomic.max", ALL_TYPES),
    "min": ("atomic.min", ALL_TYPES),
    "nanmax": ("atomic.nanmax", ALL_TYPES),
    "nanmin": ("atomic.nanmin", ALL_TYPES),
    "and_": ("atomic.and", INTEGER_TYPES),
    "or_": ("atomic.or", INTEGER_TYPES),
    "xor": ("atomic.xor", INTEGER_TYPES),
    "exch": ("atomic.exch", INTEGER_TYPES),
    "inc": ("atomic.inc", UNSIGNED_TYPES),
    "dec": ("atomic.dec", UNSIGNED_TYPES),
}

# Every intrinsic name this module emits (what each does to memory is its row in
# ``cujit.ir.intrinsics``).
ATOMIC_INTRINSICS = frozenset(name for name, _ in ATOMIC_OPS.values()) | {"atomic.cas"}


def _array(t: Typer, site: CallSite, fname: str, allowed: tuple[Scalar, ...]) -> Value:
    ary = site.arg(0, "ary")
    if not isinstance(ary.type, Array):
        t.check_defined(ary, site.loc)
        raise TypingError(f"cuda.atomic.{fname} needs an array, not {describe(ary.type)}", site.loc)
    if ary.type.dtype not in allowed:
        raise TypingError(
            f"cuda.atomic.{fname} does not support arrays of {ary.type.dtype} "
            "(supported: " + ", ".join(map(str, allowed)) + ")",
            site.loc,
        )
    t.check_writable(ary, site.loc, f"cuda.atomic.{fname} cannot update")
    return ary


def _operand(t: Typer, site: CallSite, v: Value, dtype: Scalar, fname: str, what: str) -> Value:
    t.scalar(v, site.loc, f"cuda.atomic.{fname}'s {what}")
    return t.cast(v, dtype, site.loc)  # as numba's signature: converted to the dtype


def atomic_rmw(fname: str):
    """``cuda.atomic.<fname>(ary, idx, val)`` -> ``atomic.<op>`` (ary, index, value)."""
    name, allowed = ATOMIC_OPS[fname]

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(3, 3, keywords=("ary", "idx", "val"))
        ary = _array(t, site, fname, allowed)
        dtype = ary.type.dtype
        index = array_index(t, ary.type, site.arg(1, "idx"), site.loc)
        value = _operand(t, site, site.arg(2, "val"), dtype, fname, "value")
        return t.emit(
            Intrinsic(loc=site.loc, result=site.result(dtype), name=name, args=(ary, index, value))
        )

    return rule


def call_cas(t: Typer, site: CallSite) -> Value:
    """``cuda.atomic.cas(ary, idx, old, val)`` -> ``atomic.cas`` (ary, index, old, val)."""
    site.expect(4, 4, keywords=("ary", "idx", "old", "val"))
    ary = _array(t, site, "cas", INTEGER_TYPES)
    dtype = ary.type.dtype
    index = array_index(t, ary.type, site.arg(1, "idx"), site.loc)
    old = _operand(t, site, site.arg(2, "old"), dtype, "cas", "expected value")
    val = _operand(t, site, site.arg(3, "val"), dtype, "cas", "value")
    return t.emit(
        Intrinsic(
            loc=site.loc, result=site.result(dtype), name="atomic.cas", args=(ary, index, old, val)
        )
    )


def call_compare_and_swap(t: Typer, site: CallSite) -> Value:
    """``cuda.atomic.compare_and_swap(ary, old, val)``: ``cas`` on ``ary[0]`` (1-d only,
    as numba)."""
    site.expect(3, 3, keywords=("ary", "old", "val"))
    ary = _array(t, site, "compare_and_swap", INTEGER_TYPES)
    if ary.type.ndim != 1:
        raise TypingError(
            "cuda.atomic.compare_and_swap needs a 1-d array (use "
            f"cuda.atomic.cas with an index for {ary.type.ndim} dimensions)",
            site.loc,
        )
    dtype = ary.type.dtype
    index = t.const(0, site.loc)
    old = _operand(t, site, site.arg(1, "old"), dtype, "compare_and_swap", "expected value")
    val = _operand(t, site, site.arg(2, "val"), dtype, "compare_and_swap", "value")
    return t.emit(
        Intrinsic(
            loc=site.loc, result=site.result(dtype), name="atomic.cas", args=(ary, index, old, val)
        )
    )


__all__ = [
    "ALL_TYPES",
    "ATOMIC_INTRINSICS",
    "ATOMIC_OPS",
    "INTEGER_TYPES",
    "UNSIGNED_TYPES",
    "atomic_rmw",
    "call_cas",
    "call_compare_and_swap",
]
