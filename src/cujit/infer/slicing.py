"""Slices: ``a[1:-1]``, ``a[i, :]``, ``a[::2]`` of arrays are views (layout 'A').

``a:b:c`` reaches stage 4 as a call of the builtin ``slice`` (stage 3 builds it);
its value is a ``SliceValue``, the tuple (start, stop, step) with ``None`` for the
parts left out.  Indexing an array with slices (and integers) gives the
intrinsic ``array.slice``: the view's data pointer, extents and byte strides,
computed as Python's ``slice.indices`` clips them.  The step must be a constant.

    %v: array(float64, 1d, A) = intrinsic array.slice (%a, %start)  [spec ((s, 1, 0, 1),)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import Loc, TypingError, UnsupportedError
from cujit.frozen import frozen
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import BuildTuple, Intrinsic, TupleGet, Value
from cujit.types import Array, NoneType, Scalar, Tuple, int64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


@frozen(repr=False)
class SliceValue(Tuple):
    """``slice(start, stop, step)``: items int64 or NoneType (a part left out)."""

    __hash__ = Tuple.__hash__

    def __str__(self) -> str:
        return "slice(" + ", ".join(map(str, self.items)) + ")"


def call_slice(t: Typer, site: CallSite) -> Value:
    site.expect(1, 3)
    args = list(site.args)
    if len(args) == 1:
        args.insert(0, t.const(None, site.loc))
    if len(args) == 2:
        args.append(t.const(None, site.loc))
    items = [
        v if isinstance(v.type, NoneType) else t.integer(v, site.loc, "a slice bound") for v in args
    ]
    step = t.const_value(items[2])
    if step == 0:
        raise TypingError("slice step cannot be zero", site.loc)
    ty = SliceValue(tuple(i.type for i in items))
    out = t.emit(BuildTuple(loc=site.loc, result=site.result(ty), items=tuple(items)))
    t.tuple_items[out.id] = tuple(items)  # the parts, constants known, for the subscript
    return out


def has_slice(idx: Value) -> bool:
    """Whether an index holds a slice (``a[1:3]``, ``m[i, :]``)."""
    return isinstance(idx.type, SliceValue) or (
        isinstance(idx.type, Tuple) and any(isinstance(i, SliceValue) for i in idx.type.items)
    )


def is_view_index(arr: Array, idx: Value) -> bool:
    """Whether ``arr[idx]`` is a view: the index holds a slice, or fewer integers than
    the array has dimensions (``m[i]`` of a matrix is its row)."""
    if isinstance(idx.type, SliceValue):
        return True
    if isinstance(idx.type, Tuple):
        return (
            any(isinstance(i, SliceValue) for i in idx.type.items) or len(idx.type.items) < arr.ndim
        )
    return isinstance(idx.type, Scalar) and arr.ndim > 1


def _parts(t: Typer, tup: Value, loc: Loc) -> list[Value]:
    if tup.id in t.tuple_items:
        return list(t.tuple_items[tup.id])
    return [
        t.emit(TupleGet(loc=loc, result=t.fresh(it), tuple=tup, index=i))
        for i, it in enumerate(tup.type.items)
    ]


def _slice_spec(t: Typer, s: Value, loc: Loc, operands: list[Value]) -> tuple:
    start, stop, step = _parts(t, s, loc)
    if isinstance(step.type, NoneType):
        k = 1
    else:
        k = t.const_value(step)
        if not isinstance(k, int):
            raise UnsupportedError("a slice's step must be a constant in kernels", loc)
    given = []
    for v in (start, stop):
        given.append(not isinstance(v.type, NoneType))
        if given[-1]:
            operands.append(v)
    return ("s", given[0], given[1], k)


def array_slice(t: Typer, arr: Value, idx: Value, loc: Loc, result: Value) -> Value:
    """``arr[idx]`` with slices in ``idx``: the view, an ``array.slice``."""
    ty: Array = arr.type
    items = [idx] if isinstance(idx.type, (SliceValue, Scalar)) else _parts(t, idx, loc)
    if len(items) > ty.ndim:
        raise TypingError(f"too many indices for an array of {ty.ndim} dimensions", loc)
    operands: list[Value] = []
    spec = []
    for v in items:
        if isinstance(v.type, SliceValue):
            spec.append(_slice_spec(t, v, loc, operands))
        elif isinstance(v.type, Scalar) and not v.type.is_float and not v.type.is_complex:
            operands.append(t.cast(v, int64, loc))
            spec.append(("i",))
        else:
            raise TypingError(
                f"an array index must be an integer or a slice, not {describe(v.type)}", loc
            )
    spec += [("s", False, False, 1)] * (ty.ndim - len(items))  # a[i] of 2-d: a[i, :]
    ndim = sum(1 for s in spec if s[0] == "s")
    out = Value(result.id, Array(ty.dtype, ndim, "A"))
    return t.emit(
        Intrinsic(
            loc=loc,
            result=out,
            name="array.slice",
            args=(arr, *operands),
            attrs=(("spec", tuple(spec)),),
        )
    )


def attribute_view(t: Typer, arr: Value, name: str, loc: Loc, result: Value) -> None:
    """``a.real``, ``a.imag`` (of a complex array: views of its parts) and ``a.T``
    (the transpose: extents and strides reversed), as ``array.slice`` ops."""
    ty: Array = arr.type
    full = (("s", False, False, 1),) * ty.ndim
    if name == "T":
        out = Value(result.id, Array(ty.dtype, ty.ndim, "A" if ty.ndim > 1 else ty.layout))
        attrs = (("spec", full), ("transpose", True))
    elif ty.dtype.is_complex:
        part = ty.dtype.part_type
        out = Value(result.id, Array(part, ty.ndim, "A"))
        attrs = (("spec", full), ("byte_offset", part.itemsize if name == "imag" else 0))
    elif name == "real":
        t.alias(result, arr)
        return
    else:
        raise UnsupportedError("the .imag of a real array is not supported in kernels", loc)
    t.emit(Intrinsic(loc=loc, result=out, name="array.slice", args=(arr,), attrs=attrs))


def slicing_rules() -> dict:
    return {slice: call_slice}
