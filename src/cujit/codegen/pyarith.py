"""Python's meaning for the operators where it differs from the machine's.

GPUs raise no exceptions, so every case Python rejects gets a defined result
instead of LLVM undefined behaviour or poison:

- ``a // b`` and ``a % b`` floor (the remainder takes the divisor's sign), for
  signed ints and floats.  Integer division by zero gives 0 for both ``//``
  and ``%`` (NumPy's result); ``INT_MIN // -1`` wraps to ``INT_MIN``.  Float
  division by zero gives ``a / b`` for ``//`` (+-inf or nan, as NumPy) and nan
  for ``%``.
- ``a << n`` and ``a >> n`` with ``n`` outside ``[0, bits)`` (``n`` is read as
  unsigned, so negative counts are huge) clamp like PTX's ``shl``/``shr``
  ("PTX ISA", Integer Arithmetic: "shift amounts greater than the register
  width N are clamped to N"): ``<<`` gives 0, ``>>`` gives 0 or, for a negative
  signed ``a``, -1.  LLVM's ``shl``/``ashr``/``lshr`` would be poison there.
- ``a ** n`` on ints is exact repeated squaring, wrapping on overflow; for
  ``n < 0`` (Python would give a float) it gives the truncation toward zero of
  ``1 / a**-n``: 1 for ``a == 1``, +-1 for ``a == -1``, else 0 (and 0 for
  ``a == 0``, where Python raises).  Float ``**`` is the target's ``pow``.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen import checks
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import const_int
from cujit.types import Scalar


def _int_divmod(ctx: FunctionLowering, t: Scalar, a, b):
    """(a // b, a % b) for ints, floored, with the zero and overflow cases defined."""
    bld = ctx.builder
    zero, one = const_int(a.type, 0), const_int(a.type, 1)
    by_zero = bld.icmp_unsigned("==", b, zero)
    checks.check_divisor(ctx, by_zero)  # debug mode: ZeroDivisionError, as Python
    if t.kind == "u":
        safe = bld.select(by_zero, one, b)
        q, r = bld.udiv(a, safe), bld.urem(a, safe)
    else:
        # sdiv is UB for b == 0 and for MIN / -1; divide by 1 in both cases and
        # patch the quotient afterwards (-a wraps MIN to MIN, as NumPy).
        by_m1 = bld.icmp_signed("==", b, const_int(a.type, -1))
        safe = bld.select(bld.or_(by_zero, by_m1), one, b)
        q, r = bld.sdiv(a, safe), bld.srem(a, safe)
        # C truncates; Python floors: step down when the remainder is non-zero
        # and its sign differs from the divisor's.
        adjust = bld.and_(bld.icmp_signed("!=", r, zero), bld.icmp_signed("<", bld.xor(r, b), zero))
        q = bld.select(adjust, bld.sub(q, one), q)
        r = bld.select(adjust, bld.add(r, b), r)
        q = bld.select(by_m1, bld.sub(zero, a), q)
    return bld.select(by_zero, zero, q), bld.select(by_zero, zero, r)


def _float_divmod(ctx: FunctionLowering, t: Scalar, a, b, op: str):
    """(a // b, a % b) for floats, following CPython's ``float_divmod`` step by step
    (so signed zeros and the rounding of the quotient match Python exactly)."""
    bld = ctx.builder
    zero, one, half = (ll.Constant(a.type, v) for v in (0.0, 1.0, 0.5))
    checks.check_float_divisor(ctx, op, b)  # debug mode: ZeroDivisionError, as Python
    mod = ctx.call_math("fmod", t, [a, b])  # exact; LLVM's frem is not on NVPTX
    div = bld.fdiv(bld.fsub(a, mod), b)
    # If the remainder is non-zero and its sign differs from the divisor's,
    # move it into the divisor's sign and step the quotient down.
    nonzero = bld.fcmp_unordered("!=", mod, zero)  # nan counts as non-zero: it stays nan
    signs_differ = bld.xor(bld.fcmp_ordered("<", b, zero), bld.fcmp_ordered("<", mod, zero))
    adjust = bld.and_(nonzero, signs_differ)
    mod = bld.select(adjust, bld.fadd(mod, b), mod)
    div = bld.select(adjust, bld.fsub(div, one), div)
    # A zero remainder takes the divisor's sign (-0.0 for a negative divisor).
    mod = bld.select(nonzero, mod, ctx.call_math("copysign", t, [zero, b]))
    # Snap the quotient to the nearest integer; a zero quotient keeps the sign of a/b.
    floordiv = ctx.call_math("floor", t, [div])
    floordiv = bld.select(
        bld.fcmp_ordered(">", bld.fsub(div, floordiv), half), bld.fadd(floordiv, one), floordiv
    )
    div_zero = bld.fcmp_ordered("==", div, zero)
    floordiv = bld.select(div_zero, ctx.call_math("copysign", t, [zero, bld.fdiv(a, b)]), floordiv)
    # Division by zero: Python raises; NumPy gives a / b (+-inf or nan) and nan.
    floordiv = bld.select(bld.fcmp_ordered("==", b, zero), bld.fdiv(a, b), floordiv)
    return floordiv, mod


def _constant_divisor(t: Scalar, b) -> int | None:
    """``b``'s value where it is a constant that needs none of the cases above: not 0,
    and for signed ints not -1 (``MIN // -1``)."""
    if not isinstance(b, ll.Constant) or not isinstance(b.constant, int):
        return None
    half = 1 << (b.type.width - 1)  # the value as the bits read, whatever int spelt them
    d = (b.constant + half) % (2 * half) - half if t.kind != "u" else b.constant % (2 * half)
    return None if d == 0 or (d == -1 and t.kind != "u") else d


def _int_by_constant(ctx: FunctionLowering, t: Scalar, a, b, d: int, part: str):
    """``a // b`` (``part`` "q") or ``a % b`` ("r") for a divisor constant ``d`` of
    ``_constant_divisor``: only the instructions that part needs (``i // 32`` is one
    shift, ``i % 32`` one mask, where the general case leaves eighteen)."""
    bld = ctx.builder
    if d > 0 and d & (d - 1) == 0:  # 2**k: Python's floor is the arithmetic shift, exactly
        if part == "r":
            return bld.and_(a, const_int(a.type, d - 1))
        k = const_int(a.type, d.bit_length() - 1)
        if t.kind == "u":
            return bld.lshr(a, k)
        neg = bld.icmp_signed("<", a, const_int(a.type, 0))
        return bld.select(neg, bld.ashr(a, k), bld.lshr(a, k))
    if t.kind == "u":
        return bld.udiv(a, b) if part == "q" else bld.urem(a, b)
    r = bld.srem(a, b)
    # The remainder is non-zero with the divisor's opposite sign: floor one step down.
    adjust = bld.icmp_signed("<" if d > 0 else ">", r, const_int(a.type, 0))
    if part == "r":
        return bld.select(adjust, bld.add(r, b), r)
    q = bld.sdiv(a, b)
    return bld.select(adjust, bld.sub(q, const_int(a.type, 1)), q)


def floordiv(ctx: FunctionLowering, t: Scalar, a, b):
    if t.kind == "f":
        return _float_divmod(ctx, t, a, b, "//")[0]
    d = _constant_divisor(t, b)
    if d is not None:
        return _int_by_constant(ctx, t, a, b, d, "q")
    return _int_divmod(ctx, t, a, b)[0]


def mod(ctx: FunctionLowering, t: Scalar, a, b):
    if t.kind == "f":
        return _float_divmod(ctx, t, a, b, "%")[1]
    d = _constant_divisor(t, b)
    if d is not None:
        return _int_by_constant(ctx, t, a, b, d, "r")
    return _int_divmod(ctx, t, a, b)[1]


def truediv(ctx: FunctionLowering, t: Scalar, a, b):
    """Float ``a / b``: IEEE division (+-inf or nan for a zero divisor, as NumPy); in
    debug mode a zero divisor raises ZeroDivisionError, as Python and numba's debug
    builds do, except under fastmath, where numba's float32 ``/`` is an approximate
    divide that checks nothing (the target's ``("divide", type)`` entry, when it has
    one)."""
    fast = ctx.target.math.get(("divide", t.name)) if ctx.target.fastmath else None
    if fast is not None:
        return ctx.call_math("divide", t, [a, b])
    if not ctx.target.fastmath or t.bits != 32:
        checks.check_float_divisor(ctx, "/", b)
    return ctx.builder.fdiv(a, b)


def shift_left(ctx: FunctionLowering, t: Scalar, a, n):
    bld = ctx.builder
    zero = const_int(a.type, 0)
    too_far = bld.icmp_unsigned(">=", n, const_int(a.type, a.type.width))
    # Shift by 0 in the clamped case so no poison value is ever computed.
    shifted = bld.shl(a, bld.select(too_far, zero, n))
    return bld.select(too_far, zero, shifted)


def shift_right(ctx: FunctionLowering, t: Scalar, a, n):
    bld = ctx.builder
    width = a.type.width
    too_far = bld.icmp_unsigned(">=", n, const_int(a.type, width))
    if t.kind == "i":  # arithmetic: clamped, every bit becomes the sign bit
        return bld.ashr(a, bld.select(too_far, const_int(a.type, width - 1), n))
    zero = const_int(a.type, 0)
    return bld.select(too_far, zero, bld.lshr(a, bld.select(too_far, zero, n)))


def power(ctx: FunctionLowering, t: Scalar, a, n):
    if t.kind == "f":
        return ctx.call_math("pow", t, [a, n])
    return ctx.builder.call(_int_power_function(ctx, t, a.type), [a, n])


def _int_power_function(ctx: FunctionLowering, t: Scalar, ty: ll.IntType) -> ll.Function:
    """An internal helper ``ipow(a, n)`` per int type: a loop is simplest as its own
    function (the caller's block structure stays one LLVM block per IR block);
    it is ``alwaysinline``, so the optimiser folds it back in."""
    name = f"cujit.ipow.{t.name}"
    existing = ctx.module.globals.get(name)
    if existing is not None:
        return existing
    f = ll.Function(ctx.module, ll.FunctionType(ty, [ty, ty]), name)
    f.linkage = "internal"
    f.attributes.add("alwaysinline")
    f.attributes.add("nounwind")
    base, exp = f.args
    entry, loop, done = (f.append_basic_block(n) for n in ("entry", "loop", "done"))
    bld = ll.IRBuilder(entry)
    zero, one = const_int(ty, 0), const_int(ty, 1)
    negative = bld.icmp_signed("<", exp, zero) if t.kind == "i" else ll.Constant(ll.IntType(1), 0)
    start = bld.select(negative, zero, exp)
    bld.branch(loop)
    bld.position_at_end(loop)
    acc, sq, e = bld.phi(ty, "acc"), bld.phi(ty, "sq"), bld.phi(ty, "e")
    odd = bld.trunc(e, ll.IntType(1))
    acc_next = bld.select(odd, bld.mul(acc, sq), acc)
    sq_next, e_next = bld.mul(sq, sq), bld.lshr(e, one)
    for phi, init, nxt in ((acc, one, acc_next), (sq, base, sq_next), (e, start, e_next)):
        phi.add_incoming(init, entry)
        phi.add_incoming(nxt, loop)
    bld.cbranch(bld.icmp_unsigned("==", e_next, zero), done, loop)
    bld.position_at_end(done)
    result = acc_next
    if t.kind == "i":  # n < 0: trunc(1 / a**-n) is +-1 for |a| == 1, else 0
        minus_one = const_int(ty, -1)
        odd_exp = bld.trunc(exp, ll.IntType(1))
        inv = bld.select(
            bld.icmp_signed("==", base, one),
            one,
            bld.select(
                bld.icmp_signed("==", base, minus_one), bld.select(odd_exp, minus_one, one), zero
            ),
        )
        result = bld.select(negative, inv, acc_next)
    bld.ret(result)
    return f
