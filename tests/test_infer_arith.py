"""Stage 4, type inference: a whole kernel typed exactly, and numba's promotion table for
binary ops, compares and unary ops (reasoned from ``numba/core/typing/builtins.py``)."""

from __future__ import annotations

import pytest
from infer_helpers import F32_1D, B, infer, op_of, ops, text

from cujit import cuda, ir
from cujit.diagnostics import TypingError
from cujit.types import (
    Array,
    boolean,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint32,
    uint64,
)

# -- a whole kernel -------------------------------------------------------------


def test_saxpy_types_exactly():
    # i = cuda.grid(1); if i < x.size: out[i] = a * x[i] + y[i]
    b = B("a", "x", "y", "out")
    a, x, y, out = b.args
    i = b.call(b.attr(b.const(cuda), "grid"), b.const(1))
    cond = b.compare("<", i, b.attr(x, "size"))
    body, _ = b.block()
    done, _ = b.block()
    b.branch(cond, body, done)
    b.at(body)
    s = b.binop("+", b.binop("*", a, b.getitem(x, i)), b.getitem(y, i))
    b.setitem(out, i, s)
    b.jump(done)
    b.at(done)
    b.ret(b.const(None))
    fn = infer(b, float32, F32_1D, F32_1D, F32_1D)
    assert (
        text(fn)
        == """\
func k(%0: float32 a, %1: array(float32, 1d, C) x, %2: array(float32, 1d, C) y, \
%3: array(float32, 1d, C) out) -> void
block0(%0: float32, %1: array(float32, 1d, C), %2: array(float32, 1d, C), \
%3: array(float32, 1d, C)):
  %4: pyobject(module cujit.cuda) = const <module cujit.cuda>
  %5: pyobject(cujit.cuda.grid) = const <cujit.cuda.grid>
  %6: int64 = const 1
  %7: int64 = intrinsic cuda.grid () {ndim=1}
  %8: int64 = intrinsic array.size (%1) ()
  %9: bool = compare < %7 %8
  branch %9, block1(), block2()
block1:
  %10: float32 = getitem %1 %7
  %11: float32 = binop * %0 %10
  %12: float32 = getitem %2 %7
  %13: float32 = binop + %11 %12
  setitem %3 %7 %13
  jump block2()
block2:
  %14: none = const none
  return none
"""
    )


# -- the promotion table ------------------------------------------------------------

BINOP_CASES = [
    # (op, lhs, rhs, operand type, result type, the numba rule)
    ("+", int32, int32, int64, int64, "integer_binop_cases: machine ints only, >= 64 bits"),
    ("+", uint32, uint32, uint64, uint64, "choose_result_int: unsigned when no input is signed"),
    ("+", uint64, int64, int64, int64, "choose_result_int: signed when any input is signed"),
    ("+", bool, bool, int64, int64, "bool converts to int64 for arithmetic"),
    ("+", float32, int64, float64, float64, "int64 -> float32 is unsafe; both go to float64"),
    ("+", float32, int32, float64, float64, "int32 -> float32 is unsafe too"),
    ("+", float32, int16, float32, float32, "int16 -> float32 is safe"),
    ("*", float32, float64, float64, float64, "real_domain cases: same-type only"),
    ("+", float32, bool, float32, float32, "bool -> float32 is safe"),
    ("/", int64, int64, float64, float64, "BinOpTrueDiv: machine ints give float64"),
    ("/", int32, int32, float64, float64, "BinOpTrueDiv: ints widen then divide in float64"),
    ("/", float32, float32, float32, float32, "real_domain case"),
    ("//", int32, int32, int64, int64, "BinOpFloorDiv uses integer_binop_cases"),
    ("%", float32, float32, float32, float32, "BinOpMod real_domain case"),
    ("**", int32, int32, int64, int64, "BinOpPower uses integer_binop_cases"),
    ("**", float32, int64, float32, float32, "BinOpPower: float32 ** int stays float32"),
    ("**", int64, float32, float64, float64, "int64 -> float32 unsafe: float64 ** float64"),
    ("<<", int32, int64, int64, int64, "shift: max(lhs, intp), lhs signedness"),
    ("<<", uint32, int64, uint64, uint64, "shift: max(lhs, uintp) for unsigned lhs"),
    ("&", bool, bool, boolean, boolean, "BitwiseLogicOperation: (bool, bool) -> bool"),
    ("&", int32, bool, int64, int64, "BitwiseLogicOperation: integer_binop_cases"),
]


def _scalar_arg(t):
    return boolean if t is bool else t


@pytest.mark.parametrize(
    "op,lt,rt,operand,result,why", BINOP_CASES, ids=[f"{c[1]}{c[0]}{c[2]}" for c in BINOP_CASES]
)
def test_binop_promotion(op, lt, rt, operand, result, why):
    b = B("p", "q", "out")
    p, q, out = b.args
    r = b.binop(op, p, q)
    b.setitem(out, b.const(0), r)
    b.ret()
    fn = infer(b, _scalar_arg(lt), _scalar_arg(rt), Array(float64, 1, "C"))
    bop = op_of(fn, r)
    assert bop.result.type == result, why
    assert bop.lhs.type == bop.rhs.type == operand, why


COMPARE_CASES = [
    (int32, int32, int32, "OrderedCmpOp has a case for every integer type"),
    (uint64, int64, float64, "unification of uint64 and a signed int is float64"),
    (int8, uint8, int16, "unification: the smallest signed type holding both"),
    (float32, int64, float64, "unification of float32 and int64"),
    (float32, int8, float32, "unification: int8 fits float32"),
]


@pytest.mark.parametrize("lt,rt,common,why", COMPARE_CASES)
def test_compare_unifies_operands(lt, rt, common, why):
    b = B("p", "q", "out")
    p, q, out = b.args
    c = b.compare("<", p, q)
    b.setitem(out, b.const(0), c)
    b.ret()
    fn = infer(b, lt, rt, Array(boolean, 1, "C"))
    cmp = op_of(fn, c)
    assert cmp.result.type == boolean
    assert cmp.lhs.type == cmp.rhs.type == common, why


@pytest.mark.parametrize(
    "op,t,result",
    [
        ("-", boolean, int64),  # UnaryOp: (bool) -> intp
        ("-", int8, int64),  # choose_result_int widens small ints
        ("-", uint32, uint64),
        ("-", float32, float32),
        ("~", boolean, boolean),  # BitwiseInvert: numpy semantics, bool stays bool
        ("~", int32, int64),
    ],
)
def test_unary_types(op, t, result):
    b = B("p", "out")
    r = b.unary(op, b.args[0])
    b.setitem(b.args[1], b.const(0), r)
    b.ret()
    fn = infer(b, t, Array(float64, 1, "C"))
    u = op_of(fn, r)
    assert u.result.type == u.operand.type == result


def test_float_scalar_literal_promotes_like_numba():
    # out[i] = x[i] * 2.0 with float32 x: float32 * float64 -> float64, then the
    # store casts back to float32 (setitem converts to the dtype).
    b = B("x", "out")
    x, out = b.args
    r = b.binop("*", b.getitem(x, b.const(0)), b.const(2.0))
    b.setitem(out, b.const(0), r)
    b.ret()
    fn = infer(b, F32_1D, F32_1D)
    assert op_of(fn, r).result.type == float64
    (store,) = ops(fn, ir.SetItem)
    assert store.value.type == float32
    assert op_of(fn, store.value).operand.id == r.id


def test_bitwise_on_float_is_a_typing_error():
    b = B("p", "q")
    b.binop("&", *b.args)
    b.ret()
    with pytest.raises(
        TypingError,
        match=r"unsupported operand types for &: 'float32' and "
        r"'int64'",
    ) as e:
        infer(b, float32, int64)
    assert e.value.loc.line == 1
