"""Lowering of the ``atomic.*`` intrinsics: read-modify-write on one array element.

Each returns the element's value just before its own update (the "old" value)
and uses relaxed ordering (LLVM ``monotonic``), as CUDA's ``atomic*`` functions.
The address is computed as for ``ary[idx]``, negative indices included.

What serves each operation (NVVM IR spec, "Atomic" intrinsics and its list of
supported LLVM instructions; PTX ISA, "atom"):

- integers: ``atomicrmw add/sub/and/or/xor/xchg`` and ``max/min`` (signed) or
  ``umax/umin`` (unsigned; ``nanmax``/``nanmin`` mean max/min on integers):
  PTX ``atom.{add,and,or,xor,exch,max,min}`` (``sub`` becomes ``atom.add`` of
  the negation);
- float ``add``: ``llvm.nvvm.atomic.load.add.f32/f64`` (libNVVM rejects the
  LLVM-7 ``atomicrmw fadd``); float ``sub``: the same of ``-val`` (``a - b`` and
  ``a + -b`` round identically);
- ``inc``/``dec`` on uint32: ``llvm.nvvm.atomic.load.inc.32``/``dec.32``, PTX
  ``atom.inc/dec.u32`` with CUDA's wrap-around semantics; on uint64 (which PTX
  lacks) a compare-and-swap loop with the same semantics;
- float ``max/min/nanmax/nanmin``: a compare-and-swap loop (PTX has no float
  ``atom.max``): the value is swapped in only when it changes the result, so a
  NaN never enters through ``max``/``min`` and ``nanmax``/``nanmin`` replace a NaN;
- ``cas``: ``cmpxchg`` (PTX ``atom.cas``).

An array argument's pointer is known to be global, so libNVVM emits ``atom.global``
(``red.global`` where the old value is unused: one ``REDG`` on sm_90).  numba's
kernels reach memory through generic pointers and get ``atom.add.f64``, which ptxas
makes a generic ``ATOM`` that returns its value, plus a fallback loop for the case
that the address is in shared memory (read off ptxas 13's SASS for sm_90): the
global form is kept.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import element_pointer, index_values
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import const_int
from cujit.types import Array, Scalar

_ORDER = "monotonic"  # relaxed, as CUDA's atomics (NVVM IR spec, "Memory Model")


def _target(ctx: FunctionLowering, op: ir.Intrinsic, args) -> tuple[Scalar, ll.Value]:
    """The element type and the address ``&ary[idx]``."""
    t: Array = op.args[0].type
    return t.dtype, element_pointer(ctx, t, args[0], index_values(ctx, op.args[1]), op)


def _nvvm_atomic(ctx: FunctionLowering, name: str, ptr: ll.Value, val: ll.Value) -> ll.Value:
    f = ctx.declare(name, val.type, [ptr.type, val.type], attrs=("nounwind",))
    return ctx.builder.call(f, [ptr, val])


def _float_add(ctx: FunctionLowering, dtype: Scalar, ptr: ll.Value, val: ll.Value) -> ll.Value:
    bits = dtype.bits
    return _nvvm_atomic(ctx, f"llvm.nvvm.atomic.load.add.f{bits}.p0f{bits}", ptr, val)


def _cas_loop(ctx: FunctionLowering, ptr: ll.Value, swap_if, new_value) -> ll.Value:
    """A compare-and-swap loop on ``*ptr``; returns the value it replaced or kept.

    ``swap_if(old)`` (an i1, or None for always) says whether to store at all;
    ``new_value(old)`` is what to store.  Both see ``old`` in the element's own
    type; the swap itself is on the same-width integer (``cmpxchg`` compares bits).
    """
    b = ctx.builder
    elem = ptr.type.pointee
    ity = ll.IntType(
        elem.width
        if isinstance(elem, ll.IntType)
        else (32 if isinstance(elem, ll.FloatType) else 64)
    )
    iptr = b.bitcast(ptr, ll.PointerType(ity, ptr.type.addrspace))
    first = b.load_atomic(iptr, _ORDER, align=ity.width // 8)
    entry = b.block
    loop = ctx.llfn.append_basic_block(ctx.unique_name("atomic.loop"))
    attempt = (
        ctx.llfn.append_basic_block(ctx.unique_name("atomic.try")) if swap_if is not None else None
    )
    done = ctx.llfn.append_basic_block(ctx.unique_name("atomic.done"))
    b.branch(loop)

    b.position_at_end(loop)
    old_bits = b.phi(ity)
    old_bits.add_incoming(first, entry)
    old = old_bits if ity == elem else b.bitcast(old_bits, elem)
    if attempt is not None:
        b.cbranch(swap_if(old), attempt, done)
        b.position_at_end(attempt)
    new = new_value(old)
    new_bits = new if ity == elem else b.bitcast(new, ity)
    pair = b.cmpxchg(iptr, old_bits, new_bits, _ORDER, _ORDER)
    old_bits.add_incoming(b.extract_value(pair, 0), b.block)
    b.cbranch(b.extract_value(pair, 1), done, loop)

    b.position_at_end(done)
    return old  # defined in ``loop``, which dominates ``done``


# Float max/min: swap only when ``val`` improves on ``old``.  Ordered compares
# are false when either side is NaN (max/min: a NaN stays, a NaN val is ignored);
# the nan- forms also swap over a NaN ``old`` (unordered compare) but never a NaN val.
_FLOAT_SWAP = {
    "atomic.max": ("<", False),
    "atomic.min": (">", False),
    "atomic.nanmax": ("<", True),
    "atomic.nanmin": (">", True),
}


def _float_minmax(ctx: FunctionLowering, name: str, ptr: ll.Value, val: ll.Value) -> ll.Value:
    b = ctx.builder
    cmp, nan_aware = _FLOAT_SWAP[name]

    def swap_if(old):
        if not nan_aware:
            return b.fcmp_ordered(cmp, old, val)
        return b.and_(b.fcmp_ordered("ord", val, val), b.fcmp_unordered(cmp, old, val))

    return _cas_loop(ctx, ptr, swap_if, lambda old: val)


def _wrap_inc_dec(ctx: FunctionLowering, name: str, ptr: ll.Value, val: ll.Value) -> ll.Value:
    """CUDA's atomicInc/atomicDec (PTX ISA, "atom": ``.inc``/``.dec``):
    inc: ``old >= val ? 0 : old + 1``; dec: ``old == 0 or old > val ? val : old - 1``."""
    b = ctx.builder
    zero, one = const_int(val.type, 0), const_int(val.type, 1)
    if val.type.width == 32:
        suffix = "inc" if name == "atomic.inc" else "dec"
        return _nvvm_atomic(ctx, f"llvm.nvvm.atomic.load.{suffix}.32.p0i32", ptr, val)
    if name == "atomic.inc":
        return _cas_loop(
            ctx,
            ptr,
            None,
            lambda old: b.select(b.icmp_unsigned(">=", old, val), zero, b.add(old, one)),
        )
    return _cas_loop(
        ctx,
        ptr,
        None,
        lambda old: b.select(
            b.or_(b.icmp_unsigned("==", old, zero), b.icmp_unsigned(">", old, val)),
            val,
            b.sub(old, one),
        ),
    )


# Integer read-modify-writes: intrinsic name -> (signed op, unsigned op).
_INT_RMW = {
    "atomic.add": ("add", "add"),
    "atomic.sub": ("sub", "sub"),
    "atomic.and": ("and", "and"),
    "atomic.or": ("or", "or"),
    "atomic.xor": ("xor", "xor"),
    "atomic.exch": ("xchg", "xchg"),
    "atomic.max": ("max", "umax"),
    "atomic.min": ("min", "umin"),
    "atomic.nanmax": ("max", "umax"),
    "atomic.nanmin": ("min", "umin"),
}


def lower_atomic_rmw(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``atomic.<op>(ary, idx, val)`` -> the old value."""
    dtype, ptr = _target(ctx, op, args)
    val = args[2]
    b = ctx.builder
    if op.name in ("atomic.inc", "atomic.dec"):
        return _wrap_inc_dec(ctx, op.name, ptr, val)
    if dtype.kind == "f":
        if op.name == "atomic.add":
            return _float_add(ctx, dtype, ptr, val)
        if op.name == "atomic.sub":
            # fsub -0.0, x is LLVM 7's negation (libNVVM has no ``fneg``).
            return _float_add(ctx, dtype, ptr, b.fsub(ll.Constant(val.type, -0.0), val))
        return _float_minmax(ctx, op.name, ptr, val)
    signed, unsigned = _INT_RMW[op.name]
    return b.atomic_rmw(signed if dtype.kind == "i" else unsigned, ptr, val, _ORDER)


def lower_atomic_cas(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``atomic.cas(ary, idx, old, val)``: store ``val`` if the element equals ``old``;
    returns the element's previous value either way."""
    _, ptr = _target(ctx, op, args)
    pair = ctx.builder.cmpxchg(ptr, args[2], args[3], _ORDER, _ORDER)
    return ctx.builder.extract_value(pair, 0)


ATOMIC_INTRINSICS = {
    **{name: lower_atomic_rmw for name in (*_INT_RMW, "atomic.inc", "atomic.dec")},
    "atomic.cas": lower_atomic_cas,
}
