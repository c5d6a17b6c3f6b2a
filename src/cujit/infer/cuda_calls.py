"""Typing rules for the ``cuda.*`` device functions (``cujit.device_api``).

Their compile-time parameters (``grid``'s ndim, an array's shape and dtype)
must be constants: they become ``attrs`` of the intrinsic, not values.

    %5 = call %4(16, %3)          # cuda.shared.array(16, float32)
  becomes
    %5: array(float32, 1d, C) = intrinsic shared.array () {shape=(16,), dtype=type float32}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer.access import array_index
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, Value
from cujit.types import (
    Array, Scalar, Tuple, float32, float64, int32, int64, none, to_type, uint32, uint64,
)

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

# PTX has atom.add for these element types (PTX ISA, "atom" instruction).
ATOMIC_ADD_TYPES = (int32, int64, uint32, uint64, float32, float64)


def grid(name: str):
    """``cuda.grid(ndim)`` / ``cuda.gridsize(ndim)``: int64, or a tuple for 2-3 dims."""
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1, keywords=("ndim",))
        ndim = t.const_value(site.arg(0, "ndim"))
        if not isinstance(ndim, int) or isinstance(ndim, bool) or ndim not in (1, 2, 3):
            raise TypingError(f"{name}(ndim) needs ndim to be a constant 1, 2 or 3", site.loc)
        rt = int64 if ndim == 1 else Tuple((int64,) * ndim)
        return t.emit(Intrinsic(loc=site.loc, result=site.result(rt), name=name, args=(),
                                attrs=(("ndim", ndim),)))
    return rule


def call_syncthreads(t: Typer, site: CallSite) -> Value:
    site.expect(0, 0)
    return t.emit(Intrinsic(loc=site.loc, result=site.result(none), name="cuda.syncthreads",
                            args=()))


def _shape(t: Typer, site: CallSite, name: str) -> tuple[int, ...]:
    shape = t.const_value(site.arg(0, "shape"), default=None)
    dims = shape if isinstance(shape, tuple) else (shape,)
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise TypingError(f"the shape of cuda.{name} must be a constant integer or a tuple "
                          "of constant integers", site.loc)
    if any(d < 0 for d in dims):
        raise TypingError(f"the shape of cuda.{name} must not be negative: {shape}", site.loc)
    if 0 in dims and not (name == "shared.array" and dims == (0,)):
        # (0,) is dynamic shared memory, sized by the launch; nothing else may be empty.
        raise TypingError(f"cuda.{name} cannot have an empty dimension: {shape}", site.loc)
    return tuple(dims)


def _dtype(t: Typer, site: CallSite, name: str) -> Scalar:
    spec = t.const_value(site.arg(1, "dtype"), default=None)
    try:
        dtype = to_type(spec) if spec is not None else None
    except TypeError:
        dtype = None
    if not isinstance(dtype, Scalar):
        raise TypingError(f"the dtype of cuda.{name} must be a constant scalar type such as "
                          f"float32 or np.int32, not {describe(site.arg(1, 'dtype').type)}",
                          site.loc)
    return dtype


def array_alloc(name: str):
    """``cuda.shared.array(shape, dtype)`` and ``cuda.local.array(shape, dtype)``."""
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 2, keywords=("shape", "dtype"))
        shape, dtype = _shape(t, site, name), _dtype(t, site, name)
        return t.emit(Intrinsic(loc=site.loc, result=site.result(Array(dtype, len(shape), "C")),
                                name=name, args=(), attrs=(("shape", shape), ("dtype", dtype))))
    return rule


def call_atomic_add(t: Typer, site: CallSite) -> Value:
    site.expect(3, 3, keywords=("ary", "idx", "val"))
    ary, idx, val = site.arg(0, "ary"), site.arg(1, "idx"), site.arg(2, "val")
    if not isinstance(ary.type, Array):
        raise TypingError(f"cuda.atomic.add needs an array, not {describe(ary.type)}", site.loc)
    dtype = ary.type.dtype
    if dtype not in ATOMIC_ADD_TYPES:
        raise TypingError(f"cuda.atomic.add does not support arrays of {dtype} (supported: "
                          + ", ".join(map(str, ATOMIC_ADD_TYPES)) + ")", site.loc)
    index = array_index(t, ary.type, idx, site.loc)
    t.scalar(val, site.loc, "cuda.atomic.add's value")
    value = t.cast(val, dtype, site.loc)
    return t.emit(Intrinsic(loc=site.loc, result=site.result(dtype), name="atomic.add",
                            args=(ary, index, value)))
