"""``for`` loops over arrays, tuples, ``enumerate(...)`` and ``zip(...)``.

Every such loop is a loop over the indices ``range(n)`` that reads the element
at each index, as numba iterates.  The loop's iterator is a ``SeqIter``: a tuple
whose first item is the range iterator and whose other items are the sources
(an array; a tuple, copied once into a local array so that it can be indexed
by the loop's index; the parts of a zip or an enumerate).  A loop over a matrix
yields its rows, views (``array.slice``).  ``zip(x, y)`` and
``enumerate(x, start)`` are tuples of their parts (``ZipValue``,
``EnumerateValue``) until a loop iterates them:

    for i, v in enumerate(a):          # a: float64[::1]
  becomes
    %r = range(0, len(a), 1);  %it0 = get_iter %r
    %it = build_tuple (%it0, (0, a))          # SeqIter
    loop: valid = iter_valid(%it[0]);  k = iter_value(%it[0]);  (k + 0, a[k]) ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import Loc, TypingError, UnsupportedError
from cujit.frozen import frozen
from cujit.infer.context import Typer
from cujit.infer.numeric import describe, unify
from cujit.infer.unroll import UnrollLoop
from cujit.ir import (
    BinOp,
    BuildTuple,
    GetItem,
    GetIter,
    Intrinsic,
    IterNext,
    IterValid,
    IterValue,
    SetItem,
    TupleGet,
    Value,
)
from cujit.types import Array, NamedTuple, RangeIter, RangeType, Scalar, Tuple, boolean, int64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


@frozen(repr=False)
class ZipValue(Tuple):
    """``zip(x, y, ...)``: its items are the zipped sequences."""

    __hash__ = Tuple.__hash__

    def __str__(self) -> str:
        return "zip(" + ", ".join(map(str, self.items)) + ")"


@frozen(repr=False)
class EnumerateValue(Tuple):
    """``enumerate(x, start)``: items (int64 start, the sequence)."""

    __hash__ = Tuple.__hash__

    def __str__(self) -> str:
        return f"enumerate({self.items[1]})"


@frozen(repr=False)
class RangeSeq(Tuple):
    """A ``range`` zipped or enumerated: its (start, stop, step)."""

    __hash__ = Tuple.__hash__

    def __str__(self) -> str:
        return "range"


@frozen(repr=False)
class SeqIter(Tuple):
    """The state of a loop over a sequence: (range iterator over the indices, source)."""

    __hash__ = Tuple.__hash__

    def __str__(self) -> str:
        return f"iter({self.items[1]})"


def _get(t: Typer, tup: Value, i: int, loc: Loc) -> Value:
    return t.emit(TupleGet(loc=loc, result=t.fresh(tup.type.items[i]), tuple=tup, index=i))


def _tuple_as_array(t: Typer, tup: Value, loc: Loc) -> Value:
    """A tuple's items copied into a local array of their common type."""
    items = tup.type.items
    if not items or not all(isinstance(it, Scalar) for it in items):
        raise UnsupportedError(
            f"a loop over {describe(tup.type)} is not supported: only "
            "tuples of numbers can be iterated",
            loc,
        )
    common = items[0]
    for it in items[1:]:
        common = unify(common, it)
    arr = t.emit(
        Intrinsic(
            loc=loc,
            result=t.fresh(Array(common, 1, "C")),
            name="local.array",
            args=(),
            # ``tuple``: it holds a tuple's items (a debug build's index check then
            # says "tuple index out of range", as Python does).
            attrs=(("shape", (len(items),)), ("dtype", common), ("tuple", True)),
        )
    )
    for i in range(len(items)):
        v = t.cast(_get(t, tup, i, loc), common, loc)
        t.emit(SetItem(loc=loc, obj=arr, index=t.const(i, loc), value=v))
    return arr


def source(t: Typer, v: Value, loc: Loc) -> Value:
    """``v`` as a loop source: arrays, zips and enumerates as they are, tuples as a
    local array of their items."""
    if isinstance(v.type, (ZipValue, EnumerateValue)):
        return v
    if isinstance(v.type, Array):
        if v.type.ndim == 0:
            raise TypingError("cannot iterate over a 0-d array", loc)
        return v
    if isinstance(v.type, Tuple):
        return _tuple_as_array(t, v, loc)
    if isinstance(v.type, RangeType):
        bounds = t.range_bounds.get(v.id)
        if bounds is None:
            raise UnsupportedError(
                "zip() and enumerate() of this range are not supported: make the range "
                "in the call (enumerate(range(a, b, c)))",
                loc,
            )
        return t.emit(BuildTuple(loc=loc, result=t.fresh(RangeSeq((int64,) * 3)), items=bounds))
    t.check_defined(v, loc)
    raise TypingError(f"cannot iterate over a value of type {describe(v.type)}", loc)


def _binop(t: Typer, op: str, a: Value, b: Value, loc: Loc) -> Value:
    return t.emit(BinOp(loc=loc, result=t.fresh(int64), op=op, lhs=a, rhs=b))


def _range_length(t: Typer, src: Value, loc: Loc) -> Value:
    """len(range(start, stop, step)) = max(0, ceil((stop - start) / step))."""
    start, stop, step = (_get(t, src, i, loc) for i in range(3))
    floor = _binop(t, "//", _binop(t, "-", start, stop, loc), step, loc)
    n = _binop(t, "-", t.const(0, loc), floor, loc)
    return t.emit(Intrinsic(loc=loc, result=t.fresh(int64), name="max", args=(n, t.const(0, loc))))


def _length(t: Typer, src: Value, loc: Loc) -> Value:
    if isinstance(src.type, RangeSeq):
        return _range_length(t, src, loc)
    if isinstance(src.type, Array):
        shape = t.emit(
            Intrinsic(
                loc=loc,
                result=t.fresh(Tuple((int64,) * src.type.ndim)),
                name="array.shape",
                args=(src,),
            )
        )
        return _get(t, shape, 0, loc)
    if isinstance(src.type, EnumerateValue):
        return _length(t, _get(t, src, 1, loc), loc)
    lengths = [_length(t, _get(t, src, i, loc), loc) for i in range(len(src.type.items))]
    n = lengths[0]
    for m in lengths[1:]:
        n = t.emit(Intrinsic(loc=loc, result=t.fresh(int64), name="min", args=(n, m)))
    return n


def element_type(src):
    """The type of the element a loop over a source of type ``src`` yields."""
    if isinstance(src, RangeSeq):
        return int64
    if isinstance(src, Array):  # a row of a multi-dimensional array is a view
        return src.dtype if src.ndim == 1 else Array(src.dtype, src.ndim - 1, "A")
    if isinstance(src, EnumerateValue):
        return Tuple((int64, element_type(src.items[1])))
    return Tuple(tuple(element_type(s) for s in src.items))


def _element(t: Typer, src: Value, k: Value, loc: Loc, result: Value | None = None) -> Value:
    ty = element_type(src.type)
    out = Value(result.id, ty) if result is not None else t.fresh(ty)
    if isinstance(src.type, RangeSeq):  # start + k * step
        start, step = _get(t, src, 0, loc), _get(t, src, 2, loc)
        offset = _binop(t, "*", k, step, loc)
        return t.emit(BinOp(loc=loc, result=out, op="+", lhs=start, rhs=offset))
    if isinstance(src.type, Array) and src.type.ndim == 1:
        return t.emit(GetItem(loc=loc, result=out, obj=src, index=k))
    if isinstance(src.type, Array):
        spec = (("i",),) + (("s", False, False, 1),) * (src.type.ndim - 1)
        return t.emit(
            Intrinsic(
                loc=loc, result=out, name="array.slice", args=(src, k), attrs=(("spec", spec),)
            )
        )
    if isinstance(src.type, EnumerateValue):
        start = _get(t, src, 0, loc)
        i = t.emit(BinOp(loc=loc, result=t.fresh(int64), op="+", lhs=start, rhs=k))
        items = (i, _element(t, _get(t, src, 1, loc), k, loc))
    else:
        items = tuple(_element(t, _get(t, src, j, loc), k, loc) for j in range(len(src.type.items)))
    return t.emit(BuildTuple(loc=loc, result=out, items=items))


def get_iter(t: Typer, obj: Value, loc: Loc, result: Value) -> None:
    """``iter(obj)`` of a sequence: its SeqIter (a loop over a tuple of other things
    than numbers is unrolled instead: ``unroll.UnrollLoop``)."""
    items = obj.type.items if type(obj.type) in (Tuple, NamedTuple) else None
    if items and not all(isinstance(it, Scalar) for it in items):
        raise UnrollLoop(result.id, len(items), loc)
    src = source(t, obj, loc)
    n = _length(t, src, loc)
    rng = t.emit(
        Intrinsic(
            loc=loc,
            result=t.fresh(RangeType(int64)),
            name="range",
            args=(t.const(0, loc), n, t.const(1, loc)),
        )
    )
    it = t.emit(GetIter(loc=loc, result=t.fresh(RangeIter(int64)), obj=rng))
    t.emit(
        BuildTuple(loc=loc, result=Value(result.id, SeqIter((it.type, src.type))), items=(it, src))
    )


def iter_step(t: Typer, op, it: Value) -> None:
    """IterValid, IterValue, IterNext of a SeqIter."""
    loc = op.loc
    rit = _get(t, it, 0, loc)
    if isinstance(op, IterValid):
        t.emit(IterValid(loc=loc, result=Value(op.result.id, boolean), iter=rit))
    elif isinstance(op, IterValue):
        k = t.emit(IterValue(loc=loc, result=t.fresh(int64), iter=rit))
        _element(t, _get(t, it, 1, loc), k, loc, result=op.result)
    else:
        nxt = t.emit(IterNext(loc=loc, result=t.fresh(RangeIter(int64)), iter=rit))
        t.emit(
            BuildTuple(
                loc=loc, result=Value(op.result.id, it.type), items=(nxt, _get(t, it, 1, loc))
            )
        )


def call_zip(t: Typer, site: CallSite) -> Value:
    site.expect(1, 99)
    srcs = tuple(source(t, v, site.loc) for v in site.args)
    return t.emit(
        BuildTuple(
            loc=site.loc, result=site.result(ZipValue(tuple(s.type for s in srcs))), items=srcs
        )
    )


def call_enumerate(t: Typer, site: CallSite) -> Value:
    site.expect(1, 2, ("start",))
    src = source(t, site.arg(0, "iterable"), site.loc)
    start = site.arg(1, "start", None)
    start = (
        t.const(0, site.loc) if start is None else t.integer(start, site.loc, "enumerate()'s start")
    )
    return t.emit(
        BuildTuple(
            loc=site.loc, result=site.result(EnumerateValue((int64, src.type))), items=(start, src)
        )
    )


def iteration_rules() -> dict:
    return {zip: call_zip, enumerate: call_enumerate}
