"""Typing rules for the warp-level functions and the bit/float intrinsics of ``cuda``.

Warp functions take a lane mask first (any integer; its low 32 bits are used,
so ``0xffffffff`` works though the constant is an int64) and return what numba
types them as:

| function | value / predicate | result |
|---|---|---|
| ``shfl_sync``, ``shfl_{up,down,xor}_sync`` | (u)int32/64, f32/64 | the same |
| ``all_sync``, ``any_sync``, ``eq_sync`` | an integer or bool | bool |
| ``ballot_sync`` | an integer or bool | int32 |
| ``match_any_sync`` | value -> int32/int64/float32/float64 | int32 |
| ``match_all_sync`` | as match_any_sync | Tuple(int32, bool) |
| ``activemask``, ``lanemask_lt`` | - | uint32 |

Bit intrinsics: ``popc`` and ``clz`` keep the integer type, ``ffs`` gives uint32,
``brev`` works on uint32/uint64 (narrower or signed ints are converted to the
unsigned type of their width class); ``fma`` and ``cbrt`` work on float32 or
float64 (integers are converted to float64).

    %6 = call %5(4294967295, %3, 16)      # cuda.shfl_xor_sync(0xffffffff, x, 16)
  becomes
    %6: float32 = intrinsic cuda.shfl_xor_sync (%8, %3, %9)   # %8, %9: uint32 casts
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer.context import Typer
from cujit.infer.cuda_calls import mask32, predicate
from cujit.infer.numeric import unify
from cujit.ir import Intrinsic, Value
from cujit.types import Tuple, boolean, float32, float64, int32, int64, uint32, uint64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

# What the hardware moves per lane: 32 bits (PTX ISA, "shfl.sync"); 64-bit values
# are moved as two halves by the target.
SHUFFLE_TYPES = (int32, int64, uint32, uint64, float32, float64)

SHUFFLES = ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync")
# The lane argument's name in numba's signatures, per shuffle.
_LANE_ARG = {
    "shfl_sync": "src_lane",
    "shfl_up_sync": "delta",
    "shfl_down_sync": "delta",
    "shfl_xor_sync": "lane_mask",
}
VOTES = {"all_sync": boolean, "any_sync": boolean, "eq_sync": boolean, "ballot_sync": int32}


def _emit(t: Typer, site: CallSite, name: str, rt, args: tuple) -> Value:
    return t.emit(Intrinsic(loc=site.loc, result=site.result(rt), name=f"cuda.{name}", args=args))


def shuffle(name: str):
    """``cuda.shfl_*_sync(mask, value, lane)``: the value from another lane."""
    lane_arg = _LANE_ARG[name]

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(3, 3, keywords=("mask", "value", lane_arg))
        mask = mask32(t, site, site.arg(0, "mask"), f"cuda.{name}'s mask")
        value = site.arg(1, "value")
        vt = t.scalar(value, site.loc, f"cuda.{name}'s value")
        if vt not in SHUFFLE_TYPES:
            raise TypingError(
                f"cuda.{name} only supports 32- and 64-bit ints and floats, not {vt}", site.loc
            )
        lane = mask32(t, site, site.arg(2, lane_arg), f"cuda.{name}'s {lane_arg}")
        return _emit(t, site, name, vt, (mask, value, lane))

    return rule


def vote(name: str):
    """``cuda.all_sync/any_sync/eq_sync/ballot_sync(mask, predicate)``."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 2, keywords=("mask", "predicate"))
        mask = mask32(t, site, site.arg(0, "mask"), f"cuda.{name}'s mask")
        pred = predicate(t, site, site.arg(1, "predicate"), f"cuda.{name}'s predicate")
        return _emit(t, site, name, VOTES[name], (mask, pred))

    return rule


def _match_value(t: Typer, site: CallSite, v: Value, name: str) -> Value:
    """numba's match signatures take int32, int64, float32 or float64 values."""
    vt = t.scalar(v, site.loc, f"cuda.{name}'s value")
    if vt.is_float:
        return v
    return t.cast(v, int32 if vt.bits < 32 or vt == int32 else int64, site.loc)


def match(name: str):
    """``cuda.match_any_sync(mask, value)`` -> int32; ``match_all_sync`` ->
    Tuple(int32, bool)."""
    rt = int32 if name == "match_any_sync" else Tuple((int32, boolean))

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 2, keywords=("mask", "value"))
        mask = mask32(t, site, site.arg(0, "mask"), f"cuda.{name}'s mask")
        value = _match_value(t, site, site.arg(1, "value"), name)
        return _emit(t, site, name, rt, (mask, value))

    return rule


def lane_mask(name: str):
    """``cuda.activemask()`` and ``cuda.lanemask_lt()``: uint32."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(0, 0)
        return _emit(t, site, name, uint32, ())

    return rule


def _integer(t: Typer, site: CallSite, name: str) -> Value:
    site.expect(1, 1, keywords=("x",))
    x = site.arg(0, "x")
    xt = t.scalar(x, site.loc, f"cuda.{name}'s argument")
    if xt.is_float or xt == boolean:
        raise TypingError(f"cuda.{name} needs an integer, not {xt}", site.loc)
    return x


def bit_count(name: str):
    """``cuda.popc(x)``/``cuda.clz(x)``: the same integer type as ``x``."""

    def rule(t: Typer, site: CallSite) -> Value:
        x = _integer(t, site, name)
        return _emit(t, site, name, x.type, (x,))

    return rule


def call_ffs(t: Typer, site: CallSite) -> Value:
    """``cuda.ffs(x)``: uint32 for every integer type, as numba."""
    x = _integer(t, site, "ffs")
    return _emit(t, site, "ffs", uint32, (x,))


def call_brev(t: Typer, site: CallSite) -> Value:
    """``cuda.brev(x)``: numba has uint32 and uint64 signatures only."""
    x = _integer(t, site, "brev")
    ut = uint64 if x.type.bits == 64 else uint32
    x = t.cast(x, ut, site.loc)
    return _emit(t, site, "brev", ut, (x,))


def _float_args(t: Typer, site: CallSite, args: list[Value], name: str) -> list[Value]:
    types_ = [t.scalar(a, site.loc, f"cuda.{name}'s argument") for a in args]
    ft = float32 if all(a == float32 for a in types_) else float64
    return [t.cast(a, ft, site.loc) for a in args]


def call_fma(t: Typer, site: CallSite) -> Value:
    """``cuda.fma(a, b, c)``: ``a * b + c`` with one rounding; float32 if all three are."""
    site.expect(3, 3, keywords=("a", "b", "c"))
    args = _float_args(t, site, [site.arg(0, "a"), site.arg(1, "b"), site.arg(2, "c")], "fma")
    return _emit(t, site, "fma", args[0].type, tuple(args))


def call_selp(t: Typer, site: CallSite) -> Value:
    """``cuda.selp(test, a, b)``: ``a`` if ``test`` else ``b``, both evaluated (numba's:
    the two values have one numeric type; here they meet in their common type)."""
    site.expect(3, 3)
    test, a, b = site.args
    test = t.cast(test, boolean, site.loc)
    common = unify(t.scalar(a, site.loc, "cuda.selp()"), t.scalar(b, site.loc, "cuda.selp()"))
    args = (test, t.cast(a, common, site.loc), t.cast(b, common, site.loc))
    return _emit(t, site, "selp", common, args)


def call_cbrt(t: Typer, site: CallSite) -> Value:
    """``cuda.cbrt(x)``: float32 or float64."""
    site.expect(1, 1, keywords=("a",))
    (x,) = _float_args(t, site, [site.arg(0, "a")], "cbrt")
    return _emit(t, site, "cbrt", x.type, (x,))


__all__ = [
    "SHUFFLES",
    "SHUFFLE_TYPES",
    "VOTES",
    "bit_count",
    "call_brev",
    "call_cbrt",
    "call_ffs",
    "call_fma",
    "call_selp",
    "lane_mask",
    "match",
    "shuffle",
    "vote",
]
