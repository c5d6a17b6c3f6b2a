"""Array methods that make another array in a kernel: ``a.reshape(...)``, ``a.view(dtype)``
(both views of the same data) and ``a.copy()`` of a global array.

``reshape`` and ``view`` take a contiguous array (numba refuses the others) and give
a C-contiguous ``array.view`` of its data: ``reshape`` with the given extents (one
may be ``-1``: what the size leaves), ``view`` with the element type replaced and
the last extent scaled by the ratio of the item sizes.  ``copy`` of a global or
closure NumPy array (its shape is a constant) is a local array filled from the
frozen table by a generated device function; a kernel cannot allocate a copy of an
argument, whose shape is known only at run time.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError, UnsupportedError
from cujit.infer.context import Typer
from cujit.infer.cuda_calls import constant_array, is_frozen_array
from cujit.infer.numeric import describe
from cujit.ir import BinOp, Cast, Compare, Intrinsic, TupleGet, Value
from cujit.types import Array, PyObject, Scalar, Tuple, boolean, from_dtype, int64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def _array(t: Typer, v: Value, site: CallSite, what: str) -> Value:
    if isinstance(v.type, PyObject) and is_frozen_array(v.type.value):
        v = constant_array(t, v.type.value, site.loc, t.fresh, "a global array")
    if not isinstance(v.type, Array) or not isinstance(v.type.dtype, Scalar):
        raise TypingError(f"{what} needs an array of numbers, not {describe(v.type)}", site.loc)
    return v


def _contiguous(a: Value, site: CallSite, what: str) -> None:
    # a 1-d layout-'A' array is a slice a[i:j], contiguous where its step is 1
    if a.type.layout != "C" and not (a.type.layout == "A" and a.type.ndim == 1):
        raise UnsupportedError(f"{what} of a non-contiguous array is not supported", site.loc)


def _binop(t: Typer, op: str, a: Value, b: Value, loc) -> Value:
    return t.emit(BinOp(loc=loc, result=t.fresh(int64), op=op, lhs=a, rhs=b))


def _shape(t: Typer, a: Value, loc) -> list[Value]:
    shape = t.emit(
        Intrinsic(
            loc=loc, result=t.fresh(Tuple((int64,) * a.type.ndim)), name="array.shape", args=(a,)
        )
    )
    return [
        t.emit(TupleGet(loc=loc, result=t.fresh(int64), tuple=shape, index=k))
        for k in range(a.type.ndim)
    ]


def contiguous_view(t: Typer, a: Value, dtype, dims: list[Value], site: CallSite) -> Value:
    result = site.result(Array(dtype, len(dims), "C"))
    return t.emit(Intrinsic(loc=site.loc, result=result, name="array.view", args=(a, *dims)))


def _dims(t: Typer, site: CallSite) -> list[Value]:
    """reshape's extents: given one by one or as one tuple."""
    args = site.args[1:]
    if len(args) == 1 and isinstance(t.const_value(args[0]), tuple):  # reshape((2, -1))
        args = [t.const(n, site.loc) for n in t.const_value(args[0])]
    elif len(args) == 1 and isinstance(args[0].type, Tuple):
        tup = args[0]
        args = [
            t.emit(TupleGet(loc=site.loc, result=t.fresh(it), tuple=tup, index=i))
            for i, it in enumerate(tup.type.items)
        ]
    return [t.integer(v, site.loc, "a reshape() extent") for v in args]


def call_reshape(t: Typer, site: CallSite) -> Value:
    """``a.reshape(n0, n1...)`` / ``np.reshape(a, shape)``."""
    if site.kwargs or len(site.args) < 2:
        raise TypingError("reshape() takes the new extents, as numbers or one tuple", site.loc)
    a = _array(t, site.args[0], site, "reshape()")
    _contiguous(a, site, "reshape()")
    dims = _dims(t, site)
    unknown = [k for k, v in enumerate(dims) if t.const_value(v) == -1]
    if len(unknown) > 1:
        raise TypingError("reshape() can infer only one extent (-1)", site.loc)
    if unknown:  # -1: the size over the product of the other extents
        size = t.emit(Intrinsic(loc=site.loc, result=t.fresh(int64), name="array.size", args=(a,)))
        rest = t.const(1, site.loc)
        for k, v in enumerate(dims):
            if k != unknown[0]:
                rest = _binop(t, "*", rest, v, site.loc)
        dims[unknown[0]] = _binop(t, "//", size, rest, site.loc)
    elif any(t.const_value(v) is None for v in dims):
        dims = _run_time_unknown(t, a, dims, site.loc)
    return contiguous_view(t, a, a.type.dtype, dims, site)


def _run_time_unknown(t: Typer, a: Value, dims: list[Value], loc) -> list[Value]:
    """Extents known only at run time, one of which may be -1 (numba resolves it then):
    with m = (d == -1) as 0 or 1 for each extent d, the -1 becomes size // P, where P is
    the product of the extents with each -1 counted as 1; the others stay as they are."""
    size = t.emit(Intrinsic(loc=loc, result=t.fresh(int64), name="array.size", args=(a,)))
    minus_one, two = t.const(-1, loc), t.const(2, loc)
    marks = []
    for d in dims:
        is_unknown = t.emit(
            Compare(loc=loc, result=t.fresh(boolean), op="==", lhs=d, rhs=minus_one)
        )
        marks.append(t.emit(Cast(loc=loc, result=t.fresh(int64), operand=is_unknown)))
    product = t.const(1, loc)
    for d, m in zip(dims, marks, strict=True):
        product = _binop(t, "*", product, _binop(t, "+", d, _binop(t, "*", m, two, loc), loc), loc)
    # max(P, 1): a zero extent beside the -1 leaves nothing to divide by (the view is empty)
    product = t.emit(
        Intrinsic(loc=loc, result=t.fresh(int64), name="max", args=(product, t.const(1, loc)))
    )
    fill = _binop(t, "+", _binop(t, "//", size, product, loc), t.const(1, loc), loc)
    return [
        _binop(t, "+", d, _binop(t, "*", m, fill, loc), loc)
        for d, m in zip(dims, marks, strict=True)
    ]


def call_view(t: Typer, site: CallSite) -> Value:
    """``a.view(dtype)``: the same bytes read as another element type."""
    site.expect(2, 2)
    a = _array(t, site.args[0], site, "view()")
    _contiguous(a, site, "view()")
    target = t.const_value(site.args[1])
    import numpy as np

    try:
        dtype = from_dtype(np.dtype(target)) if target is not None else None
    except TypeError:
        dtype = None
    if not isinstance(dtype, Scalar):
        raise TypingError(
            f"view() needs a numeric dtype, not {describe(site.args[1].type)}", site.loc
        )
    old, new = a.type.dtype.itemsize, dtype.itemsize
    dims = _shape(t, a, site.loc)
    if old != new:  # the last extent's bytes in the new items
        scaled = _binop(t, "*", dims[-1], t.const(old, site.loc), site.loc)
        dims[-1] = _binop(t, "//", scaled, t.const(new, site.loc), site.loc)
    return contiguous_view(t, a, dtype, dims, site)


def call_copy(t: Typer, site: CallSite) -> Value:
    """``a.copy()`` of a global array: a local array with the frozen contents."""
    from cujit.infer.function_calls import call_device_function

    site.expect(1, 1)
    v = site.args[0]
    if not (isinstance(v.type, PyObject) and is_frozen_array(v.type.value)):
        raise UnsupportedError(
            f"copy() of {describe(v.type)} is not supported in kernels: a kernel cannot "
            "allocate an array whose shape is known only at run time",
            site.loc,
            hint="copy into a cuda.local.array or cuda.shared.array of a constant shape",
        )
    value = v.type.value
    src = constant_array(t, value, site.loc, t.fresh, "a global array")
    dst = t.emit(
        Intrinsic(
            loc=site.loc,
            result=t.fresh(Array(src.type.dtype, value.ndim, "C")),
            name="local.array",
            args=(),
            attrs=(("shape", tuple(value.shape)), ("dtype", src.type.dtype)),
        )
    )
    site.args[:] = [dst, src]
    call_device_function(t, site.op, _copier(value.ndim), site)
    return t.value(site.op.result)


@functools.cache
def _copier(ndim: int):
    """The generated device function that copies an ``ndim``-d array into ``dst``."""
    import linecache

    from cujit.device_function import DeviceFunction

    index = ", ".join(f"i{d}" for d in range(ndim))
    lines = [f"def copy_{ndim}d(dst, src):"]
    for d in range(ndim):
        lines.append("    " * (d + 1) + f"for i{d} in range(src.shape[{d}]):")
    lines.append("    " * (ndim + 1) + f"dst[{index}] = src[{index}]")
    lines.append("    return dst")
    source = "\n".join(lines) + "\n"
    filename = f"<cujit copy of a {ndim}-d array>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    return DeviceFunction(namespace[f"copy_{ndim}d"])


def array_method_rules() -> dict:
    import numpy as np

    return {np.reshape: call_reshape, np.ndarray.view: call_view, np.copy: call_copy}


def method_function(name: str):
    """The callable ``a.<name>(...)`` calls (as the CALLS table keys it), or None."""
    import numpy as np

    return {"reshape": np.reshape, "view": np.ndarray.view, "copy": np.copy}.get(name)
