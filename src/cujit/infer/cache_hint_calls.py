"""Typing of the cache-hinted loads and stores: ``cuda.ldca(array, i)`` ...
``cuda.stwt(array, i, value)``.

The array's elements must be integers or floats (8 to 64 bits: what a PTX ``ld``/``st``
moves in one register); the index is as for ``array[i]``; a store converts the
value to the element type.  A pointer (``types.CPointer``) takes one integer index,
the element it places on, as ``p[i]``.  They become the intrinsics ``cache.<name>``:

    %5 = call %4(%1, %2)        # cuda.ldcg(x, i)
  becomes
    %5: float32 = intrinsic cache.ldcg (%1, %2)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.device_api import CACHE_LOADS, CACHE_STORES
from cujit.diagnostics import TypingError
from cujit.infer.access import array_index
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, Value
from cujit.types import Array, CPointer, Scalar, Tuple, int64, none

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def _array(t: Typer, site: CallSite, name: str) -> Value:
    ary = site.arg(0, "array")
    if not isinstance(ary.type, (Array, CPointer)):
        t.check_defined(ary, site.loc)
        raise TypingError(
            f"cuda.{name} operates on arrays or pointers, not {describe(ary.type)}", site.loc
        )
    dt = ary.type.dtype
    if not isinstance(dt, Scalar) or dt.kind not in "iuf" or dt.bits not in (8, 16, 32, 64):
        raise TypingError(
            f"{name} requires array of integer or float type (8 to 64 bits), got {dt}", site.loc
        )
    return ary


def _index(t: Typer, site: CallSite, name: str, ary: Value) -> Value:
    """The index, checked with numba's messages, as ``array[i]`` (``p[i]``) takes it."""
    idx = site.arg(1, "i")
    items = idx.type.items if isinstance(idx.type, Tuple) else (idx.type,)
    if not all(isinstance(it, Scalar) and it.kind in "iu" for it in items):
        raise TypingError(f"{describe(idx.type)} is not a valid index for {name}", site.loc)
    if isinstance(ary.type, CPointer):
        if isinstance(idx.type, Tuple):
            raise TypingError(
                f"{name}: Pointers only support scalar indexing, got tuple of {len(items)}",
                site.loc,
            )
        return t.cast(idx, int64, site.loc)
    ndim = ary.type.ndim
    if isinstance(idx.type, Scalar) and ndim != 1:
        raise TypingError(f"{name}: Expected {ndim} indices, got a scalar", site.loc)
    if isinstance(idx.type, Tuple) and len(items) != ndim:
        raise TypingError(f"{name}: Expected {ndim} indices, got {len(items)}", site.loc)
    return array_index(t, ary.type, idx, site.loc)


def cache_load(name: str):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 2, keywords=("array", "i"))
        ary = _array(t, site, name)
        index = _index(t, site, name, ary)
        return t.emit(
            Intrinsic(
                loc=site.loc,
                result=site.result(ary.type.dtype),
                name=f"cache.{name}",
                args=(ary, index),
            )
        )

    return rule


def cache_store(name: str):
    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(3, 3, keywords=("array", "i", "value"))
        ary = _array(t, site, name)
        if isinstance(ary.type, Array):
            t.check_writable(ary, site.loc, f"cuda.{name} cannot store into")
        index = _index(t, site, name, ary)
        value = site.arg(2, "value")
        t.scalar(value, site.loc, f"cuda.{name}'s value")
        value = t.cast(value, ary.type.dtype, site.loc)
        return t.emit(
            Intrinsic(
                loc=site.loc,
                result=site.result(none),
                name=f"cache.{name}",
                args=(ary, index, value),
            )
        )

    return rule


def cache_hint_rules(api=None) -> dict:
    """The call table's entries for ``api`` (``device_api``, by default)'s placeholders."""
    if api is None:
        from cujit import device_api as api
    return {
        **{getattr(api, n): cache_load(n) for n in CACHE_LOADS},
        **{getattr(api, n): cache_store(n) for n in CACHE_STORES},
    }


__all__ = ["CACHE_LOADS", "CACHE_STORES", "cache_hint_rules"]
