"""Typing rules for records (structured dtypes): fields read and written.

A record value is a reference to its bytes, so ``a[i].x = v`` writes the array:

    r.x            -> intrinsic record.get (r) {offset}        (a scalar field)
    r.sub          -> intrinsic record.view (r) {offset}       (a nested record)
    r.h            -> intrinsic record.view (r) {offset,shape} (an array field: a C view)
    r.x = v        -> intrinsic record.set (r, v) {offset}     (v cast to the field's type)
    r.sub = s      -> intrinsic record.set (r, s) {offset}     (copies the record's bytes)
    r.h = src      -> intrinsic record.assign_array (view, src) (element by element)

    r.s = "abc"    -> intrinsic chars.set (view) {data}        (a fixed-size string field)

``r['x']`` is ``r.x``.  A whole record stored into a record array (``a[i] = r``) stays a
SetItem: codegen copies the bytes.
"""

from __future__ import annotations

from cujit.diagnostics import Loc, TypingError
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, Value
from cujit.types import (
    Array,
    CharSeq,
    NestedArray,
    Record,
    Scalar,
    Type,
    field_alignment,
    none,
)
from cujit.types.extension import attribute_member

# Field arrays larger than this are copied by a loop the lowering would unroll: refused.
MAX_ASSIGN_ELEMENTS = 4096


def _field(rec: Record, name: object, loc: Loc) -> tuple[Type, int]:
    if rec.origin is not None:  # a library's type: the attribute names its member
        name = _member(rec, name, loc)
    found = rec.field(name) if isinstance(name, str) else None
    if found is None:
        what = repr(name) if isinstance(name, str) else "a non-constant name"
        raise TypingError(
            f"the record has no field {what}", loc, hint=f"its fields are {', '.join(rec.names)}"
        )
    return found


def _member(rec: Record, name: object, loc: Loc) -> str:
    member = attribute_member(rec.origin, name) if isinstance(name, str) else None
    if member is None:
        raise TypingError(f"{rec.origin} has no attribute {name!r}", loc)
    return member


def field_name(t: Typer, rec: Record, idx: Value) -> object:
    """The field ``r[idx]`` names: a constant string, or a constant position."""
    name = t.const_value(idx)
    if (
        isinstance(name, int)
        and not isinstance(name, bool)
        and -len(rec.fields) <= name < len(rec.fields)
    ):
        return rec.names[name]
    return name if isinstance(name, str) else None


def view_type(ft: Type) -> Type:
    """The type of reading a non-scalar field: a record, or a C array view."""
    if isinstance(ft, NestedArray):
        return Array(ft.dtype, ft.ndim, "C")
    return ft


def get_field(t: Typer, rec: Value, name: object, loc: Loc, result_id: int | None) -> Value:
    """``rec.name`` (or ``rec['name']``)."""
    ft, offset = _field(rec.type, name, loc)
    rt = ft if isinstance(ft, Scalar) else view_type(ft)
    out = Value(result_id, rt) if result_id is not None else t.fresh(rt)
    attrs: tuple = (("offset", offset), ("field", name))
    if isinstance(ft, Scalar):
        return t.emit(Intrinsic(loc=loc, result=out, name="record.get", args=(rec,), attrs=attrs))
    if isinstance(ft, NestedArray):
        attrs += (("shape", ft.shape),)
    view = t.emit(Intrinsic(loc=loc, result=out, name="record.view", args=(rec,), attrs=attrs))
    if rec.id in t.const_arrays:  # a field of a constant record is read-only too
        t.const_arrays.add(view.id)
    return view


def set_field(t: Typer, rec: Value, name: object, value: Value, loc: Loc) -> None:
    """``rec.name = value`` (or ``rec['name'] = value``)."""
    if rec.type.origin is not None:
        raise TypingError(f"the attributes of {rec.type.origin} are read-only", loc)
    ft, offset = _field(rec.type, name, loc)
    t.check_writable(rec, loc, "cannot assign a field of a record of")
    attrs: tuple = (("offset", offset), ("field", name))
    if isinstance(ft, NestedArray):
        align = field_alignment(rec.type, offset, ft.dtype.itemsize)
        assign_array(t, get_field(t, rec, name, loc, None), value, (ft.shape, align), loc)
        return
    if isinstance(ft, CharSeq) and value.type != ft:
        store_chars(t, get_field(t, rec, name, loc, None), value, loc)
        return
    if isinstance(ft, (Record, CharSeq)):
        if value.type != ft:
            raise TypingError(
                f"cannot store {describe(value.type)} into field {name!r}, "
                "a record of another type",
                loc,
            )
    else:
        t.scalar(value, loc, f"storing into field {name!r} of type {ft}")
        value = t.cast(value, ft, loc)
    t.emit(
        Intrinsic(loc=loc, result=t.fresh(none), name="record.set", args=(rec, value), attrs=attrs)
    )


def store_chars(t: Typer, ref: Value, value: Value, loc: Loc) -> None:
    """A constant ``str`` or ``bytes`` stored into the fixed-size string ``ref``
    (truncated to its size and zero-padded, as NumPy stores it)."""
    ct: CharSeq = ref.type
    text = t.const_value(value)
    data = ct.encode(text) if isinstance(text, (str, bytes)) else None
    if data is None:
        what = "a non-ASCII string" if isinstance(text, str) else describe(value.type)
        raise TypingError(
            f"cannot store {what} into {ct}: a fixed-size string takes a "
            "constant str or bytes (ASCII into bytes)",
            loc,
        )
    t.emit(
        Intrinsic(
            loc=loc, result=t.fresh(none), name="chars.set", args=(ref,), attrs=(("data", data),)
        )
    )


def assign_array(t: Typer, dest: Value, src: Value, layout: tuple, loc: Loc) -> None:
    """``dest = src`` for an array field ``dest`` of constant shape and element
    alignment (``layout``): every element, from an array of the same rank or from
    one scalar."""
    dt: Array = dest.type
    shape, align = layout
    n = 1
    for d in shape:
        n *= d
    if n > MAX_ASSIGN_ELEMENTS:
        raise TypingError(
            f"assigning an array field of {n} elements: at most "
            f"{MAX_ASSIGN_ELEMENTS} are copied at once",
            loc,
        )
    if isinstance(src.type, Array):
        if src.type.ndim != dt.ndim or not isinstance(src.type.dtype, Scalar):
            raise TypingError(
                f"cannot assign {describe(src.type)} to an array field of "
                f"{dt.ndim} dimensions of {dt.dtype}",
                loc,
            )
    else:
        t.scalar(src, loc, "assigning to an array field")
        src = t.cast(src, dt.dtype, loc)
    t.emit(
        Intrinsic(
            loc=loc,
            result=t.fresh(none),
            name="record.assign_array",
            args=(dest, src),
            attrs=(("shape", shape), ("align", align)),
        )
    )
