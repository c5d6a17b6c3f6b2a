"""Stage 4, type inference: block parameters (loop-carried variables widen like numba's
unification, undefined values, branch conditions)."""

from __future__ import annotations

import pytest
from infer_helpers import F32_1D, B, infer, op_of, ops

from cujit import ir
from cujit.diagnostics import TypingError
from cujit.types import (
    Array,
    RangeIter,
    boolean,
    float32,
    float64,
    int32,
    int64,
)

# -- block parameters --------------------------------------------------------------


def _sum_loop(init):
    """s = init; for k in range(x.shape[0]): s = s + x[k]; out[0] = s"""
    b = B("x", "out")
    x, out = b.args
    s0 = b.const(init)
    n = b.getitem(b.attr(x, "shape"), b.const(0))
    it0 = b.emit(ir.GetIter, obj=b.call(range, n))
    head, (s, it) = b.block(2)
    body, _ = b.block()
    exit_, _ = b.block()
    b.jump(head, s0, it0)
    b.at(head)
    b.branch(b.emit(ir.IterValid, iter=it), body, exit_)
    b.at(body)
    k = b.emit(ir.IterValue, iter=it)
    nxt = b.emit(ir.IterNext, iter=it)
    s2 = b.binop("+", s, b.getitem(x, k))
    b.jump(head, s2, nxt)
    b.at(exit_)
    b.setitem(out, b.const(0), s)
    b.ret()
    return b, s, it, s0


def test_loop_carried_variable_widens_to_float64():
    b, _, _, s0 = _sum_loop(0)
    fn = infer(b, F32_1D, F32_1D)
    head = fn.block(1)
    # int64 (the literal 0) unified with int64 + float32 = float64 gives float64.
    assert [p.type for p in head.params] == [float64, RangeIter(int64)]
    entry = fn.block(0)
    assert entry.term.args[0].type == float64
    cast = op_of(fn, entry.term.args[0])
    assert isinstance(cast, ir.Cast) and cast.operand.id == s0.id
    rng = next(op for op in ops(fn, ir.Intrinsic) if op.name == "range")
    assert [a.type for a in rng.args] == [int64] * 3


def test_loop_carried_int_stays_int_without_casts():
    b, *_ = _sum_loop(0)
    fn = infer(b, Array(int32, 1, "C"), Array(int64, 1, "C"))
    assert fn.block(1).params[0].type == int64
    assert ops(fn, ir.Cast) == [op for op in ops(fn, ir.Cast) if op.result.type == int64]


def test_undef_takes_the_type_of_its_merge_partner():
    # if c: v = x[0]   (v unset otherwise); out[0] = v
    b = B("c", "x", "out")
    c, x, out = b.args
    u = b.emit(ir.Undef, name="v")
    then, _ = b.block()
    merge, (v,) = b.block(1)
    b.branch(c, then, merge, else_args=[u])
    b.at(then)
    b.jump(merge, b.getitem(x, b.const(0)))
    b.at(merge)
    b.setitem(out, b.const(0), v)
    b.ret()
    fn = infer(b, boolean, F32_1D, F32_1D)
    assert fn.block(merge).params[0].type == float32
    assert op_of(fn, u).result.type == float32


def test_variable_used_before_assignment_names_it():
    b = B("c", "out")
    out = b.args[1]
    u = b.emit(ir.Undef, name="v")
    merge, (v,) = b.block(1)
    b.jump(merge, u)
    b.at(merge)
    b.setitem(out, b.const(0), b.binop("+", v, b.const(1)))
    b.ret()
    with pytest.raises(TypingError, match="local variable 'v' may be used before"):
        infer(b, boolean, F32_1D)


def test_int_on_one_path_and_array_on_another():
    b = B("c", "x")
    c, x = b.args
    one = b.const(1)  # line 1: the int assignment
    merge, _ = b.block(1)
    other, _ = b.block()
    b.branch(c, merge, other, then_args=[one])
    b.at(other)
    b.jump(merge, x)
    b.at(merge)
    b.ret()
    with pytest.raises(
        TypingError,
        match=r"holds int64 on one path and array\(float32, 1d, C\) "
        "on another",
    ) as e:
        infer(b, boolean, F32_1D)
    assert e.value.loc.file == "kernel.py"


def test_non_bool_branch_condition_is_converted():
    b = B("n")
    t, _ = b.block()
    b.branch(b.args[0], t, t)
    b.at(t)
    b.ret()
    fn = infer(b, int32)
    cond = fn.block(0).term.cond
    assert cond.type == boolean
    assert isinstance(op_of(fn, cond), ir.Cast)


def test_not_of_an_int_is_a_bool_test_then_not():
    b = B("n", "out")
    r = b.unary("not", b.args[0])
    b.setitem(b.args[1], b.const(0), r)
    b.ret()
    fn = infer(b, int32, Array(boolean, 1, "C"))
    u = op_of(fn, r)
    assert u.op == "not" and u.operand.type == boolean and u.result.type == boolean
