"""Calls: untyped ``Call`` from bytecode, and ``Intrinsic`` once type inference
has resolved the callee to an entry of the target's intrinsic table."""

from __future__ import annotations

from dataclasses import dataclass

from cujit.ir.core import Op, Value


@dataclass(frozen=True, kw_only=True)
class Call(Op):
    """``func(*args, **kwargs)``; ``kwargs`` is a tuple of (name, value) pairs."""

    result: Value
    func: Value
    args: tuple[Value, ...]
    kwargs: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True, kw_only=True)
class Intrinsic(Op):
    """A resolved operation of the target, named by its intrinsic-table key
    (``"cuda.grid"``, ``"math.sqrt"``, ``"atomic.add"``, ``"shared.array"``...).

    ``attrs`` holds compile-time parameters (a dimension, a shape, a dtype) as a
    tuple of (name, value) pairs.  ``result`` is None for intrinsics used only
    for their effect (``syncthreads``); such ops still define a value of type
    none so that every call has a result.
    """

    result: Value
    name: str
    args: tuple[Value, ...]
    attrs: tuple[tuple[str, object], ...] = ()

    def attr(self, key: str, default=None):
        for k, v in self.attrs:
            if k == key:
                return v
        return default
