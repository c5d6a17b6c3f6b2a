"""Scalar ops: constants, arithmetic, comparisons and casts.

LLVM integers have no sign, so the IR type's signedness picks the instruction
(``sdiv``/``udiv``, ``icmp slt``/``ult``, ``sext``/``zext``, ``sitofp``/``uitofp``).
Integer arithmetic wraps: no ``nsw``/``nuw`` flags, as NumPy's fixed-width ints.
The operators whose Python meaning differs from the machine's (``//``, ``%``,
``**``, shifts) are in ``pyarith.py``.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen import bf16, fp8, half, pyarith
from cujit.codegen import complex as cx
from cujit.codegen import narrow as narrowing
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import const_int, has_value, scalar_type, value_type
from cujit.types import Array, Scalar, Tuple, float32, int32


def constant(t, value) -> ll.Constant | None:
    """The LLVM constant for a ``Const`` of type ``t`` (None for compile-time-only types)."""
    if isinstance(t, Scalar):
        lt = scalar_type(t)
        if bf16.involves(t):
            return bf16.constant(value)
        if t.kind == "f":
            return ll.Constant(lt, float(value))
        if t.kind == "c":
            value = complex(value)
            return ll.Constant(lt, [float(value.real), float(value.imag)])
        return const_int(lt, int(value))
    if isinstance(t, Tuple):
        return ll.Constant(
            value_type(t),
            [
                constant(it, v) if has_value(it) else ll.Constant(ll.LiteralStructType([]), [])
                for it, v in zip(t.items, value, strict=True)
            ],
        )
    if not has_value(t):
        return None
    raise AssertionError(f"constant of type {t}")


def lower_const(ctx: FunctionLowering, op: ir.Const) -> None:
    ctx.set(op.result, constant(op.result.type, op.value))


def lower_undef(ctx: FunctionLowering, op: ir.Undef) -> None:
    lt = value_type(op.result.type)
    ctx.set(op.result, None if lt is None else ll.Constant(lt, ll.Undefined))


# Plain machine ops, by (operator, kind): kind 'i' signed, 'u' unsigned, 'f' float, 'b' bool.
_SIMPLE = {
    ("+", "i"): "add",
    ("+", "u"): "add",
    ("+", "f"): "fadd",
    ("-", "i"): "sub",
    ("-", "u"): "sub",
    ("-", "f"): "fsub",
    ("*", "i"): "mul",
    ("*", "u"): "mul",
    ("*", "f"): "fmul",
    ("&", "i"): "and_",
    ("&", "u"): "and_",
    ("&", "b"): "and_",
    ("|", "i"): "or_",
    ("|", "u"): "or_",
    ("|", "b"): "or_",
    ("^", "i"): "xor",
    ("^", "u"): "xor",
    ("^", "b"): "xor",
}

# Python-semantics helpers from pyarith, by operator.
_PYTHON = {
    "/": pyarith.truediv,
    "//": pyarith.floordiv,
    "%": pyarith.mod,
    "**": pyarith.power,
    "<<": pyarith.shift_left,
    ">>": pyarith.shift_right,
}


def lower_binop(ctx: FunctionLowering, op: ir.BinOp) -> None:
    t: Scalar = op.result.type
    a, b = ctx.get(op.lhs), ctx.get(op.rhs)
    if t.kind == "c":
        ctx.set(op.result, cx.binop(ctx, t, op.op, a, b))
        return
    if bf16.involves(t):
        ctx.set(op.result, bf16.binop(ctx, op.op, a, b))
        return
    method = _SIMPLE.get((op.op, t.kind))
    if method == "add" and t.kind == "i" and op.result.id in ctx.non_overflowing_adds:
        # Proved not to overflow (``ir.analysis``): ``nsw`` lets LLVM count loop trips.
        ctx.set(op.result, ctx.builder.add(a, b, flags=("nsw",)))
    elif method is not None:
        ctx.set(op.result, getattr(ctx.builder, method)(a, b))
    elif op.op in _PYTHON:
        lower = _PYTHON[op.op]
        narrow = None
        if ctx.narrow is not None:  # the 32-bit index variant: int32 division where it fits
            narrow = narrowing.division(ctx, op, lambda u, x, y: lower(ctx, u, x, y))
        ctx.set(op.result, lower(ctx, t, a, b) if narrow is None else narrow)
        return
    else:
        raise AssertionError(f"binop {op.op} on {t}")
    if ctx.narrow is not None:  # the 32-bit index variant: an int32 form beside it
        narrowing.binop_form(ctx, op)


def lower_unaryop(ctx: FunctionLowering, op: ir.UnaryOp) -> None:
    t: Scalar = op.result.type
    x = ctx.get(op.operand)
    b = ctx.builder
    if op.op == "+":
        out = x
    elif op.op == "-" and bf16.involves(t):
        out = bf16.negate(b, x)
    elif op.op == "-" and t.kind == "c":
        out = cx.negate(ctx, t, x)
    elif op.op == "-" and t.kind == "f" and t.bits == 16:
        out = half.negate(ctx, x)
    elif op.op == "-" and t.kind == "f":
        # ``fsub -0.0, x`` rather than ``fneg``: the fneg instruction is newer
        # than the LLVM 7 dialect NVVM IR is specified against.
        out = b.fsub(ll.Constant(x.type, -0.0), x)
    elif op.op == "-":
        out = b.sub(ll.Constant(x.type, 0), x)
    elif op.op in ("~", "not"):
        out = b.xor(x, const_int(x.type, -1))  # for i1, -1 is true: logical not
    else:
        raise AssertionError(f"unary {op.op} on {t}")
    ctx.set(op.result, out)


_ICMP = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!="}


def compare(ctx: FunctionLowering, t: Scalar, cmp: str, a: ll.Value, b: ll.Value) -> ll.Value:
    """``a cmp b`` as an i1, with Python's meaning for ``t``."""
    if t.kind == "c":
        return cx.compare(ctx, cmp, a, b)
    if bf16.involves(t):  # compared as float32 values (exact): not float16's instructions
        a, b = bf16.widen_both(ctx, a, b)
        t = float32
    if fp8.involves(t):  # fp8 values compare as their (exact) float32 values
        a, b = (fp8.cast(ctx, t, float32, v, cast) for v in (a, b))
    if t.kind == "f":
        native = half.compare(ctx, cmp, a, b) if t.bits == 16 else None
        if native is not None:
            return native
        # Ordered predicates except ``!=``: any comparison with NaN is False
        # except ``!=``, which is True (IEEE 754, as Python).
        if cmp == "!=":
            return ctx.builder.fcmp_unordered("!=", a, b)
        return ctx.builder.fcmp_ordered(cmp, a, b)
    if t.kind == "i":
        return ctx.builder.icmp_signed(_ICMP[cmp], a, b)
    return ctx.builder.icmp_unsigned(_ICMP[cmp], a, b)  # unsigned ints and bools


def lower_compare(ctx: FunctionLowering, op: ir.Compare) -> None:
    narrow = narrowing.compare_operands(ctx, op) if ctx.narrow is not None else None
    if narrow is not None:  # the 32-bit index variant: both sides lie within int32
        ctx.set(op.result, ctx.builder.icmp_signed(_ICMP[op.op], *narrow))
        return
    ctx.set(op.result, compare(ctx, op.lhs.type, op.op, ctx.get(op.lhs), ctx.get(op.rhs)))


def cast(ctx: FunctionLowering, src: Scalar, dst: Scalar, x: ll.Value) -> ll.Value:  # noqa: C901 -- one branch per pair of scalar kinds, as NumPy's astype defines them
    """Convert ``x`` from ``src`` to ``dst`` with NumPy ``astype`` semantics."""
    b = ctx.builder
    to = scalar_type(dst)
    if src == dst:
        return x
    if src.kind in "Mm" or dst.kind in "Mm":  # datetime64 / timedelta64
        from cujit.codegen import datetimes

        return datetimes.cast(ctx, src, dst, x, cast)
    if src.kind == "c" or dst.kind == "c":
        return cx.cast(ctx, src, dst, x, cast)
    if fp8.involves(src, dst):
        return fp8.cast(ctx, src, dst, x, cast)
    if bf16.involves(src, dst):
        return bf16.cast(ctx, src, dst, x, cast)
    if dst.kind == "b":  # truthiness; NaN is truthy (``une``), as bool(float('nan'))
        if src.kind == "f":
            return b.fcmp_unordered("!=", x, ll.Constant(x.type, 0.0))
        return b.icmp_unsigned("!=", x, ll.Constant(x.type, 0))
    if src.kind == "f" and dst.kind == "f":
        return b.fpext(x, to) if dst.bits > src.bits else b.fptrunc(x, to)
    if src.kind == "f" and src.bits == 16:
        return half.to_int(ctx, dst, x)  # rounds to nearest, as numba's float16 casts
    if src.kind == "f":
        # Truncates toward zero; out-of-range values are undefined in LLVM, as in C
        # and numba (PTX's cvt.rzi would saturate, but LLVM may fold otherwise).
        return b.fptosi(x, to) if dst.kind == "i" else b.fptoui(x, to)
    if dst.kind == "f" and dst.bits == 16 and src.kind in "iu":
        native = half.from_int(ctx, src, x)
        if native is not None:
            return native
    if dst.kind == "f":  # from an int or a bool (bool counts as unsigned: True -> 1.0)
        return b.sitofp(x, to) if src.kind == "i" else b.uitofp(x, to)
    # int <-> int (or bool -> int): the source's signedness decides the extension.
    if dst.bits == x.type.width:
        return x
    if dst.bits < x.type.width:
        return b.trunc(x, to)
    return b.sext(x, to) if src.kind == "i" else b.zext(x, to)


def lower_cast(ctx: FunctionLowering, op: ir.Cast) -> None:
    value = ctx.get(op.operand)
    if isinstance(op.result.type, Array):  # to layout 'A': the same struct, read by strides
        ctx.set(op.result, value)
        return
    src, dst = op.operand.type, op.result.type
    narrow = None
    if ctx.narrow is not None:
        narrow = narrowing.float_operand(ctx, src, dst, op.operand)
    if narrow is not None:  # the 32-bit index variant: an int32 converts in one step
        ctx.set(op.result, cast(ctx, int32, dst, narrow))
        return
    ctx.set(op.result, cast(ctx, src, dst, value))
