"""Stage 4, type inference: builtins, casts and math (result types as numba's
``mathdecl.py``), tuples, indexing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from infer_helpers import F32_1D, F32_2D, B, infer, op_of, ops

from cujit import ir
from cujit.diagnostics import TypingError
from cujit.types import (
    Array,
    Tuple,
    boolean,
    float32,
    float64,
    int16,
    int32,
    int64,
    uint8,
)

# -- builtins, casts and math ----------------------------------------------------------


def _store_call(func, arg_type, out_type):
    """out[0] = func(p), with out of the call's expected type (so no store cast)."""
    b = B("p", "out")
    r = b.call(func, b.args[0])
    b.setitem(b.args[1], b.const(0), r)
    b.ret()
    fn = infer(b, arg_type, Array(out_type, 1, "C"))
    return fn, op_of(fn, ops(fn, ir.SetItem)[0].value)


@pytest.mark.parametrize(
    "func,arg,result,name",
    [
        (math.sqrt, float32, float32, "math.sqrt"),  # mathdecl: float32 -> float32
        (math.sqrt, int64, float64, "math.sqrt"),  # ints compute in float64
        (math.exp, int32, float64, "math.exp"),
        (math.fabs, float64, float64, "math.fabs"),
        (math.isnan, float32, boolean, "math.isnan"),
        (abs, int32, int32, "abs"),  # abs keeps the type
        (abs, float32, float32, "abs"),
    ],
)
def test_math_and_abs_result_types(func, arg, result, name):
    _, producer = _store_call(func, arg, result)
    assert isinstance(producer, ir.Intrinsic) and producer.name == name
    assert producer.result.type == result
    assert producer.args[0].type == (float64 if arg.is_int and name != "abs" else arg)


@pytest.mark.parametrize(
    "func,name",
    [
        (math.gamma, "math.gamma"),
        (math.lgamma, "math.lgamma"),
        (math.expm1, "math.expm1"),
        (math.log1p, "math.log1p"),
        (math.asinh, "math.asinh"),
        (math.acosh, "math.acosh"),
        (math.atanh, "math.atanh"),
        (np.expm1, "math.expm1"),
        (np.arcsinh, "math.asinh"),
    ],
)
@pytest.mark.parametrize("arg,result", [(float32, float32), (float64, float64), (int32, float64)])
def test_more_math_functions_type_as_numba(func, name, arg, result):
    # numba's math typing: float32 stays float32, ints compute in float64.
    _, producer = _store_call(func, arg, result)
    assert isinstance(producer, ir.Intrinsic) and producer.name == name
    assert producer.result.type == result


def test_math_fmod_trunc_degrees_radians():
    b = B("p", "q", "out")
    p, q, out = b.args
    fm = b.call(math.fmod, p, q)  # (float32, int32) -> float64, as math.atan2
    tr = b.call(math.trunc, p)  # numba: int64
    dg = b.call(math.degrees, p)  # float32 stays float32: one multiplication
    rd = b.call(math.radians, q)  # an int computes in float64
    for k, v in enumerate((fm, tr, dg, rd)):
        b.setitem(out, b.const(k), v)
    b.ret()
    fn = infer(b, float32, int32, Array(float64, 1, "C"))
    stored = [op_of(fn, st.value) for st in ops(fn, ir.SetItem)]
    stored = [
        op_of(fn, op.operand)
        if isinstance(op, ir.Cast) and op.result.type == float64 and op.operand.type != float64
        else op
        for op in stored
    ]  # the stores' casts
    fmod, trunc, deg, rad = stored
    assert fmod.name == "math.fmod" and fmod.result.type == float64
    assert isinstance(trunc, ir.Cast) and trunc.result.type == int64
    assert isinstance(deg, ir.BinOp) and deg.op == "*" and deg.result.type == float32
    factor = op_of(fn, deg.rhs)  # 180/pi, cast to float32 (constant folding comes later)
    assert isinstance(factor, ir.Cast) and op_of(fn, factor.operand).value == 180.0 / math.pi
    assert isinstance(rad, ir.BinOp) and rad.result.type == float64
    assert op_of(fn, rad.rhs).value == math.pi / 180.0


def test_math_floor_returns_int64():
    # numba: math.floor(float32) -> int64; infer floors in float32, then casts.
    fn, producer = _store_call(math.floor, float32, int64)
    assert isinstance(producer, ir.Cast) and producer.result.type == int64
    floor = op_of(fn, producer.operand)
    assert floor.name == "math.floor" and floor.result.type == float32


@pytest.mark.parametrize(
    "func,target",
    [
        (float32, float32),
        (np.int32, int32),
        (np.float64, float64),
        (int, int64),
        (float, float64),
        (bool, boolean),
        (uint8, uint8),
    ],
)
def test_casts(func, target):
    _, producer = _store_call(func, int16, target)
    assert isinstance(producer, ir.Cast) and producer.result.type == target
    assert producer.operand.id == 0  # straight from the argument


def test_isnan_of_an_int_folds_to_false():
    b = B("p", "out")
    r = b.call(math.isnan, b.args[0])
    r2 = b.call(math.isfinite, b.args[0])
    b.setitem(b.args[1], b.const(0), b.binop("&", r, r2))
    b.ret()
    fn = infer(b, int32, Array(boolean, 1, "C"))
    assert op_of(fn, r) == ir.Const(
        loc=op_of(fn, r).loc, result=ir.Value(r.id, boolean), value=False
    )
    assert op_of(fn, r2).value is True


def test_math_pow_and_atan2_types():
    b = B("p", "q", "out")
    p, q, out = b.args
    pw = b.call(math.pow, p, q)  # numba math.pow(float32, int32) -> float64
    at = b.call(math.atan2, p, p)  # (float32, float32) -> float32
    b.setitem(out, b.const(0), b.binop("+", pw, at))
    b.ret()
    fn = infer(b, float32, int32, Array(float64, 1, "C"))
    assert op_of(fn, pw).result.type == float64
    assert [a.type for a in op_of(fn, pw).args] == [float64, float64]
    assert op_of(fn, at).result.type == float32


def test_math_constants_fold_to_float64():
    b = B("out")
    pi = b.attr(b.const(math), "pi")
    b.setitem(b.args[0], b.const(0), pi)
    b.ret()
    fn = infer(b, F32_1D)
    assert op_of(fn, pi) == ir.Const(
        loc=op_of(fn, pi).loc, result=ir.Value(pi.id, float64), value=math.pi
    )


def test_min_max_unify_and_chain():
    b = B("p", "q", "r", "out")
    p, q, r, out = b.args
    m = b.call(max, p, q, r)
    b.setitem(out, b.const(0), m)
    b.ret()
    fn = infer(b, int32, float32, int64, Array(float64, 1, "C"))
    chain = [o for o in ops(fn, ir.Intrinsic) if o.name == "max"]
    assert len(chain) == 2  # max(max(p, q), r)
    # unify(int32, float32) = float64 (numba: int32 -> float32 is unsafe)
    assert all(a.type == float64 for o in chain for a in o.args)
    assert chain[-1].result.id == m.id and chain[0].result.id in [a.id for a in chain[1].args]


def test_len_ndim_and_shape_unpacking():
    b = B("x", "out")
    x, out = b.args
    n = b.call(len, x)
    nd = b.attr(x, "ndim")
    shape = b.attr(x, "shape")
    r0 = b.emit(ir.TupleGet, tuple=shape, index=0)
    r1 = b.emit(ir.TupleGet, tuple=shape, index=1)
    last = b.getitem(shape, b.const(-1))
    b.setitem(out, b.tuple(r0, r1), b.binop("+", n, b.binop("+", nd, last)))
    b.ret()
    fn = infer(b, F32_2D, F32_2D)
    assert isinstance(op_of(fn, n), ir.TupleGet) and op_of(fn, n).index == 0
    assert op_of(fn, nd).value == 2
    assert op_of(fn, shape).name == "array.shape"
    assert op_of(fn, shape).result.type == Tuple((int64, int64))
    assert op_of(fn, r1).result.type == int64
    assert op_of(fn, last).index == 1  # -1 normalised


def test_tuple_index_must_be_constant():
    # (a run-time index into a tuple of numbers, x.shape[i], reads a local copy:
    # tests/test_language_misc.py; a tuple holding an array cannot be indexed so)
    b = B("x", "i")
    b.getitem(b.tuple(b.args[0], b.args[0]), b.args[1])
    b.ret()
    with pytest.raises(TypingError, match="tuple index must be a constant integer"):
        infer(b, F32_2D, int64)


def test_index_count_must_match_ndim():
    # (x[0] of a matrix is its row, a view: tests/test_slicing.py)
    b = B("x")
    b.getitem(b.args[0], b.tuple(b.const(0), b.const(1), b.const(2)))
    b.ret()
    with pytest.raises(TypingError, match="array of 2 dimensions indexed with 3 indices") as e:
        infer(b, F32_2D)
    assert e.value.loc.line == 5  # the builder's fifth op: the getitem


def test_int32_index_is_cast_to_int64():
    b = B("x", "i", "j")
    x, i, j = b.args
    b.setitem(x, b.tuple(i, j), b.getitem(x, b.tuple(j, i)))
    b.ret()
    fn = infer(b, F32_2D, int32, int64)
    for op in [*ops(fn, ir.GetItem), *ops(fn, ir.SetItem)]:
        assert op.index.type == Tuple((int64, int64))


def test_is_none_folds():
    b = B("x", "out")
    r1 = b.compare("is", b.args[0], b.const(None))
    r2 = b.compare("is not", b.const(None), b.const(None))
    b.setitem(b.args[1], b.const(0), b.binop("|", r1, r2))
    b.ret()
    fn = infer(b, F32_1D, Array(boolean, 1, "C"))
    assert op_of(fn, r1).value is False and op_of(fn, r2).value is False
