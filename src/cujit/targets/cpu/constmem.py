"""``cuda.const.array_like`` on the CPU target: a private constant global holding the
array's bytes (the host has no constant memory; read-only data serves).  Identical
tables of one module share a global."""

from __future__ import annotations

import hashlib

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import c_strides, make_array
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I8, i64, memory_type
from cujit.types import Array

CONST_ALIGN = 16  # bytes, as on the GPU target


def lower_const_array_like(ctx: FunctionLowering, op: ir.Intrinsic, args):
    t: Array = op.result.type
    shape = tuple(op.attr("shape"))
    data = bytes(op.attr("data"))
    name = f"__cujit_const_{hashlib.sha1(data).hexdigest()[:16]}_{len(data)}"
    gv = ctx.module.globals.get(name)
    if gv is None:
        gv = ll.GlobalVariable(ctx.module, ll.ArrayType(I8, len(data)), name)
        gv.linkage = "private"
        gv.global_constant = True
        gv.initializer = ll.Constant(gv.value_type, bytearray(data))
        gv.align = CONST_ALIGN
    ptr = ctx.builder.bitcast(gv, ll.PointerType(memory_type(t.dtype)))
    return make_array(ctx, t, ptr, [i64(n) for n in shape], c_strides(t, shape))
