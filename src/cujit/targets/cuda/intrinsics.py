"""The CUDA target's intrinsic table: ``Intrinsic.name`` -> lowering function.

The table (``INTRINSICS``, at the end) is the one place that says what serves each
intrinsic of the typed IR (docs/typed-ir.md).  Target-independent entries come
from ``cujit.codegen.builtins``; the GPU-specific ones are here:

- special registers through ``llvm.nvvm.read.ptx.sreg.*`` (NVVM IR spec,
  "Special Registers"), all ``i32``: ``laneid`` through ``%laneid``; ``warpsize``
  is the constant 32 (PTX ISA, "Special Registers": ``WARP_SZ`` is 32 on every
  architecture so far);
- ``cuda.grid``/``cuda.gridsize`` computed in int64, so grids past 2**31
  threads do not overflow;
- ``syncthreads`` as ``llvm.nvvm.barrier0`` (PTX ``bar.sync 0``), and
  ``syncthreads_count/and/or`` as ``llvm.nvvm.barrier0.popc/and/or`` (PTX
  ``bar.red.popc.u32`` / ``bar.red.and.pred`` / ``bar.red.or.pred``);
- ``threadfence``, ``threadfence_block``, ``threadfence_system`` as
  ``llvm.nvvm.membar.gl/cta/sys`` (PTX ``membar.gl/cta/sys``, "membar/fence");
- shared arrays as ``addrspace(3)`` globals (NVVM IR spec, "Address Spaces"),
  cast to generic pointers for the array value.

The atomics are in ``atomics.py``, the warp-level intrinsics in ``warp.py``, the
grid-wide barrier (``cuda.cg.this_grid().sync()``) in ``cg.py``; the bit and float
intrinsics (``popc``, ``fma``...) are target-neutral (``codegen/bits.py``).
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen import builtins
from cujit.codegen.arrays import c_strides, make_array
from cujit.codegen.bf16 import BF16_INTRINSICS
from cujit.codegen.complex import COMPLEX_INTRINSICS
from cujit.codegen.context import FunctionLowering
from cujit.codegen.fp8 import FP8_INTRINSICS
from cujit.codegen.lltypes import I32, I64, VOID, i64, memory_type
from cujit.codegen.target import LazyTable
from cujit.ir.analysis import SPECIAL_REGISTER_RANGES
from cujit.targets.cuda.atomics import ATOMIC_INTRINSICS
from cujit.types import Array

_SREG_NAMES = {"threadIdx": "tid", "blockIdx": "ctaid", "blockDim": "ntid", "gridDim": "nctaid"}
SHARED_ALIGN = 16  # bytes: enough for any scalar and for 16-byte vector loads
DYNAMIC_SHARED_SYMBOL = "__cujit_dynamic_shared"
WARP_SIZE = 32


# The values each special register can hold (``ir.analysis.SPECIAL_REGISTER_RANGES``),
# by PTX name, as [lo, hi).  Attached to each read as ``!range`` metadata, they tell the
# optimiser an index built from them is never negative, so an index's negative-index
# wrap and sign extensions fold away and its arithmetic may narrow, as it does for CUDA
# C's unsigned built-ins.
def _ptx_name(reg: str) -> str:
    """``threadIdx.x`` -> ``tid.x``; ``laneid`` stays."""
    dim3, _, axis = reg.partition(".")
    return f"{_SREG_NAMES[dim3]}.{axis}" if axis else reg


SREG_RANGES = {
    _ptx_name(reg): (lo, hi + 1)
    for reg, (lo, hi) in SPECIAL_REGISTER_RANGES.items()
    if reg != "warpsize"
}  # warpsize is the constant 32, not a register read


def read_sreg(ctx: FunctionLowering, ptx_name: str, axis: str | None = None) -> ll.Value:
    """The i32 special register ``%<ptx_name>.<axis>`` (or ``%<ptx_name>``), with the
    range of values it can hold."""
    reg = f"{ptx_name}.{axis}" if axis else ptx_name
    f = ctx.declare(f"llvm.nvvm.read.ptx.sreg.{reg}", I32, [], attrs=("nounwind", "readnone"))
    value = ctx.builder.call(f, [])
    lo, hi = SREG_RANGES[reg]
    hi = hi - 2**32 if hi >= 2**31 else hi  # an i32 constant: 2**31 wraps to -2**31
    value.set_metadata(
        "range", ctx.module.add_metadata([ll.Constant(I32, lo), ll.Constant(I32, hi)])
    )
    return value


def lower_sreg(ctx: FunctionLowering, op: ir.Intrinsic, args):
    reg = op.attr("reg")
    if reg == "warpsize":
        return ll.Constant(I32, WARP_SIZE)
    if reg == "laneid":
        return read_sreg(ctx, "laneid")
    dim3, axis = reg.split(".")
    return read_sreg(ctx, _SREG_NAMES[dim3], axis)


lower_grid, lower_gridsize = builtins.grid_lowerings(
    lambda ctx, reg, axis: read_sreg(ctx, _SREG_NAMES[reg], axis)
)


def lower_syncthreads(ctx: FunctionLowering, op: ir.Intrinsic, args):
    f = ctx.declare("llvm.nvvm.barrier0", VOID, [], attrs=("nounwind", "convergent"))
    ctx.builder.call(f, [])


def lower_barrier_reduce(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``syncthreads_count/and/or(pred)``: a block barrier that reduces ``pred``
    (NVVM IR spec, "Barrier and Memory Fence": ``llvm.nvvm.barrier0.popc/and/or``).
    The count is a popcount; ``and``/``or`` give 0 or 1."""
    kind = op.name.rsplit("_", 1)[1]  # count, and, or
    f = ctx.declare(
        f"llvm.nvvm.barrier0.{'popc' if kind == 'count' else kind}",
        I32,
        [I32],
        attrs=("nounwind", "convergent"),
    )
    return ctx.builder.call(f, [ctx.builder.zext(args[0], I32)])


_FENCE_SCOPES = {
    "cuda.threadfence": "gl",
    "cuda.threadfence_block": "cta",
    "cuda.threadfence_system": "sys",
}


def lower_threadfence(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """A memory fence at device (``gl``), block (``cta``) or system scope (PTX ISA,
    "membar/fence": ``membar.gl`` is ``fence.sc.gpu`` on sm_70+)."""
    f = ctx.declare(f"llvm.nvvm.membar.{_FENCE_SCOPES[op.name]}", VOID, [], attrs=("nounwind",))
    ctx.builder.call(f, [])


def lower_nanosleep(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.nanosleep(ns)``: PTX's ``nanosleep.u32`` (PTX ISA 6.3, sm_70+)."""
    asm = ll.InlineAsm(ll.FunctionType(VOID, [I32]), "nanosleep.u32 $0;", "r", side_effect=True)
    ctx.builder.call(asm, [args[0]])


def _dynamic_shared_size(ctx: FunctionLowering) -> ll.Value:
    """``%dynamic_smem_size`` (PTX ISA, "Special Registers"): bytes of dynamic shared
    memory given at launch.  NVVM has no intrinsic for it, so inline PTX reads it."""
    asm = ll.InlineAsm(
        ll.FunctionType(I32, []), "mov.u32 $0, %dynamic_smem_size;", "=r", side_effect=False
    )
    return ctx.builder.zext(ctx.builder.call(asm, []), I64)


def lower_shared_array(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.shared.array(shape, dtype)``.

    A static shape gets a new ``addrspace(3)`` global per op (each call site is
    its own array, as in numba).  ``shape == (0,)`` is dynamic shared memory: one
    external zero-length array shared by every such op of the kernel (they all
    alias, as in CUDA C's ``extern __shared__``), whose extent is the launch's
    dynamic shared size divided by the item size.
    """
    t: Array = op.result.type
    shape = tuple(op.attr("shape"))
    elem = memory_type(t.dtype)
    space = ctx.target.shared_addrspace
    b = ctx.builder
    if shape == (0,):
        gv = ctx.module.globals.get(DYNAMIC_SHARED_SYMBOL)
        if gv is None:
            gv = ll.GlobalVariable(
                ctx.module, ll.ArrayType(ll.IntType(8), 0), DYNAMIC_SHARED_SYMBOL, addrspace=space
            )
            gv.linkage = "external"
            gv.align = SHARED_ALIGN
        extents = [b.udiv(_dynamic_shared_size(ctx), i64(t.dtype.itemsize))]
    else:
        count = 1
        for n in shape:
            count *= n
        gv = ll.GlobalVariable(
            ctx.module,
            ll.ArrayType(elem, count),
            ctx.unique_name("_cudapy_smem_"),  # numba's name for it
            addrspace=space,
        )
        gv.linkage = "internal"
        gv.initializer = ll.Constant(gv.value_type, ll.Undefined)
        gv.align = max(op.attr("alignment") or SHARED_ALIGN, builtins.access_alignment(t.dtype))
        extents = [i64(n) for n in shape]
    local = b.bitcast(gv, ll.PointerType(elem, space))
    data = b.addrspacecast(local, ll.PointerType(elem, ctx.target.generic_addrspace))
    return make_array(ctx, t, data, extents, c_strides(t, shape))


def _rare_lowerings() -> dict:
    """The families most kernels never use, imported with the first of them a kernel
    lowers (``LazyTable``): printing, the grid barrier, constant arrays, the warp
    functions, cache hints, ``cuda.libdevice``, foreign calls, tensor cores."""
    from cujit.codegen import printing
    from cujit.codegen.cache_hints import cache_hint_lowerings, lower_ptx
    from cujit.codegen.libdevice import libdevice_lowerings, lower_nv
    from cujit.targets.cuda.cg import lower_grid_sync
    from cujit.targets.cuda.constmem import lower_const_array_like
    from cujit.targets.cuda.foreign import lower_foreign_call
    from cujit.targets.cuda.mma import MMA_INTRINSICS
    from cujit.targets.cuda.warp import WARP_INTRINSICS

    return {
        "print": printing.lower_vprintf,
        "cuda.grid_sync": lower_grid_sync,
        "const.array_like": lower_const_array_like,
        **WARP_INTRINSICS,
        **cache_hint_lowerings(lower_ptx),  # cuda.ldcg, cuda.stcs...
        **libdevice_lowerings(lower_nv),  # cuda.libdevice.*
        "foreign.call": lower_foreign_call,  # cuda.declare_device
        **MMA_INTRINSICS,  # cuda.mma, cuda.ldmatrix, cuda.cp_async... (mma.py)
    }


_ROWS = {
    "cuda.sreg": lower_sreg,
    "cuda.grid": lower_grid,
    "cuda.gridsize": lower_gridsize,
    "cuda.syncthreads": lower_syncthreads,
    "shared.array": lower_shared_array,
    "cuda.syncthreads_count": lower_barrier_reduce,
    "cuda.syncthreads_and": lower_barrier_reduce,
    "cuda.syncthreads_or": lower_barrier_reduce,
    **{name: lower_threadfence for name in _FENCE_SCOPES},
    "cuda.nanosleep": lower_nanosleep,
    **ATOMIC_INTRINSICS,
    **builtins.COMMON_INTRINSICS,  # the target-neutral ones
    **COMPLEX_INTRINSICS,  # complex numbers, cmath, np.minimum/np.maximum
    **BF16_INTRINSICS,  # cuda.bf16 (codegen/bf16.py)
    **FP8_INTRINSICS,  # the fp8 conversions (codegen/fp8.py)
}
INTRINSICS = LazyTable(_ROWS, _rare_lowerings)
