"""Stage 5, rewrite passes: constant folding, dead-code elimination and block merging
on hand-built typed IR, and the whole pass list on the kernel set.

Expected folded values are worked out by hand from the machine semantics
(two's complement wrap-around, IEEE float32 rounding, Python's floor division),
not read back from the code under test.
"""

from __future__ import annotations

import math

import pytest

from cujit import ir
from cujit.diagnostics import Loc
from cujit.passes import (
    DEFAULT_PASSES,
    eliminate_dead_code,
    fold_constants,
    merge_blocks,
    run_passes,
)
from cujit.types import (
    Array,
    PyObject,
    Tuple,
    boolean,
    float32,
    float64,
    int8,
    int32,
    int64,
    none,
    uint8,
    uint32,
    uint64,
    void,
)

L = Loc("kernel.py", 1, 0)


class T:
    """A builder of typed IR: ``v = t.op(cls, type, **fields)``."""

    def __init__(self, *arg_types):
        self.next_id = 0
        self.args = [self.value(a) for a in arg_types]
        self.blocks: dict[int, list] = {0: [tuple(self.args), [], None]}
        self.cur = 0

    def value(self, t) -> ir.Value:
        self.next_id += 1
        return ir.Value(self.next_id - 1, t)

    def block(self, *param_types) -> tuple[int, list[ir.Value]]:
        params = [self.value(t) for t in param_types]
        bid = len(self.blocks)
        self.blocks[bid] = [tuple(params), [], None]
        return bid, params

    def at(self, bid):
        self.cur = bid

    def op(self, cls, t=None, **fields):
        res = self.value(t) if t is not None else None
        op = cls(loc=L, **({"result": res} if res is not None else {}), **fields)
        self.blocks[self.cur][1].append(op)
        return res

    def const(self, value, t):
        return self.op(ir.Const, t, value=value)

    def term(self, cls, **fields):
        self.blocks[self.cur][2] = cls(loc=L, **fields)

    def build(self) -> ir.Function:
        blocks = tuple(ir.Block(b, p, tuple(o), term) for b, (p, o, term) in self.blocks.items())
        fn = ir.Function("k", tuple(f"a{i}" for i in range(len(self.args))), blocks, L, void)
        ir.verify(fn, typed=True)
        return fn


def defining(fn: ir.Function, v: ir.Value):
    for op in fn.all_ops():
        if op.result is not None and op.result.id == v.id:
            return op
    return None


def _fold_one(build):
    """Build ``out[0] = <expr>`` with ``build(t)`` returning the expr; fold; return its op."""
    t = T(Array(float64, 1, "A"))
    r = build(t)
    t.op(
        ir.SetItem,
        obj=t.args[0],
        index=t.const(0, int64),
        value=t.op(ir.Cast, float64, operand=r) if r.type != float64 else r,
    )
    t.term(ir.Return)
    fn = fold_constants(t.build())
    ir.verify(fn, typed=True)
    return defining(fn, r)


def binop(ty, op, a, b):
    return lambda t: t.op(ir.BinOp, ty, op=op, lhs=t.const(a, ty), rhs=t.const(b, ty))


FOLDS = [
    # wrap-around to the type's width
    (int8, "+", 127, 1, -128),
    (uint8, "-", 0, 1, 255),
    (int64, "+", 2**63 - 1, 1, -(2**63)),
    (int64, "*", 2**62, 4, 0),
    (uint32, "*", 2**31, 2, 0),
    (int64, "**", 3, 41, 3**41 - 2 * 2**64),  # 3**41 is in [2 * 2**64, 2 * 2**64 + 2**63)
    (int64, "**", 3, 4, 81),
    # Python's floor division and modulo (sign of the divisor)
    (int32, "//", -7, 2, -4),
    (int32, "%", -7, 2, 1),
    (int32, "%", 7, -2, -1),
    (int32, "//", 7, -2, -4),
    (int64, "//", -(2**63), -1, -(2**63)),  # the one overflowing quotient wraps
    (float64, "//", -7.0, 2.0, -4.0),
    (float64, "%", -7.5, 2.0, 0.5),
    (float64, "%", 7.5, -2.0, -0.5),
    # shifts: arithmetic right shift for signed, logical for unsigned
    (int64, ">>", -8, 1, -4),
    (int64, "<<", 1, 63, -(2**63)),
    (uint64, ">>", 2**64 - 1, 60, 15),
    (int64, "&", -1, 255, 255),
    (boolean, "^", True, True, False),
    (boolean, "|", False, True, True),
    # float32 rounds every result to float32
    (float32, "+", 0.10000000149011612, 0.20000000298023224, 0.30000001192092896),
    (float32, "/", 1.0, 3.0, 0.3333333432674408),
    (float32, "*", 9.999999680285692e37, 10.0, math.inf),  # float32(1e38) * 10 overflows
    (float64, "+", 0.1, 0.2, 0.30000000000000004),
]


@pytest.mark.parametrize("ty,op,a,b,want", FOLDS, ids=[f"{c[0]}{c[1]}{c[2]},{c[3]}" for c in FOLDS])
def test_binop_folds_with_machine_semantics(ty, op, a, b, want):
    folded = _fold_one(binop(ty, op, a, b))
    assert isinstance(folded, ir.Const)
    assert folded.value == want and type(folded.value) is type(want)
    assert folded.result.type == ty


def test_float32_fold_rounds_to_float32():
    # 2**24 + 1 needs 25 bits: in float32 it rounds (to even) back to 2**24,
    # where a float64 computation would keep 16777217.
    folded = _fold_one(binop(float32, "+", 16777216.0, 1.0))
    assert folded.value == 16777216.0


@pytest.mark.parametrize(
    "ty,op,a,b",
    [
        (int64, "//", 5, 0),
        (int64, "%", 5, 0),
        (uint8, "//", 1, 0),
        (float64, "/", 1.0, 0.0),
        (float32, "//", 1.0, 0.0),
        (float64, "%", 1.0, 0.0),
        (int64, "<<", 1, 64),
        (int32, ">>", 1, -1),
        (int64, "**", 2, -1),
    ],
)
def test_undefined_or_trapping_results_are_not_folded(ty, op, a, b):
    folded = _fold_one(binop(ty, op, a, b))
    assert isinstance(folded, ir.BinOp)


@pytest.mark.parametrize(
    "ty,op,a,want",
    [
        (int8, "-", -128, -128),
        (uint8, "~", 0, 255),
        (int64, "~", 5, -6),
        (float32, "-", 1.5, -1.5),
        (boolean, "not", True, False),
        (boolean, "~", False, True),
    ],
)
def test_unary_folds(ty, op, a, want):
    folded = _fold_one(lambda t: t.op(ir.UnaryOp, ty, op=op, operand=t.const(a, ty)))
    assert isinstance(folded, ir.Const) and folded.value == want


@pytest.mark.parametrize(
    "ty,op,a,b,want",
    [
        (int64, "<", -1, 0, True),
        (uint64, ">", 2**64 - 1, 0, True),
        (float64, "!=", math.nan, math.nan, True),  # NaN is unordered
        (float64, "==", math.nan, math.nan, False),
        (float32, "<=", 1.5, 1.5, True),
    ],
)
def test_compare_folds(ty, op, a, b, want):
    folded = _fold_one(
        lambda t: t.op(ir.Compare, boolean, op=op, lhs=t.const(a, ty), rhs=t.const(b, ty))
    )
    assert isinstance(folded, ir.Const) and folded.value is want


@pytest.mark.parametrize(
    "src,dst,a,want",
    [
        (float32, int32, 3.7, 3),  # truncates toward zero
        (float64, int32, -3.7, -3),
        (int64, int8, 300, 44),  # 300 - 256
        (int64, uint32, -1, 2**32 - 1),
        (int64, float32, 16777217, 16777216.0),  # 2**24 + 1 is not a float32
        (float64, float32, 0.1, 0.10000000149011612),
        (uint64, float32, 2**64 - 1, 18446744073709551616.0),
        (float64, boolean, 2.5, True),
        (float64, boolean, 0.0, False),
        (boolean, float64, True, 1.0),
        (boolean, int32, True, 1),
    ],
)
def test_cast_folds(src, dst, a, want):
    folded = _fold_one(lambda t: t.op(ir.Cast, dst, operand=t.const(a, src)))
    assert isinstance(folded, ir.Const)
    assert folded.value == want and type(folded.value) is type(want)


@pytest.mark.parametrize("a", [math.nan, math.inf, 1e20, -3e9])
def test_out_of_range_float_to_int_is_not_folded(a):
    folded = _fold_one(lambda t: t.op(ir.Cast, int32, operand=t.const(a, float64)))
    assert isinstance(folded, ir.Cast)


def test_folds_chain_through_results():
    # (1 + 2) * 3 folds completely: the first fold feeds the second.
    def build(t):
        s = t.op(ir.BinOp, int64, op="+", lhs=t.const(1, int64), rhs=t.const(2, int64))
        return t.op(ir.BinOp, int64, op="*", lhs=s, rhs=t.const(3, int64))

    assert _fold_one(build).value == 9


def _branch_on(cond_value):
    t = T(Array(int64, 1, "C"))
    cond = t.const(cond_value, boolean)
    yes, (p,) = t.block(int64)
    no, _ = t.block()
    t.term(ir.Branch, cond=cond, then_target=yes, else_target=no, then_args=(t.const(7, int64),))
    t.at(yes)
    t.op(ir.SetItem, obj=t.args[0], index=t.const(0, int64), value=p)
    t.term(ir.Return)
    t.at(no)
    t.term(ir.Return)
    return t.build()


@pytest.mark.parametrize("cond_value,target", [(True, 1), (False, 2)])
def test_branch_on_a_constant_becomes_a_jump(cond_value, target):
    fn = fold_constants(_branch_on(cond_value))
    term = fn.blocks[0].term
    assert isinstance(term, ir.Jump) and term.target == target
    assert len(term.args) == (1 if target == 1 else 0)


def test_folded_branch_then_dce_drops_the_dead_arm():
    fn = run_passes(_branch_on(True), [fold_constants, eliminate_dead_code])
    assert [b.id for b in fn.blocks] == [0, 1]
    ir.verify(fn, typed=True)


# -- dead-code elimination ------------------------------------------------------------


def test_dce_removes_dead_pure_ops_and_keeps_effects():
    t = T(Array(float32, 1, "C"), int64)
    arr, unused_arg = t.args
    mod = t.const(math, PyObject(math))
    dead = t.op(ir.BinOp, int64, op="+", lhs=t.args[1], rhs=t.args[1])
    dead_shared = t.op(
        ir.Intrinsic,
        Array(float32, 1, "C"),
        name="shared.array",
        args=(),
        attrs=(("shape", (4,)), ("dtype", float32)),
    )
    local = t.op(
        ir.Intrinsic,
        Array(float32, 1, "C"),
        name="local.array",
        args=(),
        attrs=(("shape", (4,)), ("dtype", float32)),
    )
    zero = t.const(0, int64)
    one = t.const(1.0, float32)
    t.op(ir.SetItem, obj=local, index=zero, value=one)
    sync = t.op(ir.Intrinsic, none, name="cuda.syncthreads", args=())
    old = t.op(ir.Intrinsic, float32, name="atomic.add", args=(arr, zero, one))
    t.term(ir.Return)
    fn = eliminate_dead_code(t.build())
    ir.verify(fn, typed=True)
    kept = {op.result.id for op in fn.blocks[0].ops if op.result is not None}
    assert mod.id not in kept and dead.id not in kept and dead_shared.id not in kept
    assert {local.id, zero.id, one.id, sync.id, old.id} <= kept
    assert any(isinstance(op, ir.SetItem) for op in fn.blocks[0].ops)
    assert fn.blocks[0].params == (arr, unused_arg)  # kernel arguments are never removed


def test_dce_removes_unreachable_blocks_and_dead_loop_params():
    # block0: jump block1(0, 0)
    # block1(i, dead): branch i < 10, block2, block3
    # block2: jump block1(i + 1, dead + 1)     -- `dead` only feeds itself
    # block3: out[0] = i;  return
    # block4: (no predecessor) return
    t = T(Array(int64, 1, "C"))
    zero = t.const(0, int64)
    head, (i, dead) = t.block(int64, int64)
    body, _ = t.block()
    exit_, _ = t.block()
    orphan, _ = t.block()
    t.term(ir.Jump, target=head, args=(zero, zero))
    t.at(head)
    c = t.op(ir.Compare, boolean, op="<", lhs=i, rhs=t.const(10, int64))
    t.term(ir.Branch, cond=c, then_target=body, else_target=exit_)
    t.at(body)
    one = t.const(1, int64)
    i2 = t.op(ir.BinOp, int64, op="+", lhs=i, rhs=one)
    dead2 = t.op(ir.BinOp, int64, op="+", lhs=dead, rhs=one)
    t.term(ir.Jump, target=head, args=(i2, dead2))
    t.at(exit_)
    t.op(ir.SetItem, obj=t.args[0], index=zero, value=i)
    t.term(ir.Return)
    t.at(orphan)
    t.term(ir.Return)
    fn = eliminate_dead_code(t.build())
    ir.verify(fn, typed=True)
    assert [b.id for b in fn.blocks] == [0, head, body, exit_]
    assert fn.block(head).params == (i,)
    assert fn.block(body).term.args == (i2,)
    assert dead2.id not in {op.result.id for op in fn.block(body).ops if op.result}


# -- block merging -------------------------------------------------------------------


def test_merge_blocks_joins_a_chain_and_substitutes_params():
    # block0: jump block1(1)   block1(p): jump block2()   block2: out[p] = p; return
    t = T(Array(int64, 1, "C"))
    one = t.const(1, int64)
    b1, (p,) = t.block(int64)
    b2, _ = t.block()
    t.term(ir.Jump, target=b1, args=(one,))
    t.at(b1)
    t.term(ir.Jump, target=b2)
    t.at(b2)
    t.op(ir.SetItem, obj=t.args[0], index=p, value=p)
    t.term(ir.Return)
    fn = merge_blocks(t.build())
    ir.verify(fn, typed=True)
    assert len(fn.blocks) == 1
    (store,) = [op for op in fn.blocks[0].ops if isinstance(op, ir.SetItem)]
    assert store.index == one and store.value == one
    assert isinstance(fn.blocks[0].term, ir.Return)


def test_merge_blocks_leaves_joins_and_loop_headers():
    # A diamond: the join has two predecessors; the entry's branch is no jump.
    t = T(boolean)
    a, _ = t.block()
    b, _ = t.block()
    join, _ = t.block()
    t.term(ir.Branch, cond=t.args[0], then_target=a, else_target=b)
    for blk in (a, b):
        t.at(blk)
        t.term(ir.Jump, target=join)
    t.at(join)
    t.term(ir.Return)
    fn = merge_blocks(t.build())
    assert [blk.id for blk in fn.blocks] == [0, a, b, join]


def test_branch_with_identical_edges_becomes_a_jump_and_merges():
    t = T(boolean)
    nxt, _ = t.block()
    t.term(ir.Branch, cond=t.args[0], then_target=nxt, else_target=nxt)
    t.at(nxt)
    t.term(ir.Return)
    fn = merge_blocks(t.build())
    assert len(fn.blocks) == 1 and isinstance(fn.blocks[0].term, ir.Return)


# -- the pass list on real kernels ------------------------------------------------------


def test_default_passes_order():
    from cujit.passes.inline import inline_requested_keep_raise

    assert DEFAULT_PASSES == (
        inline_requested_keep_raise,
        fold_constants,
        eliminate_dead_code,
        merge_blocks,
    )


def _typed_kernels():
    from infer_helpers import _frontend, _kernel_cases  # the shared kernel-set plumbing

    return _frontend, _kernel_cases()


_FRONTEND, _CASES = _typed_kernels()


@pytest.mark.parametrize("pyfunc,arg_types", _CASES)
def test_passes_keep_the_contract_and_drop_compile_time_objects(pyfunc, arg_types):
    from infer_helpers import check_contract

    from cujit.infer import infer_types

    fn = run_passes(infer_types(_FRONTEND(pyfunc), arg_types))
    check_contract(fn)
    for op in fn.all_ops():
        if op.result is not None:
            # docs/typed-ir.md: DCE removes the ops that made PyObject values.
            assert not isinstance(op.result.type, PyObject), ir.format_op(op)
    for b in fn.blocks:
        for p in b.params:
            assert not isinstance(p.type, PyObject)


def constant_branch(x):
    debug = False
    n = 3 * 4
    if debug:
        x[0] = 1.0
    x[1] = n + 127


def test_constant_condition_folds_away_end_to_end():
    from cujit.infer import infer_types

    fn = run_passes(infer_types(_FRONTEND(constant_branch), (Array(float32, 1, "C"),)))
    assert len(fn.blocks) == 1
    stores = [op for op in fn.all_ops() if isinstance(op, ir.SetItem)]
    assert len(stores) == 1
    value = defining(fn, stores[0].value)
    assert isinstance(value, ir.Const) and value.value == 139.0  # 3 * 4 + 127 as float32


def test_tuple_types_survive():
    # A Tuple-typed value is neither folded nor broken by the passes.
    t = T(Array(int64, 2, "C"))
    i = t.const(1, int64)
    idx = t.op(ir.BuildTuple, Tuple((int64, int64)), items=(i, i))
    t.op(ir.SetItem, obj=t.args[0], index=idx, value=i)
    t.term(ir.Return)
    fn = run_passes(t.build())
    ir.verify(fn, typed=True)
    assert sum(isinstance(op, ir.BuildTuple) for op in fn.all_ops()) == 1


def test_int_folds_are_exact_beyond_float64_precision():
    # 2**53 + 1 has no float64: a fold that went through floats would lose the 1.
    folded = _fold_one(binop(int64, "+", 2**53, 1))
    assert folded.value == 2**53 + 1


def test_tupleget_of_a_constant_tuple_folds():
    # a, b = 1, 2.5 arrives as TupleGets of one tuple constant.
    def build(t):
        tup = t.const((1, 2.5), Tuple((int64, float64)))
        return t.op(ir.TupleGet, float64, tuple=tup, index=1)

    folded = _fold_one(build)
    assert isinstance(folded, ir.Const) and folded.value == 2.5


def test_asserts_compile_to_nothing_without_debug():
    """Release builds drop an assert's check (numba's default); debug builds keep it."""
    import numpy as np
    from kernels_debug import assert_first_nonnegative as checked  # asserts kept as written

    from cujit.ir import Raise
    from cujit.options import Options
    from cujit.pipeline import compile_kernel
    from cujit.types import typeof

    types = (typeof(np.zeros(3)),)
    release = compile_kernel(checked, types, stop_after="passes").outputs["passes"]
    debug = compile_kernel(checked, types, Options(debug=True), stop_after="passes").outputs[
        "passes"
    ]
    assert not any(isinstance(b.term, Raise) for b in release.blocks)
    assert not any(type(op).__name__ == "Compare" for b in release.blocks for op in b.ops)
    assert any(isinstance(b.term, Raise) for b in debug.blocks)
