"""Stage 6 for ``extension.call``: the library's lowering function builds the value.

The function is called as numba calls one, ``impl(context, builder, signature, args)``,
with the function's llvmlite builder and the arguments' LLVM values; it returns the
result's LLVM value.  A struct-model result (an LLVM struct of its members, see
``struct_proxy``) is stored into a stack slot whose address is the Record reference
kernels hold.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import RECORD_POINTER, value_type
from cujit.diagnostics import TypingError
from cujit.types import Record, Type


class LoweringContext:
    """What a lowering function receives as ``context``."""

    def __init__(self, target_name: str) -> None:
        self.target_name = target_name

    def get_value_type(self, t: Type) -> ll.Type:
        from cujit.codegen.struct_proxy import struct_type
        from cujit.types.extension import is_extension_type

        if is_extension_type(t):
            return struct_type(t)[0]
        return value_type(t)

    def get_constant(self, t: Type, value) -> ll.Constant:
        return ll.Constant(value_type(t), value)


def lower_extension_call(ctx: FunctionLowering, op: ir.Intrinsic, args):
    impl, sig = op.attr("impl"), op.attr("signature")
    value = impl(LoweringContext(ctx.target.name), ctx.builder, sig, list(args))
    rt = op.result.type
    if isinstance(rt, Record):
        if not isinstance(getattr(value, "type", None), ll.LiteralStructType):
            raise TypingError(
                f"the implementation of this call returned {value!r}, not a value of "
                f"{sig.return_type} (an LLVM struct of its members)",
                op.loc,
            )
        with ctx.builder.goto_entry_block():
            slot = ctx.builder.alloca(value.type)
        ctx.builder.store(value, slot)
        return ctx.builder.bitcast(slot, RECORD_POINTER)
    return value


EXTENSION_INTRINSICS = {"extension.call": lower_extension_call}
