"""Typing rules for datetime64 and timedelta64 arithmetic and comparisons (NumPy's rules).

    datetime - datetime   -> timedelta        timedelta +/- timedelta -> timedelta
    datetime +/- timedelta -> datetime        timedelta * int, int * timedelta,
    comparisons of two datetimes or two timedeltas -> bool       timedelta // int -> timedelta

Operands of different units meet in the finer unit.  Each becomes one intrinsic,
``datetime.arith`` or ``datetime.compare``, whose ``scales`` attribute says what each
operand is multiplied by to reach that unit; lowering keeps NaT as NumPy does (NaT in,
NaT out; every comparison with NaT is False except ``!=``).
"""

from __future__ import annotations

from cujit.diagnostics import TypingError
from cujit.infer.context import Typer
from cujit.ir import Intrinsic, Value
from cujit.types import Scalar, boolean, int64
from cujit.types.datetimes import common_unit, datetime_type, is_datetime_kind, scale, unit_of

ORDER_OPS = ("==", "!=", "<", "<=", ">", ">=")


def _kind(t) -> str:
    if is_datetime_kind(t):
        return t.kind
    if isinstance(t, Scalar) and t.is_int:
        return "i"
    return "?"


def _result_kind(op: str, ka: str, kb: str) -> str | None:
    rules = {
        ("-", "M", "M"): "m",
        ("+", "M", "m"): "M",
        ("+", "m", "M"): "M",
        ("-", "M", "m"): "M",
        ("+", "m", "m"): "m",
        ("-", "m", "m"): "m",
        ("*", "m", "i"): "m",
        ("*", "i", "m"): "m",
        ("//", "m", "i"): "m",
    }
    return rules.get((op, ka, kb))


def _scales(ta, tb, loc, what: str) -> tuple[str, tuple[int, int]]:
    ua = unit_of(ta) if is_datetime_kind(ta) else ""
    ub = unit_of(tb) if is_datetime_kind(tb) else ""
    unit = common_unit(ua, ub)
    if unit is None:
        raise TypingError(f"cannot {what} {ta} and {tb}: their units do not convert", loc)
    return unit, (scale(ua, unit) if ua else 1, scale(ub, unit) if ub else 1)


def _operand(t: Typer, v: Value, loc) -> Value:
    return v if is_datetime_kind(v.type) else t.cast(v, int64, loc)


def type_binop(t: Typer, op, a: Value, b: Value) -> None:
    ka, kb = _kind(a.type), _kind(b.type)
    kind = _result_kind(op.op, ka, kb)
    if kind is None:
        raise TypingError(
            f"unsupported operand types for {op.op}: '{a.type}' and '{b.type}'", op.loc
        )
    unit, scales = _scales(a.type, b.type, op.loc, f"combine ({op.op})")
    times = (ka in "Mm", kb in "Mm")
    t.emit(
        Intrinsic(
            loc=op.loc,
            result=Value(op.result.id, datetime_type(kind, unit)),
            name="datetime.arith",
            args=(_operand(t, a, op.loc), _operand(t, b, op.loc)),
            attrs=(("op", op.op), ("scales", scales), ("times", times)),
        )
    )


def type_compare(t: Typer, op, a: Value, b: Value) -> None:
    ka, kb = _kind(a.type), _kind(b.type)
    if ka != kb or ka not in "Mm" or op.op not in ORDER_OPS:
        raise TypingError(
            f"unsupported operand types for {op.op}: '{a.type}' and "
            f"'{b.type}' (datetimes compare with datetimes, timedeltas with "
            "timedeltas)",
            op.loc,
        )
    _, scales = _scales(a.type, b.type, op.loc, "compare")
    t.emit(
        Intrinsic(
            loc=op.loc,
            result=Value(op.result.id, boolean),
            name="datetime.compare",
            args=(a, b),
            attrs=(("op", op.op), ("scales", scales)),
        )
    )
