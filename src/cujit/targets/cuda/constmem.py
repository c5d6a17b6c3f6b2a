"""``cuda.const.array_like`` on the CUDA target: a constant-memory table.

Each op becomes an internal ``addrspace(4)`` global (NVVM IR spec, "Address Spaces":
4 is constant memory; PTX ``.const``), initialised with the array's bytes, marked
constant.  The array value points at it through a generic pointer (``addrspacecast``),
as shared arrays do; LLVM/NVVM fold the cast back into ``ld.const`` loads.
Identical tables of one module share a global.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import c_strides, make_array
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import i64, memory_type
from cujit.types import Array

CONSTANT_ADDRSPACE = 4
CONST_ALIGN = 16  # bytes: enough for any scalar and for vector loads


def constant_table(module: ll.Module, data: bytes) -> ll.GlobalVariable:
    """The constant-memory global holding ``data`` (one per distinct content)."""
    import hashlib  # here: a kernel without constant arrays does not need it

    name = f"__cujit_const_{hashlib.sha1(data).hexdigest()[:16]}_{len(data)}"
    gv = module.globals.get(name)
    if gv is None:
        gv = ll.GlobalVariable(
            module, ll.ArrayType(ll.IntType(8), len(data)), name, addrspace=CONSTANT_ADDRSPACE
        )
        gv.linkage = "internal"
        gv.global_constant = True
        gv.initializer = ll.Constant(gv.value_type, bytearray(data))
        gv.align = CONST_ALIGN
    return gv


def lower_const_array_like(ctx: FunctionLowering, op: ir.Intrinsic, args):
    t: Array = op.result.type
    shape = tuple(op.attr("shape"))
    elem = memory_type(t.dtype)
    gv = constant_table(ctx.module, bytes(op.attr("data")))
    b = ctx.builder
    local = b.bitcast(gv, ll.PointerType(elem, CONSTANT_ADDRSPACE))
    data = b.addrspacecast(local, ll.PointerType(elem, ctx.target.generic_addrspace))
    return make_array(ctx, t, data, [i64(n) for n in shape], c_strides(t, shape))
