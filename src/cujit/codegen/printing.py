"""``print()``: the ``print`` intrinsic as a C ``printf``-family call.

Inference already made the format string (``attrs['format']``: ``%lld``,
``%llu``, ``%f``, ``%s``; see ``cujit.infer.print_calls``) and widened every
number, so lowering passes the values as they are, except bools, which become
the constant strings ``True``/``False`` for their ``%s``.  Two targets, two
entry points (each target's intrinsic table names its own):

- CUDA: ``vprintf(format, buffer)`` from the CUDA runtime's device library:
  the arguments packed in a local struct, each at its natural alignment (8
  bytes for every type used here), as the "CUDA C++ Programming Guide",
  "Formatted Output" describes; strings live in the constant address space
  (NVVM IR spec, "Address Spaces": 4) and are passed as generic pointers;
- the host: C's variadic ``printf``, then ``fflush(NULL)`` so that the line
  reaches the file descriptor at once (the C library buffers a pipe's output
  until exit, after Python's own writes, and apart from them).
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I8, I32

I8P = ll.PointerType(I8)
CUDA_CONSTANT_ADDRSPACE = 4


def string_constant(ctx: FunctionLowering, text: str, addrspace: int = 0) -> ll.Value:
    """A generic ``i8*`` to a NUL-terminated module constant holding ``text``.

    The global is named after a digest of its bytes, so the kernel and its device
    functions share one global per distinct string."""
    import hashlib  # here: a kernel that prints nothing does not need it

    data = text.encode() + b"\0"
    name = f"cujit_str_{hashlib.sha1(data).hexdigest()[:16]}"
    gv = ctx.module.globals.get(name)
    if gv is None:
        arr = ll.ArrayType(I8, len(data))
        gv = ll.GlobalVariable(ctx.module, arr, name, addrspace)
        gv.global_constant = True
        gv.linkage = "internal"
        gv.initializer = ll.Constant(arr, bytearray(data))
    zero = ll.Constant(I32, 0)
    ptr = gv.gep([zero, zero])
    return ctx.builder.addrspacecast(ptr, I8P) if addrspace else ptr


def _values(ctx: FunctionLowering, op: ir.Intrinsic, args, addrspace: int) -> list[ll.Value]:
    out = []
    for v, a in zip(op.args, args, strict=True):
        if v.type.kind == "b":
            a = ctx.builder.select(
                a, string_constant(ctx, "True", addrspace), string_constant(ctx, "False", addrspace)
            )
        out.append(a)
    return out


def lower_vprintf(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``print`` on the GPU: ``vprintf(format, &{values...})``."""
    b = ctx.builder
    fmt = string_constant(ctx, op.attr("format"), CUDA_CONSTANT_ADDRSPACE)
    values = _values(ctx, op, args, CUDA_CONSTANT_ADDRSPACE)
    if values:
        struct = ll.LiteralStructType([v.type for v in values])
        slot = ctx.alloca(struct, align=8, name=f"print{op.result.id}")
        for k, v in enumerate(values):
            b.store(v, b.gep(slot, [ll.Constant(I32, 0), ll.Constant(I32, k)], inbounds=True))
        buffer = b.bitcast(slot, I8P)
    else:
        buffer = ll.Constant(I8P, None)
    vprintf = ctx.declare("vprintf", I32, [I8P, I8P])
    b.call(vprintf, [fmt, buffer])


def lower_printf(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``print`` on the host: ``printf(format, values...)`` then ``fflush(NULL)``."""
    b = ctx.builder
    printf = ctx.module.globals.get("printf")
    if printf is None:
        printf = ll.Function(ctx.module, ll.FunctionType(I32, [I8P], var_arg=True), "printf")
    b.call(printf, [string_constant(ctx, op.attr("format"))] + _values(ctx, op, args, 0))
    b.call(ctx.declare("fflush", I32, [I8P]), [ll.Constant(I8P, None)])
