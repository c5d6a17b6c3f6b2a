"""Device functions: each typed callee of a kernel (``Function.callees``) becomes an
internal function of the kernel's LLVM module, lowered when first called.

    %v16 = call double @cujit.dev.add_float32_int64(float %v14, i64 %v15)
    define internal double @cujit.dev.add_float32_int64(float %a, i64 %b) { ... }

A callee takes the IR values themselves (an array is its struct, a bool an ``i1``)
and returns its value (``void`` when it returns nothing): an internal function
needs no ABI.  Targets whose device code reads hidden parameters (the CPU target's
thread state) name them in ``Target.callee_hidden_params``, a prefix of the
kernel's own ``hidden_params``: every call forwards the caller's first ones.

The functions are ``internal`` and not ``noinline``: LLVM on the host and NVVM on
the GPU inline them where that pays (a function called once always is), and at
``-O0`` they stay real calls.  The symbol prefix keeps a device function named
``sin`` from capturing the C library's ``sin`` on the host.  A function that two
callers reach is lowered once: entries are keyed by the typed function object,
which ``cujit.device_function`` shares between compilations with the same options.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen import checks, debuginfo
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import RECORD_POINTER, VOID, value_type
from cujit.codegen.target import Target
from cujit.types import Record


def callee_symbol(fn: ir.Function) -> str:
    """A readable name: ``add(float32, int64)`` -> ``cujit.dev.add_float32_int64``.  The
    dot before the function's name sets it apart from a longer name ending the same way
    (``set_zero`` and ``call_set_zero``); the PTX backend turns it into ``_$_``."""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", fn.name).strip("_") or "function"
    return f"cujit.dev.{stem}"


class DeviceFunctions:
    """The device functions of one LLVM module, made on first use."""

    def __init__(
        self, module: ll.Module, target: Target, lower_body: Callable[[FunctionLowering], None]
    ):
        self.module = module
        self.target = target
        self._lower_body = lower_body  # module.lower_body (passed in: no import cycle)
        self._made: dict[int, tuple[ir.Function, ll.Function]] = {}

    def get(self, fn: ir.Function) -> ll.Function:
        """The LLVM function for typed callee ``fn``, lowered on first request."""
        made = self._made.get(id(fn))
        if made is not None:
            return made[1]
        hidden = list(self.target.callee_hidden_params)
        params = [ty for _, ty in hidden]
        for p in fn.args:
            lt = value_type(p.type)
            if lt is None:
                raise AssertionError(f"{fn.name}: argument %{p.id} has no machine form")
            params.append(lt)
        ret = _returned_struct(fn.return_type) or value_type(fn.return_type) or VOID
        name = self.module.get_unique_name(callee_symbol(fn))
        llfn = ll.Function(self.module, ll.FunctionType(ret, params), name)
        llfn.linkage = "internal"
        llfn.attributes.add("nounwind")
        if fn.forceinline:  # jit(forceinline=True): LLVM/NVVM must inline every call
            llfn.attributes.add("alwaysinline")
        # Entered before lowering the body: a function is lowered once.
        self._made[id(fn)] = (fn, llfn)
        for arg, (n, _) in zip(llfn.args, hidden, strict=False):  # the hidden ones come first
            arg.name = n
        ctx = FunctionLowering(fn, self.target, self.module, llfn, self, kernel=False)
        debuginfo.begin_function(ctx, fn.name, fn.loc, tuple(p.type for p in fn.args))
        for p, arg, n in zip(fn.args, llfn.args[len(hidden) :], fn.arg_names, strict=True):
            arg.name = n
            ctx.set(p, arg)
        debuginfo.describe_params(ctx, fn.args)
        self._lower_body(ctx)
        return llfn


def _returned_struct(t) -> ll.Type | None:
    """A library's struct-model value is returned by value, as the struct of its
    members: its Record reference in the callee may be the callee's own stack slot."""
    if isinstance(t, Record) and t.origin is not None:
        from cujit.codegen.struct_proxy import struct_type

        return struct_type(t.origin)[0]
    return None


def lower_call_function(ctx: FunctionLowering, op: ir.CallFunction) -> None:
    """``callfunction``: call the callee, forwarding the target's hidden parameters."""
    callee = ctx.functions.get(ctx.fn.callee(op.callee))
    hidden = list(ctx.llfn.args[: len(ctx.target.callee_hidden_params)])
    result = ctx.builder.call(callee, hidden + [ctx.get(a) for a in op.args])
    if _returned_struct(op.result.type) is not None:  # into the caller's own slot
        with ctx.builder.goto_entry_block():
            slot = ctx.builder.alloca(result.type)
        ctx.builder.store(result, slot)
        result = ctx.builder.bitcast(slot, RECORD_POINTER)
    ctx.set(
        op.result, None if isinstance(callee.function_type.return_type, ll.VoidType) else result
    )
    checks.after_call(ctx)  # debug mode: leave too if the callee failed


def lower_device_return(ctx: FunctionLowering, term: ir.Terminator) -> None:
    """A device function's ``return`` (or ``raise``: like a kernel's, it is not
    reported; the function returns, an undefined value if it has one)."""
    b = ctx.builder
    ret = ctx.llfn.function_type.return_type
    if isinstance(ret, ll.VoidType):
        b.ret_void()
    elif isinstance(term, ir.Return) and term.value is not None:
        value = ctx.get(term.value)
        if isinstance(ret, ll.LiteralStructType) and value.type == RECORD_POINTER:
            value = b.load(b.bitcast(value, ret.as_pointer()))  # an extension value
        b.ret(value)
    else:
        b.ret(ll.Constant(ret, ll.Undefined))
