"""Stage 6 for ``extension.call``: the library's lowering function builds the value.

The function is called as numba calls one, ``impl(context, builder, signature, args)``,
with the function's llvmlite builder and the arguments' LLVM values (a struct-model
argument as the LLVM struct of its members, loaded from its Record's bytes); it
returns the result's LLVM value (None for a void result).  A struct-model result (an
LLVM struct of its members, see ``struct_proxy``) is stored into a stack slot whose
address is the Record reference kernels hold.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import RECORD_POINTER, has_value, value_type
from cujit.diagnostics import CompileError, LoweringError
from cujit.types import Record, Scalar, Type


class LoweringContext:
    """What a lowering function receives as ``context``."""

    def __init__(self, ctx: FunctionLowering, op: ir.Intrinsic) -> None:
        self.target_name = ctx.target.name
        self._ctx, self._op = ctx, op

    def compile_internal(self, builder: ll.IRBuilder, func, sig, args, locals=None):
        """Compile Python function ``func`` for ``sig``'s argument types as a device
        function of this module and call it with ``args``: its result (numba's)."""
        ctx, op = self._ctx, self._op
        typed = op.attr("compiler").typed(func, tuple(sig.args), op.loc)
        if typed.return_type != sig.return_type and has_value(sig.return_type):
            raise LoweringError(
                f"compile_internal: {getattr(func, '__name__', func)} returns "
                f"{typed.return_type}, not {sig.return_type}",
                op.loc,
            )
        return ctx.functions.call(ctx, typed, list(args))

    def cast(self, builder: ll.IRBuilder, value, fromty: Type, toty: Type):
        """``value`` of ``fromty`` converted to ``toty`` (numba's ``context.cast``):
        numbers as kernels convert them, a library's types through its casts."""
        from cujit.codegen.scalars import cast
        from cujit.types.convert import to_type
        from cujit.types.extension_typing import find_cast

        fromty, toty = _front(to_type(fromty)), _front(to_type(toty))
        if fromty == toty:
            return value
        if isinstance(fromty, Scalar) and isinstance(toty, Scalar):
            return cast(self._ctx, fromty, toty, value)
        impl = find_cast(fromty, toty)
        if impl is None:
            raise LoweringError(f"context.cast: no cast from {fromty} to {toty}", self._op.loc)
        return impl(self, builder, fromty, toty, value)

    def get_value_type(self, t: Type) -> ll.Type:
        from cujit.codegen.struct_proxy import struct_type
        from cujit.types.extension import is_extension_type

        if is_extension_type(t):
            return struct_type(t)[0]
        return value_type(t)

    def get_constant(self, t: Type, value) -> ll.Constant:
        return ll.Constant(value_type(t), value)

    def get_dummy_value(self) -> ll.Constant:
        return ll.Constant(ll.IntType(8).as_pointer(), None)


def _front(t: Type) -> Type:
    return t.origin if isinstance(t, Record) and t.origin is not None else t


def _library_value(builder: ll.IRBuilder, t: Type, value):
    """An argument as the library sees it: a struct-model Record as its member struct."""
    from cujit.codegen.struct_proxy import struct_type
    from cujit.types.extension import is_extension_type

    if isinstance(t, Record) and t.origin is not None and is_extension_type(t.origin):
        ty = struct_type(t.origin)[0]
        return builder.load(builder.bitcast(value, ty.as_pointer()))
    return value


def _call(ctx: FunctionLowering, op: ir.Intrinsic, lib_args):
    """The library's implementation called; its own failure is a LoweringError at the
    user's line (a cujit error it raised passes through)."""
    impl, sig = op.attr("impl"), op.attr("signature")
    try:
        return impl(LoweringContext(ctx, op), ctx.builder, sig, lib_args)
    except CompileError:
        raise
    except Exception as exc:
        raise LoweringError(
            f"the library's implementation of this {op.attr('what', 'call')} raised "
            f"{type(exc).__name__}: {exc}",
            op.loc,
        ) from exc


def _expected(t: Type) -> ll.Type:
    """The LLVM type an implementation returns for ``t``: a struct-model type's member
    struct, any other type's value type."""
    from cujit.codegen.struct_proxy import struct_type

    if isinstance(t, Record) and t.origin is not None:
        return struct_type(t.origin)[0]
    return value_type(t)


def lower_extension_call(ctx: FunctionLowering, op: ir.Intrinsic, args):
    sig, what = op.attr("signature"), op.attr("what", "call")
    b = ctx.builder
    lib_args = [_library_value(b, a.type, v) for a, v in zip(op.args, args, strict=True)]
    value = _call(ctx, op, lib_args)
    rt = op.result.type
    if not has_value(rt):
        return None
    if value is None:
        raise LoweringError(
            f"the implementation of this {what} returned None, but its signature returns "
            f"{sig.return_type}: non-void function returns None",
            op.loc,
        )
    expected = _expected(rt)
    if isinstance(getattr(value, "type", None), ll.PointerType) and expected == ll.IntType(64):
        value = b.ptrtoint(value, expected)  # a pointer (CPointer) is held as its address
    if getattr(value, "type", None) != expected:
        raise LoweringError(
            f"the implementation of this {what} returned {_shown(value)}, not a value of "
            f"{sig.return_type} (LLVM type {expected})",
            op.loc,
        )
    if isinstance(rt, Record):
        with b.goto_entry_block():
            slot = b.alloca(value.type)
        b.store(value, slot)
        return b.bitcast(slot, RECORD_POINTER)
    return value


def _shown(value) -> str:
    ty = getattr(value, "type", None)
    return f"a value of LLVM type {ty}" if isinstance(ty, ll.Type) else repr(value)


EXTENSION_INTRINSICS = {
    "extension.call": lower_extension_call,
    "extension.intrinsic": lower_extension_call,
}
