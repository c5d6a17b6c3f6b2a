"""Typing of pointers (``types.CPointer(dtype)``): a kernel's pointer argument, a
foreign function's, and ``ffi.from_buffer(array)`` of cffi.

    p[i]        intrinsic pointer.load (p, i)           : dtype
    p[i] = v    intrinsic pointer.store (p, i, v)       (v converted to dtype)
    ffi.from_buffer(a)   intrinsic array.address (a)   : CPointer(a.dtype)
    carray(p, (n, m))    intrinsic pointer.array (p, n, m) {layout='C'} : array(dtype, 2d, C)
    farray(p, shape)     the same in Fortran order (layout 'F')

A pointer is held as its address (``abi``); the element ``i`` places on is
``address + i * itemsize`` (numba's pointer arithmetic, no bounds known).
"""

from __future__ import annotations

from cujit.diagnostics import Loc, TypingError
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, TupleGet, Value
from cujit.types import Array, CPointer, Record, Scalar, Tuple, int64, none, to_type


def is_pointer(v: Value) -> bool:
    return isinstance(v.type, CPointer)


def _index(t, idx: Value, loc: Loc) -> Value:
    if not (isinstance(idx.type, Scalar) and idx.type.kind in "iu"):
        raise TypingError(f"a pointer's index must be an integer, not {describe(idx.type)}", loc)
    return t.cast(idx, int64, loc)


def _element(p: Value, loc: Loc) -> Scalar:
    dtype = p.type.dtype
    if not isinstance(dtype, Scalar) or dtype.kind in "cMm":
        raise TypingError(f"cannot read or write the elements of {p.type} in kernels", loc)
    return dtype


def pointer_getitem(t, op, p: Value, idx: Value) -> None:
    """``p[i]``: the element's value."""
    dtype = _element(p, op.loc)
    index = _index(t, idx, op.loc)
    t.emit(
        Intrinsic(
            loc=op.loc, result=Value(op.result.id, dtype), name="pointer.load", args=(p, index)
        )
    )


def pointer_setitem(t, op, p: Value, idx: Value, val: Value) -> None:
    """``p[i] = v``."""
    dtype = _element(p, op.loc)
    index = _index(t, idx, op.loc)
    value = t.cast(val, dtype, op.loc)
    t.emit(
        Intrinsic(loc=op.loc, result=t.fresh(none), name="pointer.store", args=(p, index, value))
    )


def is_from_buffer(fn: object) -> bool:
    """Whether ``fn`` is a cffi ``FFI`` object's ``from_buffer`` method."""
    owner = getattr(fn, "__self__", None)
    return getattr(fn, "__name__", None) == "from_buffer" and type(owner).__module__.split(".")[
        0
    ] in ("cffi", "_cffi_backend")


def call_from_buffer(t, site) -> Value:
    """``ffi.from_buffer(a)``: a pointer to ``a``'s first element."""
    if len(site.args) != 1 or site.kwargs or not isinstance(site.args[0].type, Array):
        raise TypingError("ffi.from_buffer() takes one array in kernels", site.loc)
    (a,) = site.args
    result = site.result(CPointer(a.type.dtype))
    return t.emit(Intrinsic(loc=site.loc, result=result, name="array.address", args=(a,)))


# numba's carray/farray, by module and name: cujit's own (numba.cuda.np.numpy_support
# under the drop-in) and numba's (numba.carray), recognised without importing numba.
_CFARRAY_MODULES = ("cujit.cuda.np.numpy_support", "numba.np.numpy_support")
_CFARRAY_LAYOUTS = {"carray": "C", "farray": "F"}


def cfarray_layout(fn: object) -> str | None:
    """'C' for ``carray``, 'F' for ``farray``, None for anything else."""
    if getattr(fn, "__module__", None) not in _CFARRAY_MODULES:
        return None
    return _CFARRAY_LAYOUTS.get(getattr(fn, "__qualname__", None))


def _cfarray_dtype(t, site, name: str, p: Value):
    """The element type: the pointer's, or ``dtype=`` (which must then agree with it)."""
    spec = site.arg(2, "dtype", None)
    value = t.const_value(spec) if spec is not None else None
    pointed = p.type.dtype if p.type.dtype != none else None
    if value is None:
        if pointed is None:
            raise TypingError(f"{name}() of a void pointer needs an explicit dtype", site.loc)
        return pointed
    try:
        dtype = to_type(value)
    except TypeError:
        dtype = None
    if not isinstance(dtype, (Scalar, Record)):
        raise TypingError(f"{name}(): invalid dtype {describe(spec.type)}", site.loc)
    if pointed is not None and dtype != pointed:
        raise TypingError(f"{name}(): dtype {dtype} does not match {p.type}", site.loc)
    return dtype


def _cfarray_extents(t, site, name: str) -> list[Value]:
    shape = site.arg(1, "shape")
    if isinstance(shape.type, Tuple):
        items = [
            t.emit(TupleGet(loc=site.loc, result=t.fresh(it), tuple=shape, index=k))
            for k, it in enumerate(shape.type.items)
        ]
    else:
        items = [shape]
    if not items:
        raise TypingError(f"{name}() needs a shape of one or more extents", site.loc)
    return [t.integer(v, site.loc, f"{name}()'s shape") for v in items]


def cfarray_rule(layout: str):
    """``carray(ptr, shape, dtype=None)`` / ``farray``: an array of ``shape`` over the
    memory the pointer names, contiguous in C (F) order, as numba's."""
    name = "carray" if layout == "C" else "farray"

    def rule(t, site) -> Value:
        site.expect(2, 3, keywords=("ptr", "shape", "dtype"))
        p = site.arg(0, "ptr")
        if not is_pointer(p):
            raise TypingError(f"{name}() needs a pointer, not {describe(p.type)}", site.loc)
        dtype = _cfarray_dtype(t, site, name, p)
        dims = _cfarray_extents(t, site, name)
        result = site.result(Array(dtype, len(dims), layout))
        return t.emit(
            Intrinsic(
                loc=site.loc,
                result=result,
                name="pointer.array",
                args=(p, *dims),
                attrs=(("layout", layout),),
            )
        )

    return rule


def pointer_rules(fn: object):
    """The call rule of a callable that makes or reads pointers (cffi's
    ``from_buffer``, numba's ``carray``/``farray``), or None."""
    if is_from_buffer(fn):
        return call_from_buffer
    layout = cfarray_layout(fn)
    return cfarray_rule(layout) if layout is not None else None
