"""The CPU target's intrinsic table: ``Intrinsic.name`` -> host lowering function.

A host thread has no special registers, so the kernel function receives the
CUDA thread state as *hidden parameters* placed before the ABI parameters
(``Target.hidden_params``): the block's shared-memory bases, the dynamic
shared size, and ``threadIdx``/``blockIdx``/``blockDim``/``gridDim`` as
``i32`` scalars.  Scalars rather than a pointer to a state struct: once the
block loop (``runner.py``) inlines the kernel, ``threadIdx.x`` *is* the loop's
induction variable, which LLVM can reason about and vectorise.

- ``cuda.grid``/``cuda.gridsize`` are computed in int64, as on the GPU target;
- shared arrays are offsets into the per-block buffer the runner hands in: static
  ones at 16-byte-aligned offsets fixed at compile time (the running total is the
  module global ``STATIC_SHARED_SIZE``, which the runner reads), dynamic ones
  (``shape == (0,)``) all alias the launch's dynamic buffer, as ``extern __shared__``;
- ``atomic.*`` are ``atomicrmw`` (``add``/``fadd``, ``sub``, ``and``..., ``fmax``
  for ``nanmax``, ``uinc_wrap`` for CUDA's ``atomicInc``; LLVM expands those the
  host lacks to compare-exchange loops) and ``cmpxchg`` for ``cas``; float
  ``max``/``min`` are a compare-exchange loop with Python's rule.  Blocks run
  on several cores at once, so these must be real atomics;
- ``cuda.syncthreads`` is a coroutine suspend point (``coro.py``); the plain
  (barrier-free) variant of the target must never meet one; neither must it meet
  the warp functions, which the warp variant lowers (``warp.py``).
  ``cuda.lanemask_lt`` needs no other lane: it is ``(1 << laneid) - 1`` anywhere.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen import builtins, printing
from cujit.codegen.arrays import c_strides, element_pointer, index_values, make_array
from cujit.codegen.bf16 import BF16_INTRINSICS
from cujit.codegen.cache_hints import cache_hint_lowerings, lower_plain
from cujit.codegen.complex import COMPLEX_INTRINSICS
from cujit.codegen.context import FunctionLowering
from cujit.codegen.fp8 import FP8_INTRINSICS
from cujit.codegen.libdevice import libdevice_lowerings
from cujit.codegen.lltypes import F32, I8, I32, I64, i64, memory_type
from cujit.targets.cpu.constmem import lower_const_array_like
from cujit.targets.cpu.libdevice import lower_host
from cujit.types import Array

I8P = ll.PointerType(I8)
_AXES = ("x", "y", "z")
_REGS = ("threadIdx", "blockIdx", "blockDim", "gridDim")

# The hidden parameters, in order (the coroutine variant appends its handle slot).
HIDDEN_PARAMS: tuple[tuple[str, ll.Type], ...] = (
    ("shared", I8P),  # this block's static shared memory
    ("dynshared", I8P),  # this block's dynamic shared memory
    ("dynbytes", I64),  # its size in bytes, as %dynamic_smem_size
    *((f"{reg}.{a}", I32) for reg in _REGS for a in _AXES),
)
_INDEX = {name: k for k, (name, _) in enumerate(HIDDEN_PARAMS)}
STATIC_SHARED_SIZE = "__cujit_static_shared_bytes"
SHARED_ALIGN = 16


def hidden(ctx: FunctionLowering, name: str) -> ll.Value:
    """The hidden parameter ``name`` of the kernel being lowered."""
    return ctx.llfn.args[_INDEX[name]]


def lower_sreg(ctx: FunctionLowering, op: ir.Intrinsic, args):
    reg = op.attr("reg")
    if reg == "warpsize":
        return ll.Constant(ll.IntType(32), 32)
    if reg == "laneid":
        # CUDA numbers lanes by the thread's linear index within its block.
        return lower_sreg_lane(ctx)
    return hidden(ctx, reg)


def lower_lanemask_lt(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.lanemask_lt()``: the lanes below this one, ``(1 << laneid) - 1``."""
    b = ctx.builder
    lane = lower_sreg_lane(ctx)
    return b.sub(b.shl(ll.Constant(I32, 1), lane), ll.Constant(I32, 1))


def lower_sreg_lane(ctx: FunctionLowering) -> ll.Value:
    b = ctx.builder
    tx, ty, tz = (hidden(ctx, f"threadIdx.{a}") for a in "xyz")
    bx, by = hidden(ctx, "blockDim.x"), hidden(ctx, "blockDim.y")
    linear = b.add(b.mul(b.add(b.mul(tz, by), ty), bx), tx)
    return b.and_(linear, ll.Constant(I32, 31))


# The runner keeps every id within CUDA's limits, as the GPU does.
lower_grid, lower_gridsize = builtins.grid_lowerings(
    lambda ctx, reg, axis: hidden(ctx, f"{reg}.{axis}")
)


def _static_shared_offset(module: ll.Module, nbytes: int) -> int:
    """Reserve ``nbytes`` of static shared memory; the module global keeps the total."""
    gv = module.globals.get(STATIC_SHARED_SIZE)
    if gv is None:
        gv = ll.GlobalVariable(module, I64, STATIC_SHARED_SIZE)
        gv.global_constant = True
        gv.initializer = i64(0)
    offset = -(-gv.initializer.constant // SHARED_ALIGN) * SHARED_ALIGN
    gv.initializer = i64(offset + nbytes)
    return offset


def lower_shared_array(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.shared.array``: each static call site its own slice of the block's
    buffer; ``shape == (0,)`` the launch's dynamic shared memory."""
    t: Array = op.result.type
    shape = tuple(op.attr("shape"))
    b = ctx.builder
    elem = memory_type(t.dtype)
    if shape == (0,):
        base = hidden(ctx, "dynshared")
        extents = [b.udiv(hidden(ctx, "dynbytes"), i64(t.dtype.itemsize))]
    else:
        count = 1
        for n in shape:
            count *= n
        align = op.attr("alignment") or SHARED_ALIGN
        pad = align - SHARED_ALIGN if align > SHARED_ALIGN else 0
        offset = _static_shared_offset(ctx.module, count * t.dtype.itemsize + pad)
        base = b.gep(hidden(ctx, "shared"), [i64(offset)], inbounds=True)
        if pad:  # round the address up: the block's buffer is only SHARED_ALIGN-aligned
            addr = b.ptrtoint(base, I64)
            addr = b.and_(b.add(addr, i64(align - 1)), i64(-align))
            base = b.inttoptr(addr, I8P)
        extents = [i64(n) for n in shape]
    data = b.bitcast(base, ll.PointerType(elem))
    return make_array(ctx, t, data, extents, c_strides(t, shape))


def lower_local_array(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.local.array``; one aligned past 16 bytes is placed in a larger slot at an
    address rounded up, since a coroutine's frame (where a waiting kernel's locals live)
    is only 16-byte aligned."""
    align = op.attr("alignment")
    if not align or align <= SHARED_ALIGN:
        return builtins.lower_local_array(ctx, op, args)
    t: Array = op.result.type
    shape = tuple(op.attr("shape"))
    count = 1
    for n in shape:
        count *= n
    b = ctx.builder
    slot = ctx.alloca(
        ll.ArrayType(I8, count * t.dtype.itemsize + align),
        align=SHARED_ALIGN,
        name=f"local{op.result.id}",
    )
    addr = b.and_(b.add(b.ptrtoint(slot, I64), i64(align - 1)), i64(-align))
    data = b.inttoptr(addr, ll.PointerType(memory_type(t.dtype)))
    return make_array(ctx, t, data, [i64(n) for n in shape], c_strides(t, shape))


_RMW = {
    "atomic.add": ("add", "fadd"),
    "atomic.sub": ("sub", "fsub"),
    "atomic.and": ("and", None),
    "atomic.or": ("or", None),
    "atomic.xor": ("xor", None),
    "atomic.exch": ("xchg", None),
    "atomic.nanmax": (None, "fmax"),
    "atomic.nanmin": (None, "fmin"),
    # CUDA's atomicInc/atomicDec wrap at ``val``, as LLVM's uinc_wrap/udec_wrap do.
    "atomic.inc": ("uinc_wrap", None),
    "atomic.dec": ("udec_wrap", None),
}


def lower_atomic_rmw(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.atomic.<op>(ary, idx, val)`` as one ``atomicrmw``; returns the old value.

    Relaxed (``monotonic``) ordering, as CUDA's atomics.  The address is
    computed as for ``ary[idx]`` (negative indices included).
    """
    t: Array = op.args[0].type
    dtype = t.dtype
    ptr = element_pointer(ctx, t, args[0], index_values(ctx, op.args[1]))
    b = ctx.builder
    if op.name in ("atomic.max", "atomic.min"):
        if dtype.kind != "f":  # umax/umin compare unsigned, max/min signed
            rmw = ("u" if dtype.kind == "u" else "") + op.name.split(".")[1]
            return b.atomic_rmw(rmw, ptr, args[2], "monotonic")
        return _float_max_min(ctx, ptr, args[2], op.name == "atomic.max")
    int_op, float_op = _RMW[op.name]
    # nanmax/nanmin on integers are plain max/min (no NaN to skip).
    if op.name in ("atomic.nanmax", "atomic.nanmin") and dtype.kind != "f":
        int_op = ("u" if dtype.kind == "u" else "") + op.name[len("atomic.nan") :]
    return b.atomic_rmw(float_op if dtype.kind == "f" else int_op, ptr, args[2], "monotonic")


def _float_max_min(ctx: FunctionLowering, ptr: ll.Value, val: ll.Value, is_max: bool):
    """Float ``max``/``min`` with Python's rule (``val if val > old else old``: a NaN
    operand leaves the element alone) as a compare-exchange loop on the bits."""
    b = ctx.builder
    ity = ll.IntType(32 if val.type == F32 else 64)
    iptr = b.bitcast(ptr, ity.as_pointer())
    before = b.block
    loop = ctx.llfn.append_basic_block("atomic.cas")
    done = ctx.llfn.append_basic_block("atomic.done")
    first = b.load_atomic(iptr, "monotonic", align=ity.width // 8)
    b.branch(loop)
    b.position_at_end(loop)
    old_bits = b.phi(ity)
    old_bits.add_incoming(first, before)
    old = b.bitcast(old_bits, val.type)
    better = b.fcmp_ordered(">" if is_max else "<", val, old)
    new_bits = b.select(better, b.bitcast(val, ity), old_bits)
    pair = b.cmpxchg(iptr, old_bits, new_bits, "monotonic", "monotonic")
    seen = b.extract_value(pair, 0)
    old_bits.add_incoming(seen, b.block)
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    return old


def lower_atomic_cas(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.atomic.cas(ary, idx, old, val)``: ``cmpxchg``; returns the value found."""
    t: Array = op.args[0].type
    ptr = element_pointer(ctx, t, args[0], index_values(ctx, op.args[1]))
    pair = ctx.builder.cmpxchg(ptr, args[2], args[3], "monotonic", "monotonic")
    return ctx.builder.extract_value(pair, 0)


def lower_threadfence(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.threadfence*()``: a sequentially consistent fence (blocks run on several
    host threads, so this orders this thread's memory operations for all of them)."""
    ctx.builder.fence("seq_cst")


def lower_nanosleep(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cuda.nanosleep(ns)``: nothing; a sleep promises no ordering, only a delay."""


def lower_syncthreads_unexpected(ctx: FunctionLowering, op: ir.Intrinsic, args):
    raise AssertionError(
        "syncthreads reached the barrier-free CPU variant; "
        "compile_cpu_kernel should have picked the coroutine one"
    )


# Target-independent entries are shared with the CUDA table.
def lower_global_array(ctx, op, args):
    """``global.array``: a NumPy array's memory, or another object's CUDA Array Interface
    when it points into memory this target allocated (``interop.py``)."""
    from cujit.codegen.arrays import global_array_at
    from cujit.targets.cpu.interop import host_address

    g = op.attr("array")
    address = g.address("cpu")
    if address is None:
        address = host_address(g.array)
    return global_array_at(ctx, op, address)


INTRINSICS = {
    "print": printing.lower_printf,
    "cuda.sreg": lower_sreg,
    "cuda.grid": lower_grid,
    "cuda.gridsize": lower_gridsize,
    "cuda.syncthreads": lower_syncthreads_unexpected,
    "cuda.lanemask_lt": lower_lanemask_lt,
    **{f"cuda.threadfence{s}": lower_threadfence for s in ("", "_block", "_system")},
    "cuda.nanosleep": lower_nanosleep,
    "shared.array": lower_shared_array,
    "const.array_like": lower_const_array_like,
    **{name: lower_atomic_rmw for name in (*_RMW, "atomic.max", "atomic.min")},
    "atomic.cas": lower_atomic_cas,
    **builtins.COMMON_INTRINSICS,  # the target-neutral ones
    # float min/max order -0.0 below +0.0 as PTX's min/max do, whatever the host's
    # instruction does with two zeros (x86's minss: the second operand)
    **builtins.min_max_lowerings(zeros=True),
    "local.array": lower_local_array,  # over-aligned ones: see there
    "global.array": lower_global_array,  # also another object's CAI over this target's memory
    **COMPLEX_INTRINSICS,  # complex numbers, cmath, np.minimum/np.maximum
    **BF16_INTRINSICS,  # cuda.bf16 (codegen/bf16.py)
    **FP8_INTRINSICS,  # the fp8 conversions (codegen/fp8.py)
    **cache_hint_lowerings(lower_plain),  # cuda.ldcg, cuda.stcs...
    **libdevice_lowerings(lower_host),  # cuda.libdevice.*
}
