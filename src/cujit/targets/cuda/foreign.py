"""Stage 6 for ``foreign.call`` (``cuda.declare_device``): a call of the declared symbol,
declared in the kernel's module as its ABI says (``codegen/entry.py`` for both ABIs):

    C ABI:      %r = call float @mul(float %a, float %b)
    numba ABI:  %s = call i32 @mul(float* %slot, float %a, float %b)   ; %r = load %slot

nvJitLink resolves the symbol against the linked files (``cujit.linking``).
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.entry import abi_type, from_abi, to_abi
from cujit.codegen.lltypes import I8, I32, VOID


def lower_foreign_call(ctx: FunctionLowering, op: ir.Intrinsic, args):
    symbol, abi = op.attr("symbol"), op.attr("abi")
    want, ret = op.attr("args"), op.attr("return")
    params = [abi_type(t, f"argument {k + 1} of '{symbol}'", op.loc) for k, t in enumerate(want)]
    rty = abi_type(ret, f"the result of '{symbol}'", op.loc)
    b = ctx.builder
    values = [to_abi(b, a, t) for a, t in zip(args, want, strict=True)]
    if abi == "c":
        result = b.call(ctx.declare(symbol, rty or VOID, params), values)
        return None if rty is None else from_abi(b, result, ret)
    slot = ctx.alloca(rty or I8, 16, name=f"{symbol}.result")
    b.call(ctx.declare(symbol, I32, [ll.PointerType(rty or I8), *params]), [slot, *values])
    return None if rty is None else from_abi(b, b.load(slot), ret)
