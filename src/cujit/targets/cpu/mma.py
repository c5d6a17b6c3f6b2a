"""The tensor-core intrinsics on the CPU: the warp's fragments meet in the exchange buffer.

``mma``, ``ldmatrix`` and ``stmatrix`` are warp-wide: a lane's result depends on
other lanes' registers or addresses.  Under the warp scheduler (``warp.py``) each is a
series of rendezvous of the whole warp (mask ``0xffffffff``):

- ``tc.mma``: the A and B registers travel two per rendezvous (the buffer's slot holds
  64 bits); after each one, every lane copies the warp's snapshots into a per-thread
  buffer.  Then the lane computes its own elements of D from the whole warp's
  fragments, through a constant table built from PTX's layouts (``ir.fragments``):
  for each of its D elements and each ``k``, which register and bits hold ``A[row, k]``
  and ``B[k, col]``.  Products are exact in float32 for bf16, f16 and tf32 inputs and
  are summed in float32 in ``k`` order, starting from C (f16 accumulators: converted at
  both ends); int8 sums wrap in int32.  tf32 inputs keep their upper 19 bits, as the
  hardware reads them.
- ``tc.ldmatrix``/``tc.stmatrix``: one rendezvous of the row addresses; each lane then
  loads (stores) the elements its registers hold.
- ``tc.cp_async``: the copy, done at once (a wait finds it complete); commit and wait
  do nothing.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen import bf16
from cujit.codegen.arrays import element_pointer, index_values
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import F32, I8, I32, I64, value_type
from cujit.codegen.packing import PACKING_INTRINSICS, lower_tf32_bits
from cujit.ir import fragments as fr
from cujit.targets.cpu import warp
from cujit.targets.cpu.irloop import loop

I16 = ll.IntType(16)
F16 = ll.HalfType()
_FULL = ll.Constant(I32, 0xFFFFFFFF)
_MAX_REGS = 6  # the most A + B registers of any form (ir.fragments.FORMS)


def _c(v: int, ty=I32) -> ll.Constant:
    return ll.Constant(ty, v)


def _lane_base(ctx: FunctionLowering):
    b = ctx.builder
    t = warp._linear(ctx)
    lane = b.and_(t, _c(31))
    return t, lane, b.sub(t, lane)


def _snap(ctx: FunctionLowering, index: ll.Value) -> ll.Value:
    return ctx.builder.load(warp._slot(ctx, warp._SNAP, index))


def _table(ctx: FunctionLowering, form: fr.MmaForm) -> ll.GlobalVariable:
    """[32 lanes][4 D elements][k][A, B] of ``(register << 8) | bit``: where the lane's
    D element's ``A[row, k]`` and ``B[k, col]`` are among the warp's registers, numbered
    ``lane * regs + r`` with B's registers after A's."""
    name = f"__cujit_mma_{form.shape}_{form.kind}"
    existing = ctx.module.globals.get(name)
    if existing is not None:
        return existing
    bits, per = form.in_bits, fr.per_reg(form.in_bits)
    regs = form.a_regs + form.b_regs
    where_a = {
        fr.a_coord(form, lane, j): (lane, j)
        for lane in range(32)
        for j in range(fr.a_elements(form))
    }
    where_b = {
        fr.b_coord(form, lane, j): (lane, j)
        for lane in range(32)
        for j in range(fr.b_elements(form))
    }
    entries = []
    for lane in range(32):
        for j in range(4):
            row, col = fr.c_coord(form, lane, j)
            for k in range(form.k):
                la, ja = where_a[(row, k)]
                lb, jb = where_b[(k, col)]
                entries.append(((la * regs + ja // per) << 8) | (ja % per) * bits)
                entries.append(((lb * regs + form.a_regs + jb // per) << 8) | (jb % per) * bits)
    ty = ll.ArrayType(I32, len(entries))
    g = ll.GlobalVariable(ctx.module, ty, name)
    g.global_constant = True
    g.linkage = "internal"
    g.initializer = ll.Constant(ty, entries)
    return g


def _element(b: ll.IRBuilder, form: fr.MmaForm, reg: ll.Value, shift: ll.Value) -> ll.Value:
    """The A or B element at bit ``shift`` of ``reg``: float32, or int32 for int8."""
    v = b.lshr(reg, shift)
    if form.kind == "bf16":
        return bf16.to_f32(b, b.trunc(v, I16))
    if form.kind == "f16":
        return b.fpext(b.bitcast(b.trunc(v, I16), F16), F32)
    if form.kind == "tf32":
        return b.bitcast(b.and_(v, _c(-0x2000)), F32)
    byte = b.trunc(v, I8)
    return b.sext(byte, I32) if form.kind == "s8" else b.zext(byte, I32)


def _gather(ctx: FunctionLowering, op, regs: list[ll.Value], t, base) -> ll.Value:
    """Every lane's ``regs`` in a per-thread buffer, ``lane * len(regs) + r``."""
    b = ctx.builder
    buf = ctx.target_state.get("mma.buffer")
    if buf is None:
        buf = ctx.alloca(ll.ArrayType(I32, 32 * _MAX_REGS), 4, name="mma.warp_regs")
        ctx.target_state["mma.buffer"] = buf
    n = len(regs)
    for r in range(0, n, 2):
        pair = b.zext(regs[r], I64)
        if r + 1 < n:
            pair = b.or_(pair, b.shl(b.zext(regs[r + 1], I64), _c(32, I64)))
        warp._park(ctx, op, warp.WARP, t, _FULL, pair)

        def copy(k, r=r):
            s = _snap(ctx, b.add(base, k))
            at = b.add(b.mul(k, _c(n)), _c(r))
            b.store(b.trunc(s, I32), b.gep(buf, [_c(0), at], inbounds=True))
            if r + 1 < n:
                hi = b.trunc(b.lshr(s, _c(32, I64)), I32)
                b.store(hi, b.gep(buf, [_c(0), b.add(at, _c(1))], inbounds=True))

        loop(b, _c(0), _c(32), "mma.copy", copy)
    return buf


def _acc_in(b: ll.IRBuilder, form: fr.MmaForm, c: list[ll.Value], j: int) -> ll.Value:
    if form.acc == "f16":
        half = b.trunc(b.lshr(c[j // 2], _c(16 * (j % 2))), I16)
        return b.fpext(b.bitcast(half, F16), F32)
    return c[j]


def lower_mma(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    form = fr.FORMS[op.attr("form")]
    a = [b.extract_value(args[0], k) for k in range(form.a_regs)]
    bb = [b.extract_value(args[1], k) for k in range(form.b_regs)]
    c = [b.extract_value(args[2], k) for k in range(form.c_regs)]
    regs = [b.bitcast(v, I32) if v.type == F32 else v for v in (*a, *bb)]
    t, lane, base = _lane_base(ctx)
    buf = _gather(ctx, op, regs, t, base)
    table = _table(ctx, form)
    is_int = form.acc == "s32"
    acc_slot = ctx.alloca(I32 if is_int else F32, None, name="mma.acc")
    out = []
    for j in range(4):
        b.store(_acc_in(b, form, c, j), acc_slot)
        row0 = b.mul(b.add(b.mul(lane, _c(4)), _c(j)), _c(form.k))

        def step(k, row0=row0):
            at = b.mul(b.add(row0, k), _c(2))
            ea = b.load(b.gep(table, [_c(0), at], inbounds=True))
            eb = b.load(b.gep(table, [_c(0), b.add(at, _c(1))], inbounds=True))
            va, vb = (
                _element(
                    b,
                    form,
                    b.load(b.gep(buf, [_c(0), b.lshr(e, _c(8))], inbounds=True)),
                    b.and_(e, _c(255)),
                )
                for e in (ea, eb)
            )
            acc = b.load(acc_slot)
            if is_int:
                b.store(b.add(acc, b.mul(va, vb)), acc_slot)
            else:
                b.store(b.fadd(acc, b.fmul(va, vb)), acc_slot)

        loop(b, _c(0), _c(form.k), "mma.k", step)
        out.append(b.load(acc_slot))
    if form.acc == "f16":
        h = [b.zext(b.bitcast(b.fptrunc(v, F16), I16), I32) for v in out]
        out = [b.or_(h[0], b.shl(h[1], _c(16))), b.or_(h[2], b.shl(h[3], _c(16)))]
    result = ll.Constant(value_type(op.result.type), None)
    for k, v in enumerate(out):
        result = b.insert_value(result, v, k)
    return result


def _row_addresses(ctx: FunctionLowering, op: ir.Intrinsic):
    """One rendezvous of the lanes' addresses: (lane, base of the warp in the block)."""
    b = ctx.builder
    arr = op.args[0]
    ptr = element_pointer(ctx, arr.type, ctx.get(arr), index_values(ctx, op.args[1]))
    t, lane, base = _lane_base(ctx)
    warp._park(ctx, op, warp.WARP, t, _FULL, b.ptrtoint(ptr, I64))
    return lane, base


def _at(b: ll.IRBuilder, address: ll.Value, offset: ll.Value, ty: ll.Type) -> ll.Value:
    return b.inttoptr(b.add(address, b.zext(offset, I64)), ll.PointerType(ty))


def _rows(ctx, lane, base, i: int, trans: bool):
    """(row address, byte offset) of each half of this lane's register ``i``."""
    b = ctx.builder
    first = b.add(base, _c(8 * i))
    if not trans:  # both halves in row lane // 4, at column 2 * (lane % 4)
        row = _snap(ctx, b.add(first, b.lshr(lane, _c(2))))
        return [(row, b.mul(b.and_(lane, _c(3)), _c(4)))]
    pair = b.mul(b.and_(lane, _c(3)), _c(2))  # rows 2 * (lane % 4) + h, column lane // 4
    col = b.mul(b.lshr(lane, _c(2)), _c(2))
    return [(_snap(ctx, b.add(first, b.add(pair, _c(h)))), col) for h in (0, 1)]


def lower_ldmatrix(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    lane, base = _row_addresses(ctx, op)
    result = ll.Constant(value_type(op.result.type), None)
    for i in range(op.attr("num")):
        parts = _rows(ctx, lane, base, i, op.attr("trans"))
        if len(parts) == 1:
            reg = b.load(_at(b, *parts[0], I32), align=2)
        else:
            lo, hi = (b.zext(b.load(_at(b, *p, I16), align=2), I32) for p in parts)
            reg = b.or_(lo, b.shl(hi, _c(16)))
        result = b.insert_value(result, reg, i)
    return result


def lower_stmatrix(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    regs = [b.extract_value(args[2], k) for k in range(op.attr("num"))]
    lane, base = _row_addresses(ctx, op)
    for i, reg in enumerate(regs):
        parts = _rows(ctx, lane, base, i, op.attr("trans"))
        if len(parts) == 1:
            b.store(reg, _at(b, *parts[0], I32), align=2)
        else:
            for h, p in enumerate(parts):
                half = b.trunc(b.lshr(reg, _c(16 * h)), I16)
                b.store(half, _at(b, *p, I16), align=2)


def lower_cp_async(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    ty = ll.IntType(8 * op.attr("size"))
    ptrs = []
    for k in (0, 2):
        arr = op.args[k]
        p = element_pointer(ctx, arr.type, ctx.get(arr), index_values(ctx, op.args[k + 1]))
        ptrs.append(b.bitcast(p, ll.PointerType(ty)))
    b.store(b.load(ptrs[1], align=1), ptrs[0], align=1)


def lower_nothing(ctx: FunctionLowering, op: ir.Intrinsic, args):
    """``cp_async_commit_group``/``cp_async_wait_group``: every copy is done at once."""


# Need the warp scheduler (rows with cpu_wait == RENDEZVOUS): merged with warp.py's.
MMA_WARP_INTRINSICS = {
    "tc.mma": lower_mma,
    "tc.ldmatrix": lower_ldmatrix,
    "tc.stmatrix": lower_stmatrix,
}
# Any CPU variant.
MMA_INTRINSICS = {
    "tc.cp_async": lower_cp_async,
    "tc.cp_async_commit": lower_nothing,
    "tc.cp_async_wait": lower_nothing,
    "tc.tf32": lower_tf32_bits,
    **PACKING_INTRINSICS,
}

__all__ = ["MMA_INTRINSICS", "MMA_WARP_INTRINSICS"]
