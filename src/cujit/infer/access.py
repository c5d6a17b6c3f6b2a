"""Typing rules for attributes, indexing, tuples and range iteration.

Attribute lookups on compile-time objects run the real ``getattr`` now, so a
chain like ``cuda.threadIdx.x`` collapses to one intrinsic:

    %1 = const <module cujit.cuda>
    %2 = getattr %1 threadIdx
    %3 = getattr %2 x
  becomes
    %1: pyobject(module cujit.cuda) = const <module cujit.cuda>
    %2: pyobject(cujit.cuda.threadIdx) = const <cujit.cuda.threadIdx>
    %3: int32 = intrinsic cuda.sreg () {reg='threadIdx.x'}

Array attributes become ``array.shape`` / ``array.size`` intrinsics (``ndim``
is a constant); array indices are cast to int64 and counted against ``ndim``.
"""

from __future__ import annotations

import collections
import enum
from typing import TYPE_CHECKING

from cujit.device_api import SpecialRegister
from cujit.diagnostics import Loc, TypingError, UnsupportedError
from cujit.infer import (
    array_methods,
    iteration,
    optional,
    pointers,
    records,
    reduction_calls,
    slice_store,
    slicing,
)
from cujit.infer.complex_calls import BoundMethod, scalar_attr
from cujit.infer.context import Typer
from cujit.infer.cuda_calls import constant_array, is_frozen_array
from cujit.infer.extension_attrs import extension_attribute
from cujit.infer.numeric import describe
from cujit.ir import (
    BuildTuple,
    Const,
    GetAttr,
    GetItem,
    GetIter,
    Intrinsic,
    IterNext,
    IterValid,
    IterValue,
    SetAttr,
    SetItem,
    TupleGet,
    Value,
)
from cujit.types import (
    Array,
    CharSeq,
    NamedTuple,
    PyObject,
    RangeIter,
    RangeType,
    Record,
    Scalar,
    Tuple,
    boolean,
    describe_object,
    int32,
    int64,
    uint64,
)
from cujit.types.extension import library_types

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


_ARRAY_ATTRS = "shape, size, ndim, dtype, ctypes.data, " + ", ".join(
    f"{m}()" for m in (*reduction_calls.METHODS, "reshape", "view", "copy")
)


def _is_array(obj: Value) -> bool:
    """An array value, or a global NumPy array (frozen into the kernel when used)."""
    return isinstance(obj.type, Array) or (
        isinstance(obj.type, PyObject) and is_frozen_array(obj.type.value)
    )


def _array_method(t: Typer, op: GetAttr, obj: Value) -> bool:
    """``a.sum`` before its call: ``np.sum`` bound to ``a`` (``a.reshape``: np.reshape,
    ``a.view``, ``a.copy``); False where ``op`` is no such method."""
    import numpy as np

    if not _is_array(obj):
        return False
    if op.name in reduction_calls.METHODS:
        func = getattr(np, op.name)
    else:
        func = array_methods.method_function(op.name)
        if func is None:
            return False
    method = BoundMethod(func, obj)
    t.emit(Const(loc=op.loc, result=Value(op.result.id, PyObject(method)), value=method))
    return True


def type_getattr(t: Typer, op: GetAttr) -> None:  # noqa: C901 -- one branch per attribute family (special register, array, scalar, named tuple)
    obj = t.value(op.obj)
    # A library's method or attribute (cujit.extending); a.sum(): np.sum(a).
    if extension_attribute(t, op, obj) or _array_method(t, op, obj):
        return
    if isinstance(obj.type, PyObject):
        t.check_not_string(obj, op.loc)
        target = obj.type.value
        try:
            attr = getattr(target, op.name)
        except AttributeError as exc:
            if type(exc).__name__ == "NotSupportedError":  # cujit.cuda's known gaps
                raise UnsupportedError(str(exc), op.loc) from None
            name = describe_object(target).removeprefix("cujit.")  # as kernels spell it
            hint = getattr(target, "attr_hint", None)  # device_api objects may have one
            if isinstance(getattr(target, "x", None), SpecialRegister):
                hint = f"{name} has the attributes x, y and z"
            raise TypingError(f"'{name}' has no attribute '{op.name}'", op.loc, hint=hint) from None
        if isinstance(attr, SpecialRegister):
            t.emit(
                Intrinsic(
                    loc=op.loc,
                    result=Value(op.result.id, int32),
                    name="cuda.sreg",
                    args=(),
                    attrs=(("reg", attr.key),),
                )
            )
        else:
            t.const(attr, op.loc, result=op.result)
        return
    if isinstance(obj.type, Array):
        arr = obj.type
        if op.name == "shape":
            shape_t = Tuple((int64,) * arr.ndim)
            t.emit(
                Intrinsic(
                    loc=op.loc, result=Value(op.result.id, shape_t), name="array.shape", args=(obj,)
                )
            )
        elif op.name == "size":
            t.emit(
                Intrinsic(
                    loc=op.loc, result=Value(op.result.id, int64), name="array.size", args=(obj,)
                )
            )
        elif op.name == "ndim":
            t.const(arr.ndim, op.loc, result=op.result)
        elif op.name == "dtype":
            t.const(arr.dtype, op.loc, result=op.result)
        elif op.name in ("real", "imag", "T"):  # views
            slicing.attribute_view(t, obj, op.name, op.loc, op.result)
        elif op.name == "ctypes":  # a.ctypes.data: the address of the first element
            addr = t.emit(
                Intrinsic(loc=op.loc, result=t.fresh(uint64), name="array.address", args=(obj,))
            )
            _build(t, op.loc, Value(op.result.id, NamedTuple((uint64,), ArrayCtypes)), (addr,))
        else:
            msg = f"arrays have no attribute '{op.name}' in kernels (supported: {_ARRAY_ATTRS})"
            raise TypingError(msg, op.loc)
        return
    if isinstance(obj.type, Record):  # r.x: a field
        records.get_field(t, obj, op.name, op.loc, op.result.id)
        return
    if isinstance(obj.type, Scalar):  # z.real, z.imag, z.conjugate
        scalar_attr(t, op, obj)
        return
    if isinstance(obj.type, NamedTuple):  # p.x: the item of that field
        fields = obj.type.fields
        if op.name not in fields:
            name = obj.type.cls.__name__
            raise TypingError(
                f"namedtuple '{name}' has no field '{op.name}'",
                op.loc,
                hint=f"{name} has the fields {', '.join(fields)}",
            )
        _emit_tuple_get(t, op, obj, fields.index(op.name))
        return
    t.check_defined(obj, op.loc)
    raise TypingError(f"'{describe(obj.type)}' has no attribute '{op.name}'", op.loc)


ArrayCtypes = collections.namedtuple("ArrayCtypes", ["data"])
"""What ``a.ctypes`` is in a kernel: its ``data`` is the array's address (uint64)."""


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _zero_d_integer(t: Typer, v: Value, loc: Loc) -> Value:
    """A 0-d integer array used as an index stands for its element (as in numba)."""
    ty = v.type
    if isinstance(ty, Array) and ty.ndim == 0 and isinstance(ty.dtype, Scalar):
        if ty.dtype.kind in "iu":
            empty = t.emit(BuildTuple(loc=loc, result=t.fresh(Tuple(())), items=()))
            return t.emit(GetItem(loc=loc, result=t.fresh(ty.dtype), obj=v, index=empty))
    return v


def array_index(t: Typer, arr: Array, idx: Value, loc: Loc) -> Value:  # noqa: C901 -- one branch per index form (slice, scalar, tuple of ints, tuple being built) numba accepts
    """``idx`` as GetItem wants it: int64 for 1-d, a Tuple of ``ndim`` int64s otherwise."""
    if (isinstance(idx.type, PyObject) and isinstance(idx.type.value, slice)) or slicing.has_slice(
        idx
    ):  # a view is only read (GetItem takes it)
        raise UnsupportedError(
            "assigning to a slice of an array is not supported in "
            "kernels; store one element at a time",
            loc,
        )
    idx = _zero_d_integer(t, idx, loc)
    if isinstance(idx.type, Scalar):
        count = 1
    elif isinstance(idx.type, Tuple):
        count = len(idx.type.items)
    elif isinstance(idx.type, PyObject) and idx.type.value == ():
        count = 0  # a[()]: a 0-d array's element
    else:
        t.check_not_string(idx, loc)
        t.check_defined(idx, loc)
        raise TypingError(
            f"an array index must be an integer or a tuple of integers, not {describe(idx.type)}",
            loc,
        )
    if count != arr.ndim:
        raise TypingError(
            f"array of {_plural(arr.ndim, 'dimension', 'dimensions')} "
            f"indexed with {_plural(count, 'index', 'indices')}",
            loc,
        )
    if count == 0:
        return t.emit(BuildTuple(loc=loc, result=t.fresh(Tuple(())), items=()))
    if isinstance(idx.type, Scalar):
        items = [idx]
    elif arr.ndim > 1 and all(it == int64 for it in idx.type.items):
        return idx  # already what GetItem wants
    elif idx.id in t.tuple_items:  # x[i, j]: cast the items, not TupleGets of the tuple
        items = list(t.tuple_items[idx.id])
    else:
        items = [
            t.emit(TupleGet(loc=loc, result=t.fresh(it), tuple=idx, index=i))
            for i, it in enumerate(idx.type.items)
        ]
    for i, v in enumerate(items):
        v = _zero_d_integer(t, v, loc)
        if not isinstance(v.type, Scalar) or v.type.is_float or v.type == boolean:
            raise TypingError(f"an array index must be an integer, not {describe(v.type)}", loc)
        items[i] = t.cast(v, int64, loc)
    if arr.ndim == 1:
        return items[0]
    return t.emit(
        BuildTuple(loc=loc, result=t.fresh(Tuple((int64,) * arr.ndim)), items=tuple(items))
    )


def _tuple_index(t: Typer, tup: Tuple, idx: Value, loc: Loc) -> int:
    i = t.const_value(idx)
    if not isinstance(idx.type, Scalar) or isinstance(i, bool) or not isinstance(i, int):
        raise TypingError("a tuple index must be a constant integer", loc)
    n = len(tup.items)
    if not -n <= i < n:
        items = f"{n} item" + ("s" if n != 1 else "")
        raise TypingError(f"tuple index {i} out of range for a tuple of {items}", loc)
    return i % n


def _enum_member(t: Typer, op: GetItem, cls: enum.EnumMeta, name: object) -> None:
    """``Color["red"]``: the member, a constant like ``Color.red``."""
    member = cls.__members__.get(name) if isinstance(name, str) else None
    if member is None:
        what = repr(name) if isinstance(name, str) else "a non-constant name"
        raise TypingError(f"enum {cls.__name__} has no member {what}", op.loc)
    t.const(member, op.loc, result=op.result)


def type_getitem(t: Typer, op: GetItem) -> None:
    obj, idx = t.value(op.obj), t.value(op.index)
    if pointers.is_pointer(obj):  # p[i] of a types.CPointer
        pointers.pointer_getitem(t, op, obj, idx)
        return
    if isinstance(obj.type, PyObject) and is_frozen_array(obj.type.value):
        # A global or closure NumPy array: frozen into the kernel when it is compiled,
        # read from a constant table (numba's global arrays).
        obj = constant_array(t, obj.type.value, op.loc, t.fresh, "a global array")
    if isinstance(obj.type, Array) and slicing.is_view_index(obj.type, idx):
        slicing.array_slice(t, obj, idx, op.loc, op.result)
    elif isinstance(obj.type, Array):
        index = array_index(t, obj.type, idx, op.loc)
        t.emit(
            GetItem(loc=op.loc, result=Value(op.result.id, obj.type.dtype), obj=obj, index=index)
        )
        if obj.id in t.const_arrays and isinstance(obj.type.dtype, Record):
            t.const_arrays.add(op.result.id)  # a record of a constant array: read-only
    elif (
        isinstance(obj.type, Tuple)
        and isinstance(idx.type, Scalar)
        and t.const_value(idx) is None
        and obj.type.items
        and all(isinstance(it, Scalar) for it in obj.type.items)
    ):
        # A run-time index into a tuple of numbers (``shape[-x]``): read from a copy
        # of its items in a local array, as numba indexes a UniTuple.
        arr = iteration.source(t, obj, op.loc)
        index = array_index(t, arr.type, idx, op.loc)
        t.emit(
            GetItem(loc=op.loc, result=Value(op.result.id, arr.type.dtype), obj=arr, index=index)
        )
    elif isinstance(obj.type, Tuple):
        _emit_tuple_get(t, op, obj, _tuple_index(t, obj.type, idx, op.loc))
    elif isinstance(obj.type, Record):  # r['x'], or r[0]: its first field
        records.get_field(t, obj, records.field_name(t, obj.type, idx), op.loc, op.result.id)
    else:
        _index_object(t, op, obj, idx)


def _index_object(t: Typer, op: GetItem, obj: Value, idx: Value) -> None:
    """An object indexed that is no array, tuple or record: an Enum class gives its
    member (``Color["red"]``); anything else is refused."""
    if isinstance(obj.type, PyObject) and isinstance(obj.type.value, enum.EnumMeta):
        _enum_member(t, op, obj.type.value, t.const_value(idx))
        return
    t.check_not_string(obj, op.loc)
    t.check_defined(obj, op.loc)
    if (
        isinstance(obj.type, PyObject)
        and hasattr(obj.type.value, "shape")
        and hasattr(obj.type.value, "dtype")
    ):  # a device (or other) array object
        raise UnsupportedError(
            f"a global or closure {type(obj.type.value).__name__} cannot be used in a "
            "kernel yet: only NumPy arrays are (read as constants)",
            op.loc,
            hint="pass the array as a kernel argument",
        )
    if isinstance(obj.type, PyObject) and hasattr(obj.type.value, "py_func"):
        raise UnsupportedError(
            f"{obj.type.value!r} cannot be launched from a kernel: launching kernels from "
            "kernels (dynamic parallelism) is not supported",
            op.loc,
            hint="launch it from the host after this kernel, or make it a device function "
            "(@cuda.jit(device=True)) and call it",
        )
    raise TypingError(f"cannot index a value of type {describe(obj.type)}", op.loc)


def type_setitem(t: Typer, op: SetItem) -> None:
    obj, idx, val = t.value(op.obj), t.value(op.index), t.value(op.value)
    if pointers.is_pointer(obj):  # p[i] = v of a types.CPointer
        pointers.pointer_setitem(t, op, obj, idx, val)
        return
    if isinstance(obj.type, Record):  # r['x'] = v
        records.set_field(t, obj, records.field_name(t, obj.type, idx), val, op.loc)
        return
    if not isinstance(obj.type, Array):
        t.check_defined(obj, op.loc)
        if isinstance(obj.type, PyObject) and is_frozen_array(obj.type.value):
            raise TypingError(
                "cannot assign into a global NumPy array: kernels read global and closure "
                "arrays as constants, frozen when the kernel is compiled",
                op.loc,
                hint="pass the array as a kernel argument to write into it",
            )
        what = (
            "tuples are immutable"
            if isinstance(obj.type, Tuple)
            else f"cannot assign into a value of type {describe(obj.type)}"
        )
        raise TypingError(what, op.loc)
    t.check_writable(obj, op.loc, "cannot assign into")
    if slice_store.is_slice_store(obj.type, idx):  # a[:] = v, m[i] = row
        slice_store.store(t, obj, idx, val, op.loc)
        return
    index = array_index(t, obj.type, idx, op.loc)
    if isinstance(obj.type.dtype, CharSeq) and val.type != obj.type.dtype:  # a[i] = "abc"
        ref = t.emit(GetItem(loc=op.loc, result=t.fresh(obj.type.dtype), obj=obj, index=index))
        records.store_chars(t, ref, val, op.loc)
        return
    if isinstance(obj.type.dtype, (Record, CharSeq)):  # a[i] = r: the bytes are copied
        if library_types(val.type, obj.type.dtype):  # into a library's type: its casts
            val = t.cast(val, obj.type.dtype, op.loc)
        if val.type != obj.type.dtype:
            t.check_defined(val, op.loc)
            raise TypingError(
                f"cannot store {describe(val.type)} into an array of records "
                f"of another type ({obj.type.dtype})",
                op.loc,
            )
        t.emit(SetItem(loc=op.loc, obj=obj, index=index, value=val))
        return
    val = optional.unwrap(t, val, op.loc)  # an optional result: the number it holds
    t.scalar(val, op.loc, f"storing into an array of {obj.type.dtype}")
    # Stores convert to the element type, as numba's setitem does.
    value = t.cast(val, obj.type.dtype, op.loc)
    t.emit(SetItem(loc=op.loc, obj=obj, index=index, value=value))


def type_setattr(t: Typer, op: SetAttr) -> None:
    obj, val = t.value(op.obj), t.value(op.value)
    if not isinstance(obj.type, Record):
        t.check_defined(obj, op.loc)
        raise UnsupportedError(
            f"assigning to an attribute of {describe(obj.type)} is not "
            "supported in kernels (only a record's fields)",
            op.loc,
        )
    records.set_field(t, obj, op.name, val, op.loc)


def type_build_tuple(t: Typer, op: BuildTuple) -> None:
    items = tuple(t.value(v) for v in op.items)
    _build(t, op.loc, Value(op.result.id, Tuple(tuple(v.type for v in items))), items)


def _build(t: Typer, loc: Loc, result: Value, items: tuple[Value, ...]) -> Value:
    out = t.emit(BuildTuple(loc=loc, result=result, items=items))
    t.tuple_items[result.id] = items
    values = [t.const_value(v, default=t) for v in items]
    if all(v is not t for v in values):  # every item known: shapes like (TPB, TPB)
        t.consts[result.id] = tuple(values)
    return out


def namedtuple_constructor(cls: type):
    """The rule for ``Point(x, y=2)`` in a kernel: a BuildTuple typed by the class and
    the values.  Items keep their own types (a ``typing.NamedTuple``'s annotations
    convert nothing, as in numba); fields with defaults may be left out."""
    fields, defaults = cls._fields, getattr(cls, "_field_defaults", {})

    def rule(t: Typer, site: CallSite) -> Value:
        site.name = cls.__name__  # Point(), not f.<locals>.Point()
        site.expect(sum(f not in defaults for f in fields), len(fields), keywords=fields)
        items = []
        for i, f in enumerate(fields):
            if f in defaults and i >= len(site.args) and f not in site.kwargs:
                items.append(t.const(defaults[f], site.loc))
            else:
                items.append(site.arg(i, f))
        for f, v in zip(fields, items, strict=True):
            if not isinstance(v.type, (Scalar, Array, Tuple)):
                raise TypingError(
                    f"{cls.__name__} field '{f}' cannot hold {describe(v.type)}", site.loc
                )
        types = tuple(v.type for v in items)
        return _build(t, site.loc, site.result(NamedTuple(types, cls)), tuple(items))

    return rule


def _emit_tuple_get(t: Typer, op, tup: Value, i: int) -> None:
    item_t = tup.type.items[i]
    t.emit(TupleGet(loc=op.loc, result=Value(op.result.id, item_t), tuple=tup, index=i))
    known = t.consts.get(tup.id)
    if known is not None:
        t.consts[op.result.id] = known[i]


def type_tuple_get(t: Typer, op: TupleGet) -> None:
    tup = t.value(op.tuple)
    if isinstance(tup.type, PyObject) and isinstance(tup.type.value, tuple):
        t.const(tup.type.value[op.index], op.loc, result=op.result)
        return
    if not isinstance(tup.type, Tuple):
        t.check_defined(tup, op.loc)
        raise TypingError(f"cannot unpack a value of type {describe(tup.type)}", op.loc)
    n = len(tup.type.items)
    if not -n <= op.index < n:
        raise TypingError(
            f"too many names to unpack: the tuple has only {n} item{'s' if n != 1 else ''}", op.loc
        )
    _emit_tuple_get(t, op, tup, op.index % n)


def type_get_iter(t: Typer, op: GetIter) -> None:
    obj = t.value(op.obj)
    if not isinstance(obj.type, RangeType):
        if isinstance(obj.type, (Array, Tuple)):  # arrays, tuples, zip(), enumerate()
            iteration.get_iter(t, obj, op.loc, op.result)
            return
        t.check_defined(obj, op.loc)
        raise UnsupportedError(
            f"for loops over {describe(obj.type)} are not supported; loop over range(...)", op.loc
        )
    t.emit(GetIter(loc=op.loc, result=Value(op.result.id, RangeIter(int64)), obj=obj))


_ITER_RESULTS = {IterValid: boolean, IterValue: int64, IterNext: RangeIter(int64)}


def type_iter_step(t: Typer, op) -> None:
    it = t.value(op.iter)
    if isinstance(it.type, iteration.SeqIter):
        iteration.iter_step(t, op, it)
        return
    if not isinstance(it.type, RangeIter):
        raise TypingError(f"not a range iterator: {describe(it.type)}", op.loc)
    t.emit(type(op)(loc=op.loc, result=Value(op.result.id, _ITER_RESULTS[type(op)]), iter=it))
