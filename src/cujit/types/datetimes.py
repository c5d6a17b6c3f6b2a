"""datetime64 and timedelta64: 64-bit integer scalars with a unit.

A datetime64[unit] counts units since the epoch, a timedelta64[unit] counts units; both
are int64 in registers, in memory and as kernel parameters, with NumPy's NaT (the
smallest int64) as "not a time".  The kinds are NumPy's: 'M' for datetimes, 'm' for
timedeltas.  Units convert by exact integer factors: weeks and finer ('W', 'D', 'h',
'm', 's', 'ms', 'us', 'ns', 'ps', 'fs', 'as'); months and years only to themselves.
"""

from __future__ import annotations

from cujit.types.core import Scalar

NAT = -(2**63)
# Units with a fixed length, coarsest first, each with its length in the next finer one.
FIXED_UNITS = ("W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")
_STEP = (7, 24, 60, 60, 1000, 1000, 1000, 1000, 1000, 1000)
_TYPES: dict[tuple[str, str], Scalar] = {}


def datetime_type(kind: str, unit: str) -> Scalar:
    """The one Scalar of kind 'M' (datetime64) or 'm' (timedelta64) and ``unit`` ('' is
    NumPy's generic unit)."""
    key = (kind, unit)
    t = _TYPES.get(key)
    if t is None:
        base = "datetime64" if kind == "M" else "timedelta64"
        t = _TYPES[key] = Scalar(f"{base}[{unit}]" if unit else base, kind, 64)
    return t


def unit_of(t: Scalar) -> str:
    return t.name[t.name.index("[") + 1 : -1] if "[" in t.name else ""


def is_datetime_kind(t: object) -> bool:
    return isinstance(t, Scalar) and t.kind in "Mm"


def common_unit(a: str, b: str) -> str | None:
    """The finer of two units (the generic unit yields to any), or None when one does
    not convert to the other (months or years against a fixed unit)."""
    if not a or not b or a == b:
        return a or b
    if a in FIXED_UNITS and b in FIXED_UNITS:
        return a if FIXED_UNITS.index(a) > FIXED_UNITS.index(b) else b
    if {a, b} == {"Y", "M"}:
        return "M"
    return None


def scale(src: str, dst: str) -> int:
    """How many ``dst`` units one ``src`` unit is (``dst`` at least as fine)."""
    if not src or src == dst:
        return 1
    if src == "Y":
        return 12
    i, j = FIXED_UNITS.index(src), FIXED_UNITS.index(dst)
    factor = 1
    for step in _STEP[i:j]:
        factor *= step
    return factor
