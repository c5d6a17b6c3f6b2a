"""Lowering of the tensor-core intrinsics to PTX (inline assembly, as CUDA's own headers
emit them; PTX ISA sections "mma", "ldmatrix", "stmatrix", "cp.async"):

- ``tc.mma`` -> ``mma.sync.aligned.<shape>.row.col.<d>.<a>.<b>.<c>`` on the fragments'
  registers (``ir/fragments.py`` names the form's instruction);
- ``tc.ldmatrix``/``tc.stmatrix`` -> ``ldmatrix``/``stmatrix.sync.aligned.m8n8.x<n>
  [.trans].shared.b16`` at the element's shared-memory address (the generic pointer
  cast to ``addrspace(3)``: a 32-bit address);
- ``tc.cp_async`` -> ``cp.async.<ca|cg>.shared.global [shared], [global], <size>``,
  ``tc.cp_async_commit``/``tc.cp_async_wait`` -> ``cp.async.commit_group``,
  ``cp.async.wait_group n`` and ``cp.async.wait_all``;
- ``tc.tf32`` -> ``cvt.rna.tf32.f32``.

Every statement is ``volatile`` (``side_effect``), as CUDA C writes them: the warp-wide
ones must not be moved into or out of a branch, and those that touch memory also clobber
``memory``, so that the optimiser keeps ordinary loads and stores of shared memory on
their side of them.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.arrays import element_pointer, index_values
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import F32, I32, I64, VOID, memory_type, value_type
from cujit.codegen.packing import PACKING_INTRINSICS
from cujit.ir.fragments import FORMS

SHARED, GLOBAL = 3, 1  # NVVM address spaces


def _asm(ctx: FunctionLowering, ret: ll.Type, text: str, constraints: str, args: list):
    fnty = ll.FunctionType(ret, [a.type for a in args])
    return ctx.builder.call(ll.InlineAsm(fnty, text, constraints, side_effect=True), args)


def _items(b: ll.IRBuilder, tup: ll.Value, n: int) -> list[ll.Value]:
    return [b.extract_value(tup, k) for k in range(n)]


def _as_i32(b: ll.IRBuilder, v: ll.Value) -> ll.Value:
    return b.bitcast(v, I32) if v.type == F32 else v


def _regs(first: int, n: int) -> str:
    return "{" + ", ".join(f"${first + k}" for k in range(n)) + "}"


def lower_mma(ctx: FunctionLowering, op: ir.Intrinsic, args):
    b = ctx.builder
    form = FORMS[op.attr("form")]
    a = [_as_i32(b, v) for v in _items(b, args[0], form.a_regs)]
    bb = [_as_i32(b, v) for v in _items(b, args[1], form.b_regs)]
    c = _items(b, args[2], form.c_regs)
    ret = value_type(op.result.type)
    nd = form.c_regs
    text = (
        f"{form.ptx} {_regs(0, nd)}, {_regs(nd, len(a))}, {_regs(nd + len(a), len(bb))}, "
        f"{_regs(nd + len(a) + len(bb), nd)};"
    )
    ck = "f" if form.acc == "f32" else "r"
    constraints = ",".join([f"={ck}"] * nd + ["r"] * (len(a) + len(bb)) + [ck] * nd)
    return _asm(ctx, ret, text, constraints, [*a, *bb, *c])


def _address(ctx: FunctionLowering, op: ir.Intrinsic, array: int, space: int) -> ll.Value:
    """The address of ``array[index]`` (operands ``array``, ``array + 1``) in ``space``:
    32 bits for shared memory, 64 for global."""
    b = ctx.builder
    arr = op.args[array]
    ptr = element_pointer(ctx, arr.type, ctx.get(arr), index_values(ctx, op.args[array + 1]))
    typed = b.addrspacecast(ptr, ll.PointerType(memory_type(arr.type.dtype), space))
    return b.ptrtoint(typed, I32 if space == SHARED else I64)


def _matrix(op: ir.Intrinsic, verb: str) -> str:
    trans = ".trans" if op.attr("trans") else ""
    return f"{verb}.sync.aligned.m8n8.x{op.attr('num')}{trans}.shared.b16"


def lower_ldmatrix(ctx: FunctionLowering, op: ir.Intrinsic, args):
    n = op.attr("num")
    addr = _address(ctx, op, 0, SHARED)
    ret = value_type(op.result.type)
    text = f"{_matrix(op, 'ldmatrix')} {_regs(0, n)}, [${n}];"
    out = _asm(ctx, ret if n > 1 else I32, text, ",".join(["=r"] * n + ["r", "~{memory}"]), [addr])
    if n == 1:  # one register: the asm returns it bare
        out = ctx.builder.insert_value(ll.Constant(ret, None), out, 0)
    return out


def lower_stmatrix(ctx: FunctionLowering, op: ir.Intrinsic, args):
    n = op.attr("num")
    addr = _address(ctx, op, 0, SHARED)
    regs = _items(ctx.builder, args[2], n)
    text = f"{_matrix(op, 'stmatrix')} [$0], {_regs(1, n)};"
    _asm(ctx, VOID, text, ",".join(["r"] * (n + 1) + ["~{memory}"]), [addr, *regs])


def lower_cp_async(ctx: FunctionLowering, op: ir.Intrinsic, args):
    dst = _address(ctx, op, 0, SHARED)
    src = _address(ctx, op, 2, GLOBAL)
    text = f"cp.async.{op.attr('cache')}.shared.global [$0], [$1], {op.attr('size')};"
    _asm(ctx, VOID, text, "r,l,~{memory}", [dst, src])


def lower_commit(ctx: FunctionLowering, op: ir.Intrinsic, args):
    _asm(ctx, VOID, "cp.async.commit_group;", "~{memory}", [])


def lower_wait(ctx: FunctionLowering, op: ir.Intrinsic, args):
    n = op.attr("n")
    text = "cp.async.wait_all;" if n < 0 else f"cp.async.wait_group {n};"
    _asm(ctx, VOID, text, "~{memory}", [])


def lower_tf32(ctx: FunctionLowering, op: ir.Intrinsic, args):
    bits = _asm(ctx, I32, "cvt.rna.tf32.f32 $0, $1;", "=r,f", [args[0]])
    return ctx.builder.bitcast(bits, F32)


MMA_INTRINSICS = {
    "tc.mma": lower_mma,
    "tc.ldmatrix": lower_ldmatrix,
    "tc.stmatrix": lower_stmatrix,
    "tc.cp_async": lower_cp_async,
    "tc.cp_async_commit": lower_commit,
    "tc.cp_async_wait": lower_wait,
    "tc.tf32": lower_tf32,
    **PACKING_INTRINSICS,
}

__all__ = ["MMA_INTRINSICS"]
