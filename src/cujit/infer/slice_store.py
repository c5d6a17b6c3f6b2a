"""Stores into a slice of an array: ``a[:] = 0``, ``a[1:3] = b``, ``m[i] = row``.

The indexed part is the view ``slicing.array_slice`` gives; the store is a call of a
device function generated per number of dimensions that fills it from a number (the
value converted to the element type, as numba's setitem does) or copies an array of
the view's shape into it element by element::

    def fill_2d(dst, v):                    # dst[...] = v for a 2-d view
        for i0 in range(dst.shape[0]):
            for i1 in range(dst.shape[1]):
                dst[i0, i1] = v

A source of another shape raises ValueError at run time, as NumPy's broadcast would
for shapes it cannot broadcast (cujit broadcasts a number only).
"""

from __future__ import annotations

import functools
import linecache

from cujit.diagnostics import Loc, TypingError
from cujit.infer import slicing
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import Call, Value
from cujit.types import Array, Scalar, none


def is_slice_store(arr: Array, idx: Value) -> bool:
    """Whether ``arr[idx] = v`` stores into a view (a slice, or fewer indices)."""
    return slicing.is_view_index(arr, idx)


def store(t: Typer, obj: Value, idx: Value, val: Value, loc: Loc) -> None:
    """``obj[idx] = val`` where ``obj[idx]`` is a view of ``obj``."""
    from cujit.infer.calls import CallSite
    from cujit.infer.function_calls import call_device_function

    view = slicing.array_slice(t, obj, idx, loc, t.fresh(obj.type))
    vt = view.type
    if isinstance(val.type, Array):
        if val.type.ndim != vt.ndim:
            raise TypingError(
                f"cannot store a {val.type.ndim}-d array into a {vt.ndim}-d slice", loc
            )
        devfn = _generated(vt.ndim, "copy")
    elif isinstance(val.type, Scalar):
        t.scalar(val, loc, f"storing into an array of {vt.dtype}")
        val = t.cast(val, vt.dtype, loc)
        devfn = _generated(vt.ndim, "fill")
    else:
        t.check_defined(val, loc)
        raise TypingError(f"cannot store {describe(val.type)} into a slice of an array", loc)
    op = Call(loc=loc, result=t.fresh(none), func=view, args=(view, val))
    call_device_function(t, op, devfn, CallSite(op, devfn.__name__, [view, val], {}))


@functools.cache
def _generated(ndim: int, kind: str):
    """The device function that fills (``kind`` "fill") or copies into an ``ndim``-d view."""
    from cujit.device_function import DeviceFunction

    index = ", ".join(f"i{d}" for d in range(ndim)) or "()"
    name = f"{kind}_{ndim}d"
    lines = [f"def {name}(dst, v):"]
    if kind == "copy":
        for d in range(ndim):
            lines.append(f"    if v.shape[{d}] != dst.shape[{d}]:")
            lines.append(
                "        raise ValueError('cannot assign an array of another shape to a slice')"
            )
    for d in range(ndim):
        lines.append("    " * (d + 1) + f"for i{d} in range(dst.shape[{d}]):")
    source = "v" if kind == "fill" else f"v[{index}]"
    lines.append("    " * (ndim + 1) + f"dst[{index}] = {source}")
    text = "\n".join(lines) + "\n"
    filename = f"<cujit {kind} into a {ndim}-d slice>"
    # Messages about the generated body show its lines, as for a user's file.
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace: dict = {}
    exec(compile(text, filename, "exec"), namespace)
    return DeviceFunction(namespace[name])
