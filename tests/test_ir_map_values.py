"""``ir.map_values`` maps an op's operands and its result in one copy, and gives back
the op itself when nothing changes (passes compare ops by identity)."""

import dataclasses

import pytest

from cujit import ir
from cujit.diagnostics import Loc
from cujit.ir.core import Value

LOC = Loc("kernel.py", 3)


def _binop():
    return ir.BinOp(loc=LOC, result=Value(3), op="+", lhs=Value(1), rhs=Value(2))


def _shift(by: int, ids=None):
    def fn(v: Value) -> Value:
        return Value(v.id + by, v.type) if ids is None or v.id in ids else v

    return fn


def test_operands_and_result_mapped_in_one_copy():
    op = _binop()
    new = ir.map_values(op, _shift(10))
    assert (new.result.id, new.lhs.id, new.rhs.id) == (13, 11, 12)
    assert (new.op, new.loc) == ("+", LOC)
    assert new == dataclasses.replace(op, result=Value(13), lhs=Value(11), rhs=Value(12))
    assert (op.result.id, op.lhs.id, op.rhs.id) == (3, 1, 2)  # the original is unchanged


@pytest.mark.parametrize(
    ("ids", "changed"),
    [({3}, ("result",)), ({2}, ("rhs",)), ({1, 3}, ("lhs", "result"))],
)
def test_only_what_changes_is_replaced(ids, changed):
    op = _binop()
    new = ir.map_values(op, _shift(10, ids))
    for name in ("result", "lhs", "rhs"):
        same = getattr(new, name) is getattr(op, name)
        assert same == (name not in changed), name


def test_nothing_changed_gives_the_op_itself():
    op = _binop()
    assert ir.map_values(op, lambda v: v) is op


def test_an_op_without_a_result_and_tuple_operands():
    jump = ir.Jump(loc=LOC, target=4, args=(Value(1), Value(2)))
    new = ir.map_values(jump, _shift(5, {2}))
    assert new.target == 4 and [v.id for v in new.args] == [1, 7]
    assert new.args[0] is jump.args[0]
    assert new.result is None
