"""Which of a kernel's declared signatures takes a launch's arguments: numba's rules.

A kernel compiled for signatures given at the decorator (``@cuda.jit([sig1, sig2])``)
compiles nothing at launch: each launch picks one of them.  The pick follows numba's
conversion rules between scalar types (``numba.core.typeconv.rules``):

- every conversion has a kind, from best to worst: exact, promote (a wider type of the
  same family, ``int32 -> int64``), safe (no value lost, ``int32 -> float64``) and
  unsafe (values may change, ``float64 -> int32``); complex numbers convert to no
  real type;
- an array converts to an array of the same element type and rank whose layout is
  the same or 'A' (any); an integer converts (unsafely) to a pointer, its address;
- each signature that takes all the arguments is rated by its counts of unsafe, safe
  and promote conversions, compared in that order; the best rating wins, and two
  signatures sharing it make the launch ambiguous.

A launch cannot pass a float where the kernel takes an integer, nor a complex number
where it takes a real one (numba's launch raises a TypeError there too): a signature
that would need that is picked, and the launch refused, as numba does.
"""

from __future__ import annotations

import functools
import itertools

from cujit.types import Array, CPointer, Scalar, Type
from cujit.types import core as t

EXACT, PROMOTE, SAFE, UNSAFE = 0, 1, 2, 3
NONE = 99  # no conversion

# (from, to, kind from -> to, kind to -> from or None): numba's base table.
_RULES = (
    (t.boolean, t.int8, SAFE, UNSAFE),
    (t.boolean, t.uint8, SAFE, UNSAFE),
    (t.int8, t.int16, PROMOTE, UNSAFE),
    (t.uint8, t.uint16, PROMOTE, UNSAFE),
    (t.int16, t.int32, PROMOTE, UNSAFE),
    (t.uint16, t.uint32, PROMOTE, UNSAFE),
    (t.int32, t.int64, PROMOTE, UNSAFE),
    (t.uint32, t.uint64, PROMOTE, UNSAFE),
    (t.uint8, t.int16, SAFE, UNSAFE),
    (t.uint16, t.int32, SAFE, UNSAFE),
    (t.uint32, t.int64, SAFE, UNSAFE),
    (t.int8, t.float16, SAFE, UNSAFE),
    (t.int16, t.float32, SAFE, UNSAFE),
    (t.int32, t.float64, SAFE, UNSAFE),
    (t.int16, t.float16, UNSAFE, UNSAFE),
    (t.int32, t.float32, UNSAFE, UNSAFE),
    (t.int64, t.float64, SAFE, UNSAFE),
    (t.uint64, t.float64, SAFE, UNSAFE),
    (t.float16, t.float32, PROMOTE, UNSAFE),
    (t.float32, t.float64, PROMOTE, UNSAFE),
    (t.float32, t.complex64, SAFE, None),
    (t.float64, t.complex128, SAFE, None),
    (t.complex64, t.complex128, PROMOTE, UNSAFE),
)


def _closure() -> dict[tuple[Scalar, Scalar], int]:
    """Every scalar conversion: the best path's worst step (numba propagates its
    rules through chains the same way)."""
    table = {(a, a): EXACT for a in t.SCALARS}
    for a, b, there, back in _RULES:
        table[a, b] = there
        if back is not None:
            table[b, a] = back
    for mid, a, b in itertools.product(t.SCALARS, repeat=3):
        via = max(table.get((a, mid), NONE), table.get((mid, b), NONE))
        if via < table.get((a, b), NONE):
            table[a, b] = via
    return table


@functools.cache
def _table() -> dict[tuple[Scalar, Scalar], int]:
    """``_closure()``, built on first use: only kernels with declared signatures ask."""
    return _closure()


def conversion(given: Type, declared: Type) -> int:
    """The kind of conversion from an argument of type ``given`` to ``declared``."""
    if given == declared:
        return EXACT
    if isinstance(given, Scalar) and isinstance(declared, Scalar):
        return _table().get((given, declared), NONE)
    if isinstance(given, Array) and isinstance(declared, Array):
        same = given.dtype == declared.dtype and given.ndim == declared.ndim
        return SAFE if same and declared.layout in ("A", given.layout) else NONE
    if isinstance(declared, CPointer) and isinstance(given, Scalar) and given.kind in "iu":
        return UNSAFE  # an integer is taken as the address (numba's launch does so)
    return NONE


def _rating(declared: tuple[Type, ...], given: tuple[Type, ...]) -> tuple[int, int, int] | None:
    if len(declared) != len(given):
        return None
    kinds = [conversion(g, d) for d, g in zip(declared, given, strict=True)]
    if NONE in kinds:
        return None
    return (kinds.count(UNSAFE), kinds.count(SAFE), kinds.count(PROMOTE))


class Ambiguous(Exception):
    """Two or more signatures take the arguments equally well (``.best`` holds them)."""

    def __init__(self, best: list[tuple[Type, ...]]):
        super().__init__(best)
        self.best = best


def select(signatures, given: tuple[Type, ...]) -> tuple[Type, ...] | None:
    """The signature (argument types) of ``signatures`` that takes ``given`` best, or
    None where none takes them; raises ``Ambiguous`` on a tie for the best."""
    rated = [(r, sig) for sig in signatures if (r := _rating(tuple(sig), given)) is not None]
    if not rated:
        return None
    best = min(r for r, _ in rated)
    winners = [sig for r, sig in rated if r == best]
    if len(winners) > 1:
        raise Ambiguous(winners)
    return winners[0]


def same_bits(declared: tuple[Type, ...], given: tuple[Type, ...]) -> bool:
    """Whether ``given`` differs from ``declared`` only in integer arrays of the other
    signedness (uint32 data where int32 is declared): numba's launch of a kernel with one
    signature passes those unchecked, as the declared type's view of the same bytes."""
    if len(declared) != len(given):
        return False
    for d, g in zip(declared, given, strict=True):
        if conversion(g, d) != NONE:
            continue
        if not (isinstance(d, Array) and isinstance(g, Array)):
            return False
        dt, gt = d.dtype, g.dtype
        if not (
            d.ndim == g.ndim
            and d.layout in ("A", g.layout)
            and isinstance(dt, Scalar)
            and isinstance(gt, Scalar)
            and {dt.kind, gt.kind} <= {"i", "u"}
            and dt.bits == gt.bits
        ):
            return False
    return True


def unpassable(declared: tuple[Type, ...], given: tuple[Type, ...]) -> int | None:
    """The first argument a launch cannot convert to its parameter's type (a float to
    an integer, a complex number to a real one), or None."""
    for k, (d, g) in enumerate(zip(declared, given, strict=True)):
        if isinstance(d, Scalar) and isinstance(g, Scalar):
            if d.kind in "iub" and g.kind in "fc" or d.kind == "f" and g.kind == "c":
                return k
    return None


def numba_spelling(ty: Type) -> str:
    """A type as numba's repr writes it (``Array(float64, 1, 'C', False, aligned=True)``),
    for messages numba's users match."""
    if isinstance(ty, Array):
        return f"Array({ty.dtype}, {ty.ndim}, '{ty.layout}', False, aligned=True)"
    return str(ty)
