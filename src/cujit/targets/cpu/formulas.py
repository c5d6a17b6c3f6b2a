"""LLVM values with Python's operators, for writing host math as formulas.

``F(ctx, value)`` wraps an LLVM float or integer value; ``+ - * /``, comparisons,
``&``/``|`` on predicates and ``where`` emit instructions at the builder's position,
and Python numbers become constants of the other operand's type.  Integer
operations are signed unless ``unsigned=True`` (``/`` and ``>>`` and the compares
depend on it).  The CPU target's libdevice functions (``libdevice.py``,
``rounding.py``) are written with it.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.context import FunctionLowering

_FLOATS = (ll.FloatType, ll.DoubleType, ll.HalfType)
_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


class F:
    """One LLVM value and the lowering it is built in."""

    def __init__(self, ctx: FunctionLowering, value: ll.Value, unsigned: bool = False):
        self.ctx, self.v, self.unsigned = ctx, value, unsigned

    @property
    def b(self) -> ll.IRBuilder:
        return self.ctx.builder

    @property
    def is_float(self) -> bool:
        return isinstance(self.v.type, _FLOATS)

    def lift(self, other) -> ll.Value:
        return other.v if isinstance(other, F) else ll.Constant(self.v.type, other)

    def _new(self, v: ll.Value) -> F:
        return F(self.ctx, v, self.unsigned)

    def _arith(self, other, fop: str, iop: str, swap: bool = False) -> F:
        a, c = self.v, self.lift(other)
        if swap:
            a, c = c, a
        return self._new(getattr(self.b, fop if self.is_float else iop)(a, c))

    def __add__(self, o):
        return self._arith(o, "fadd", "add")

    def __radd__(self, o):
        return self._arith(o, "fadd", "add", True)

    def __sub__(self, o):
        return self._arith(o, "fsub", "sub")

    def __rsub__(self, o):
        return self._arith(o, "fsub", "sub", True)

    def __mul__(self, o):
        return self._arith(o, "fmul", "mul")

    def __rmul__(self, o):
        return self._arith(o, "fmul", "mul", True)

    def __truediv__(self, o):
        return self._arith(o, "fdiv", "udiv" if self.unsigned else "sdiv")

    def __rtruediv__(self, o):
        return self._arith(o, "fdiv", "udiv" if self.unsigned else "sdiv", True)

    def __and__(self, o):
        return self._arith(o, "and_", "and_")

    def __or__(self, o):
        return self._arith(o, "or_", "or_")

    def __xor__(self, o):
        return self._arith(o, "xor", "xor")

    def __lshift__(self, o):
        return self._arith(o, "shl", "shl")

    def __rshift__(self, o):
        return self._arith(
            o, "lshr" if self.unsigned else "ashr", "lshr" if self.unsigned else "ashr"
        )

    def __neg__(self):
        return self._new(self.b.fneg(self.v)) if self.is_float else 0 - self

    def _compare(self, other, name: str) -> F:
        op, c = _CMP[name], self.lift(other)
        if self.is_float:  # ordered: false for NaN, as Python's
            return F(self.ctx, self.b.fcmp_ordered(op, self.v, c))
        cmp = self.b.icmp_unsigned if self.unsigned else self.b.icmp_signed
        return F(self.ctx, cmp(op, self.v, c))

    def __lt__(self, o):
        return self._compare(o, "lt")

    def __le__(self, o):
        return self._compare(o, "le")

    def __gt__(self, o):
        return self._compare(o, "gt")

    def __ge__(self, o):
        return self._compare(o, "ge")

    def eq(self, o) -> F:
        return self._compare(o, "eq")

    def ne(self, o) -> F:
        return self._compare(o, "ne")

    def where(self, yes, no) -> F:
        """``yes if self else no`` (``self`` a predicate)."""
        ref = yes if isinstance(yes, F) else no
        return ref._new(self.b.select(self.v, ref.lift(yes), ref.lift(no)))

    def to(self, ty: ll.Type, unsigned: bool | None = None) -> F:
        """Converted to ``ty``: float<->float, int<->int (by this value's signedness), bits
        kept for same-width float<->int is ``bitcast``, not this."""
        b, u = self.b, self.unsigned if unsigned is None else unsigned
        src = self.v.type
        if src == ty:
            return F(self.ctx, self.v, u)
        if self.is_float and isinstance(ty, _FLOATS):
            widen = _width(ty) > _width(src)
            return F(self.ctx, b.fpext(self.v, ty) if widen else b.fptrunc(self.v, ty), u)
        if not self.is_float and not isinstance(ty, _FLOATS):
            if ty.width < src.width:
                return F(self.ctx, b.trunc(self.v, ty), u)
            return F(self.ctx, (b.zext if self.unsigned else b.sext)(self.v, ty), u)
        if self.is_float:
            raise TypeError("float to int: use to_int (saturating)")
        return F(self.ctx, (b.uitofp if self.unsigned else b.sitofp)(self.v, ty), u)

    def bitcast(self, ty: ll.Type) -> F:
        return F(self.ctx, self.b.bitcast(self.v, ty))


def _width(t: ll.Type) -> int:
    return {ll.HalfType: 16, ll.FloatType: 32, ll.DoubleType: 64}[type(t)]


def intrinsic(name: str, ret: ll.Type, *args, extra: tuple = ()) -> F:
    """``llvm.<name>`` over F operands (and constant ``extra`` operands)."""
    ctx = args[0].ctx
    values = [a.v for a in args] + list(extra)
    f = ctx.declare(f"llvm.{name}", ret, [v.type for v in values])
    return F(ctx, ctx.builder.call(f, values), args[0].unsigned)


def libc(name: str, *args: F, ret: ll.Type | None = None) -> F:
    """The C library's ``name`` over F operands, returning the first operand's type."""
    ctx = args[0].ctx
    ret = ret or args[0].v.type
    f = ctx.declare(name, ret, [a.v.type for a in args])
    return F(ctx, ctx.builder.call(f, [a.v for a in args]))


__all__ = ["F", "intrinsic", "libc"]
