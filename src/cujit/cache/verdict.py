"""The coarsening verdict a cache entry keeps, so that a hit needs no stage run.

A launch of a coarsenable kernel needs ``ir.independence``'s ``Verdict`` (its width,
bounds, arrays and reach: ``coarsen.Plan``); without it a hit would compile the
kernel again up to stage 5 to analyse it.  The entry's header holds the verdict's
launch-facing fields as JSON; the typed-IR value ids a verdict also carries are only
read by the variant's own compile, which runs the stages anyway.
"""

from __future__ import annotations

from cujit.diagnostics import Loc
from cujit.ir.independence import Bound, Verdict


def to_json(v: Verdict) -> dict:
    """The fields of ``v`` a launch and ``describe`` read, as JSON values."""
    loc = None if v.loc is None else [v.loc.file, v.loc.line, v.loc.col, v.loc.end_col]
    return {
        "ok": v.ok,
        "rule": v.rule,
        "loc": loc,
        "width": v.width,
        "bounds": [[_expr_json(b.expr), b.inclusive] for b in v.bounds],
        "arrays": list(v.arrays),
        "reach": [list(r) for r in v.reach],
    }


def from_json(d) -> Verdict | None:
    """The verdict ``to_json`` wrote, or None where ``d`` is not one (an entry of a
    damaged writer: the caller analyses the kernel itself)."""
    try:
        loc = None if d["loc"] is None else Loc(*d["loc"])
        bounds = tuple(Bound(_expr(e), bool(inc)) for e, inc in d["bounds"])
        v = Verdict(
            ok=bool(d["ok"]),
            rule=str(d["rule"]),
            loc=loc,
            width=int(d["width"]),
            bounds=bounds,
            arrays=tuple(int(p) for p in d["arrays"]),
            reach=tuple((int(p), int(lo), int(hi)) for p, lo, hi in d["reach"]),
        )
    except (KeyError, TypeError, ValueError):
        return None
    if v.ok and (v.width < 1 or not v.bounds):
        return None
    return v


def _expr_json(expr: tuple) -> list:
    return [_expr_json(e) if isinstance(e, tuple) else e for e in expr]


def _expr(items) -> tuple:
    if not isinstance(items, list) or not items or not isinstance(items[0], str):
        raise ValueError("not a bound expression")
    return tuple(_expr(e) if isinstance(e, list) else e for e in items)
