"""Lowering of ``libdevice.<name>`` intrinsics, shared by the targets.

``call_with_outputs`` calls a C function with libdevice's prototype: the pointer
outputs get stack slots in the entry block, and the call's values are the C result
followed by what the callee stored.  ``libdevice_lowerings`` turns a target's
``implement(ctx, fn, args) -> [result, *outputs]`` into intrinsic-table entries, each
packing several values into the tuple the Python call returns.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import build_struct
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import scalar_type
from cujit.libdevice import FUNCTIONS, LibdeviceFunction

Implement = Callable[[FunctionLowering, LibdeviceFunction, list], list]


def call_with_outputs(
    ctx: FunctionLowering, fn: LibdeviceFunction, symbol: str, args: list[ll.Value]
) -> list[ll.Value]:
    """``symbol(*args, *outs)`` with libdevice's prototype: [C result, *outputs]."""
    slots = [
        ctx.alloca(scalar_type(t), align=t.itemsize, name=f"{fn.name}.out{k}")
        for k, t in enumerate(fn.outs)
    ]
    params, values, it_args, it_slots = [], [], iter(args), iter(slots)
    for k in range(len(fn.args) + len(fn.outs)):
        value = next(it_slots) if k in fn.out_positions else next(it_args)
        params.append(value.type)
        values.append(value)
    ret = scalar_type(fn.result) if fn.result is not None else ll.VoidType()
    callee = ctx.declare(symbol, ret, params)
    result = ctx.builder.call(callee, values)
    loaded = [ctx.builder.load(s) for s in slots]
    return ([result] if fn.result is not None else []) + loaded


def libdevice_lowerings(implement: Implement) -> dict[str, Callable]:
    """One intrinsic-table entry per libdevice function, lowered by ``implement``."""

    def lower(ctx: FunctionLowering, op: ir.Intrinsic, args):
        fn = FUNCTIONS[op.name.split(".", 1)[1]]
        values = implement(ctx, fn, list(args))
        return values[0] if len(values) == 1 else build_struct(ctx, fn.returns, values)

    return {f"libdevice.{name}": lower for name in FUNCTIONS}


def lower_nv(ctx: FunctionLowering, fn: LibdeviceFunction, args: list) -> list:
    """The CUDA target's: a call of libdevice's own function (stage 7 links libdevice)."""
    return call_with_outputs(ctx, fn, fn.symbol, args)


__all__ = ["call_with_outputs", "libdevice_lowerings", "lower_nv"]
