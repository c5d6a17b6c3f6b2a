"""Stage 4, type inference: hand-built untyped IR (and real kernels through irgen)
in, typed IR out, checked against docs/typed-ir.md and numba's typing rules.

Expected types are reasoned from numba's rules (``numba/core/typing/builtins.py``,
``mathdecl.py`` and its unification), cited per case; numba itself is not
imported (it is not a dependency).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cujit import cuda, ir
from cujit.diagnostics import CompileError, Loc, TypingError, UnsupportedError
from cujit.infer import infer_types
from cujit.types import (
    Array, PyObject, RangeIter, Tuple, boolean, float32, float64, int8, int16, int32, int64,
    none, uint8, uint32, uint64,
)

F32_1D = Array(float32, 1, "C")
F32_2D = Array(float32, 2, "C")


class B:
    """A small builder of untyped IR.  Each op gets its own source line (its
    number in creation order), so tests can check which op an error points at."""

    def __init__(self, *arg_names: str):
        self.next_id = 0
        self.line = 0
        self.blocks: dict[int, list] = {}
        self.names = arg_names
        self.args = [self._v() for _ in arg_names]
        self.entry = self.block_with(self.args)
        self.cur = self.entry

    def _v(self) -> ir.Value:
        self.next_id += 1
        return ir.Value(self.next_id - 1)

    def loc(self) -> Loc:
        self.line += 1
        return Loc("kernel.py", self.line, 4)

    # -- blocks --
    def block_with(self, params) -> int:
        bid = len(self.blocks)
        self.blocks[bid] = [tuple(params), [], None]
        return bid

    def block(self, nparams: int = 0) -> tuple[int, list[ir.Value]]:
        params = [self._v() for _ in range(nparams)]
        return self.block_with(params), params

    def at(self, bid: int) -> None:
        self.cur = bid

    # -- ops --
    def emit(self, cls, **fields) -> ir.Value | None:
        has_result = "result" in {f.name for f in cls.__dataclass_fields__.values()}
        res = self._v() if has_result else None
        op = cls(loc=self.loc(), **({"result": res} if has_result else {}), **fields)
        self.blocks[self.cur][1].append(op)
        return res

    def const(self, value):
        return self.emit(ir.Const, value=value)

    def binop(self, op, a, b):
        return self.emit(ir.BinOp, op=op, lhs=a, rhs=b)

    def unary(self, op, a):
        return self.emit(ir.UnaryOp, op=op, operand=a)

    def compare(self, op, a, b):
        return self.emit(ir.Compare, op=op, lhs=a, rhs=b)

    def attr(self, obj, *names):
        for n in names:
            obj = self.emit(ir.GetAttr, obj=obj, name=n)
        return obj

    def call(self, func, *args, **kwargs):
        if not isinstance(func, ir.Value):
            func = self.const(func)
        return self.emit(ir.Call, func=func, args=tuple(args), kwargs=tuple(kwargs.items()))

    def getitem(self, obj, index):
        return self.emit(ir.GetItem, obj=obj, index=index)

    def setitem(self, obj, index, value):
        return self.emit(ir.SetItem, obj=obj, index=index, value=value)

    def tuple(self, *items):
        return self.emit(ir.BuildTuple, items=tuple(items))

    def term(self, cls, **fields):
        self.blocks[self.cur][2] = cls(loc=self.loc(), **fields)

    def jump(self, target, *args):
        self.term(ir.Jump, target=target, args=tuple(args))

    def branch(self, cond, then, else_, then_args=(), else_args=()):
        self.term(ir.Branch, cond=cond, then_target=then, else_target=else_,
                  then_args=tuple(then_args), else_args=tuple(else_args))

    def ret(self, value=None):
        self.term(ir.Return, value=value)

    def build(self) -> ir.Function:
        blocks = tuple(ir.Block(bid, p, tuple(ops), term)
                       for bid, (p, ops, term) in self.blocks.items())
        fn = ir.Function("k", self.names, blocks, Loc("kernel.py", 0))
        ir.verify(fn)
        return fn


def infer(b: B, *types) -> ir.Function:
    fn = infer_types(b.build(), tuple(types))
    ir.verify(fn, typed=True)
    return fn


def text(fn: ir.Function) -> str:
    return ir.format_function(fn)


def op_of(fn: ir.Function, v: ir.Value) -> ir.Op:
    """The typed op that defines value id ``v.id``."""
    for op in fn.all_ops():
        if op.result is not None and op.result.id == v.id:
            return op
    raise KeyError(v)


def ops(fn: ir.Function, cls) -> list:
    return [op for op in fn.all_ops() if isinstance(op, cls)]


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
    assert text(fn) == """\
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


@pytest.mark.parametrize("op,lt,rt,operand,result,why", BINOP_CASES,
                         ids=[f"{c[1]}{c[0]}{c[2]}" for c in BINOP_CASES])
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


@pytest.mark.parametrize("op,t,result", [
    ("-", boolean, int64),    # UnaryOp: (bool) -> intp
    ("-", int8, int64),       # choose_result_int widens small ints
    ("-", uint32, uint64),
    ("-", float32, float32),
    ("~", boolean, boolean),  # BitwiseInvert: numpy semantics, bool stays bool
    ("~", int32, int64),
])
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
    with pytest.raises(TypingError, match=r"unsupported operand types for &: 'float32' and "
                                          r"'int64'") as e:
        infer(b, float32, int64)
    assert e.value.loc.line == 1


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
    with pytest.raises(TypingError, match=r"holds int64 on one path and array\(float32, 1d, C\) "
                                          "on another") as e:
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


# -- cuda intrinsics ----------------------------------------------------------------


def test_special_registers_become_sreg_intrinsics():
    b = B("out")
    tx = b.attr(b.const(cuda), "threadIdx", "x")
    by = b.attr(b.const(cuda), "blockIdx", "y")
    b.setitem(b.args[0], b.const(0), b.binop("+", tx, by))
    b.ret()
    fn = infer(b, Array(int64, 1, "C"))
    assert op_of(fn, tx).attrs == (("reg", "threadIdx.x"),)
    assert op_of(fn, tx).result.type == int32
    assert op_of(fn, by).attr("reg") == "blockIdx.y"


def test_grid_2d_is_a_tuple_and_gridsize_3d():
    b = B("x")
    g = b.call(cuda.grid, b.const(2))
    gs = b.call(cuda.gridsize, b.const(3))
    b.setitem(b.args[0], g, b.const(1.0))
    b.ret()
    fn = infer(b, F32_2D)
    assert op_of(fn, g).result.type == Tuple((int64, int64))
    assert op_of(fn, g).attrs == (("ndim", 2),)
    assert op_of(fn, gs).result.type == Tuple((int64,) * 3)
    (store,) = ops(fn, ir.SetItem)
    assert store.index.id == g.id and store.value.type == float32


def test_grid_needs_a_constant_ndim():
    b = B("n")
    b.call(cuda.grid, b.args[0])
    b.ret()
    with pytest.raises(TypingError, match="constant 1, 2 or 3") as e:
        infer(b, int64)
    assert e.value.loc.line == 2


@pytest.mark.parametrize("shape,dtype,kw,want_shape,want_dtype", [
    ((16, 8), float32, False, (16, 8), float32),
    (4, np.int32, True, (4,), int32),
    (0, np.dtype("float64"), False, (0,), float64),
])
def test_shared_array_attrs(shape, dtype, kw, want_shape, want_dtype):
    b = B("out")
    s, d = b.const(shape), b.const(dtype)
    arr = b.call(cuda.shared.array, shape=s, dtype=d) if kw else b.call(cuda.shared.array, s, d)
    b.ret()
    fn = infer(b, F32_1D)
    op = op_of(fn, arr)
    assert op.name == "shared.array"
    assert op.attrs == (("shape", want_shape), ("dtype", want_dtype))
    assert op.result.type == Array(want_dtype, len(want_shape), "C")


def test_local_array_shape_from_a_tuple_of_constants():
    b = B("out")
    n = b.const(3)
    arr = b.call(cuda.local.array, b.tuple(n, n), b.attr(b.const(np), "int16"))
    b.setitem(arr, b.tuple(b.const(0), b.const(1)), b.const(5))
    b.ret()
    fn = infer(b, F32_1D)
    op = op_of(fn, arr)
    assert op.name == "local.array" and op.attr("shape") == (3, 3)
    assert op.result.type == Array(int16, 2, "C")
    (store,) = ops(fn, ir.SetItem)
    assert store.value.type == int16  # the int64 literal is cast to the element type


def test_shared_array_shape_must_be_constant():
    b = B("n")
    b.call(cuda.shared.array, b.args[0], b.const(float32))
    b.ret()
    with pytest.raises(CompileError, match="shape of cuda.shared.array must be a constant") as e:
        infer(b, int64)
    assert e.value.loc.line == 3  # the call (after the two callee/dtype constants)


def test_atomic_add_casts_index_and_value():
    b = B("hist", "k")
    hist, k = b.args
    old = b.call(b.attr(b.const(cuda), "atomic", "add"), hist, k, b.const(1))
    b.call(b.attr(b.const(cuda), "syncthreads"))
    b.ret()
    fn = infer(b, Array(uint32, 1, "C"), int32)
    op = op_of(fn, old)
    assert op.name == "atomic.add" and op.result.type == uint32
    assert [a.type for a in op.args] == [Array(uint32, 1, "C"), int64, uint32]
    assert [o.name for o in ops(fn, ir.Intrinsic)] == ["atomic.add", "cuda.syncthreads"]


def test_atomic_add_rejects_int8_arrays():
    b = B("a")
    b.call(cuda.atomic.add, b.args[0], b.const(0), b.const(1))
    b.ret()
    with pytest.raises(TypingError, match="does not support arrays of int8"):
        infer(b, Array(int8, 1, "C"))


# -- builtins, casts and math ----------------------------------------------------------


def _store_call(func, arg_type, out_type):
    """out[0] = func(p), with out of the call's expected type (so no store cast)."""
    b = B("p", "out")
    r = b.call(func, b.args[0])
    b.setitem(b.args[1], b.const(0), r)
    b.ret()
    fn = infer(b, arg_type, Array(out_type, 1, "C"))
    return fn, op_of(fn, ops(fn, ir.SetItem)[0].value)


@pytest.mark.parametrize("func,arg,result,name", [
    (math.sqrt, float32, float32, "math.sqrt"),   # mathdecl: float32 -> float32
    (math.sqrt, int64, float64, "math.sqrt"),     # ints compute in float64
    (math.exp, int32, float64, "math.exp"),
    (math.fabs, float64, float64, "math.fabs"),
    (math.isnan, float32, boolean, "math.isnan"),
    (abs, int32, int32, "abs"),                   # abs keeps the type
    (abs, float32, float32, "abs"),
])
def test_math_and_abs_result_types(func, arg, result, name):
    _, producer = _store_call(func, arg, result)
    assert isinstance(producer, ir.Intrinsic) and producer.name == name
    assert producer.result.type == result
    assert producer.args[0].type == (float64 if arg.is_int and name != "abs" else arg)


@pytest.mark.parametrize("func,name", [
    (math.gamma, "math.gamma"), (math.lgamma, "math.lgamma"), (math.expm1, "math.expm1"),
    (math.log1p, "math.log1p"), (math.asinh, "math.asinh"), (math.acosh, "math.acosh"),
    (math.atanh, "math.atanh"), (np.expm1, "math.expm1"), (np.arcsinh, "math.asinh"),
])
@pytest.mark.parametrize("arg,result", [(float32, float32), (float64, float64),
                                        (int32, float64)])
def test_more_math_functions_type_as_numba(func, name, arg, result):
    # numba's math typing: float32 stays float32, ints compute in float64.
    _, producer = _store_call(func, arg, result)
    assert isinstance(producer, ir.Intrinsic) and producer.name == name
    assert producer.result.type == result


def test_math_fmod_trunc_degrees_radians():
    b = B("p", "q", "out")
    p, q, out = b.args
    fm = b.call(math.fmod, p, q)     # (float32, int32) -> float64, as math.atan2
    tr = b.call(math.trunc, p)       # numba: int64
    dg = b.call(math.degrees, p)     # float32 stays float32: one multiplication
    rd = b.call(math.radians, q)     # an int computes in float64
    for k, v in enumerate((fm, tr, dg, rd)):
        b.setitem(out, b.const(k), v)
    b.ret()
    fn = infer(b, float32, int32, Array(float64, 1, "C"))
    stored = [op_of(fn, st.value) for st in ops(fn, ir.SetItem)]
    stored = [op_of(fn, op.operand) if isinstance(op, ir.Cast) and op.result.type == float64
              and op.operand.type != float64 else op for op in stored]  # the stores' casts
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


@pytest.mark.parametrize("func,target", [
    (float32, float32), (np.int32, int32), (np.float64, float64), (int, int64),
    (float, float64), (bool, boolean), (uint8, uint8),
])
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
    assert op_of(fn, r) == ir.Const(loc=op_of(fn, r).loc, result=ir.Value(r.id, boolean),
                                    value=False)
    assert op_of(fn, r2).value is True


def test_math_pow_and_atan2_types():
    b = B("p", "q", "out")
    p, q, out = b.args
    pw = b.call(math.pow, p, q)        # numba math.pow(float32, int32) -> float64
    at = b.call(math.atan2, p, p)      # (float32, float32) -> float32
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
    assert op_of(fn, pi) == ir.Const(loc=op_of(fn, pi).loc, result=ir.Value(pi.id, float64),
                                     value=math.pi)


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
    b = B("x", "i")
    b.getitem(b.attr(b.args[0], "shape"), b.args[1])
    b.ret()
    with pytest.raises(TypingError, match="tuple index must be a constant integer"):
        infer(b, F32_2D, int64)


def test_index_count_must_match_ndim():
    b = B("x")
    b.getitem(b.args[0], b.const(0))
    b.ret()
    with pytest.raises(TypingError, match="array of 2 dimensions indexed with 1 index") as e:
        infer(b, F32_2D)
    assert e.value.loc.line == 2


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


# -- errors ---------------------------------------------------------------------------


def test_returning_a_value_is_an_error():
    b = B("x")
    b.ret(b.const(1))
    with pytest.raises(CompileError, match="a kernel cannot return a value") as e:
        infer(b, int64)
    assert e.value.loc.line == 2


def test_strings_in_computations_are_unsupported():
    b = B("x")
    b.binop("+", b.args[0], b.const("a"))
    b.ret()
    with pytest.raises(UnsupportedError, match="strings are not supported in kernels") as e:
        infer(b, int64)
    assert e.value.loc.line == 1  # the string constant itself


def test_raise_keeps_its_message():
    b = B("x")
    err = b.call(ValueError, b.const("bad input"))
    b.term(ir.Raise, exc=err)
    fn = infer(b, int64)
    term = fn.blocks[0].term
    assert isinstance(term, ir.Raise) and term.message == "bad input"
    assert term.exc.type == PyObject(ValueError)


def foo(x):
    return x


def test_unknown_function_is_unsupported_and_named():
    b = B("x")
    b.call(foo, b.args[0])
    b.ret()
    with pytest.raises(UnsupportedError, match="call to unsupported function 'foo'") as e:
        infer(b, int64)
    assert e.value.loc.line == 2


def test_unknown_math_function_is_named_with_its_module():
    b = B("x")
    b.call(math.frexp, b.args[0])
    b.ret()
    with pytest.raises(UnsupportedError, match="'math.frexp'"):
        infer(b, float64)


def test_missing_attribute():
    b = B("x")
    b.attr(b.args[0], "T")
    b.ret()
    with pytest.raises(TypingError, match="arrays have no attribute 'T'"):
        infer(b, F32_1D)


def test_wrong_argument_count():
    b = B("x")
    b.ret()
    with pytest.raises(TypingError, match="takes 1 arguments but 2"):
        infer_types(b.build(), (int64, int64))


def test_unused_none_value_is_typed_none():
    b = B("x")
    c = b.const(None)
    b.ret(c)
    fn = infer(b, int64)
    assert op_of(fn, c).result.type == none
    assert fn.blocks[0].term.value is None


# -- real kernels through irgen ------------------------------------------------------

def check_contract(fn: ir.Function) -> None:
    """The invariants docs/typed-ir.md promises lowering, op by op."""
    ir.verify(fn, typed=True)
    for op in fn.all_ops():
        assert not isinstance(op, (ir.Call, ir.GetAttr)), op
        if isinstance(op, ir.BinOp):
            assert op.lhs.type == op.rhs.type == op.result.type, op
            assert op.op != "/" or op.result.type.is_float, op
            assert op.result.type != boolean or op.op in "&|^", op
        elif isinstance(op, ir.Compare):
            assert op.lhs.type == op.rhs.type and op.result.type == boolean, op
            assert op.op not in ("is", "is not"), op
        elif isinstance(op, ir.UnaryOp):
            assert op.operand.type == op.result.type, op
        elif isinstance(op, (ir.GetItem, ir.SetItem)):
            arr = op.obj.type
            want = int64 if arr.ndim == 1 else Tuple((int64,) * arr.ndim)
            assert op.index.type == want, op
            if isinstance(op, ir.SetItem):
                assert op.value.type == arr.dtype, op
            else:
                assert op.result.type == arr.dtype, op
        elif isinstance(op, ir.Branch):
            assert op.cond.type == boolean, op
        elif isinstance(op, ir.Return):
            assert op.value is None, op


def _kernel_cases():
    import kernels

    from cujit.types import typeof

    out = []
    for case in kernels.CASES:
        args, *_ = case.setup(np.random.default_rng(0))
        out.append(pytest.param(case.kernel.py_func, tuple(typeof(a) for a in args),
                                id=case.name))
    return out


def _frontend(pyfunc):
    irgen = pytest.importorskip("cujit.irgen")
    from cujit.bytecode import decode
    from cujit.cfg import build_cfg

    return irgen.build_ir(build_cfg(decode(pyfunc)))


@pytest.mark.parametrize("pyfunc,arg_types", _kernel_cases())
def test_kernel_set_meets_the_contract(pyfunc, arg_types):
    check_contract(infer_types(_frontend(pyfunc), arg_types))


def widening_loop(x, out):
    s = 0
    for k in range(x.shape[0]):
        s = s + x[k]
    out[0] = s


def test_real_loop_widens_like_numba():
    fn = infer_types(_frontend(widening_loop), (F32_1D, F32_1D))
    check_contract(fn)
    headers = [b for b in fn.blocks if any(isinstance(p.type, RangeIter) for p in b.params)]
    (header,) = headers
    assert float64 in [p.type for p in header.params]


def mixed_paths(flag, x, out):
    if flag:
        v = x[0]
    else:
        v = 1
    out[0] = v


def test_real_if_else_merge_unifies():
    fn = infer_types(_frontend(mixed_paths), (boolean, Array(int32, 1, "C"),
                                              Array(int32, 1, "C")))
    check_contract(fn)
    merges = [b for b in fn.blocks if b.params and b.id != fn.blocks[0].id]
    # int32 from x[0] and the int64 literal 1 unify to int64
    assert [p.type for b in merges for p in b.params] == [int64]


def returns_value(x):
    return x[0]


def test_real_return_value_error_points_at_the_return():
    with pytest.raises(CompileError, match="a kernel cannot return a value") as e:
        infer_types(_frontend(returns_value), (F32_1D,))
    assert e.value.loc.line == returns_value.__code__.co_firstlineno + 1


def bad_index(x, out):
    out[0] = x[1]


def test_real_index_count_error():
    with pytest.raises(TypingError, match="array of 2 dimensions indexed with 1 index") as e:
        infer_types(_frontend(bad_index), (F32_2D, F32_1D))
    assert e.value.loc.line == bad_index.__code__.co_firstlineno + 1
    assert "bad_index" not in str(e.value) or "test_infer.py" in e.value.loc.file


def uses_string(out):
    s = "abc"
    out[0] = len(s)


def test_real_string_use_is_unsupported():
    with pytest.raises(UnsupportedError, match="strings are not supported"):
        infer_types(_frontend(uses_string), (F32_1D,))


def calls_helper(out):
    out[0] = foo(1)


def test_real_unknown_call():
    with pytest.raises(UnsupportedError, match="call to unsupported function 'foo'") as e:
        infer_types(_frontend(calls_helper), (F32_1D,))
    assert e.value.loc.line == calls_helper.__code__.co_firstlineno + 1


# Compiled from text: pytest rewrites the assert statements of test modules.
_ASSERTS_SRC = """
def asserts_and_raises(x, n):
    assert n > 0, "n must be positive"
    if n > 100:
        raise ValueError("too big")
    x[0] = n
"""


def test_real_assert_and_raise_keep_their_messages():
    namespace: dict = {}
    exec(compile(_ASSERTS_SRC, "asserts.py", "exec"), namespace)  # noqa: S102
    fn = infer_types(_frontend(namespace["asserts_and_raises"]), (F32_1D, int64))
    check_contract(fn)
    raises = [b.term for b in fn.blocks if isinstance(b.term, ir.Raise)]
    assert sorted(r.message for r in raises) == ["n must be positive", "too big"]
    assert {r.exc.type for r in raises} == {PyObject(AssertionError), PyObject(ValueError)}


def maybe_set_in_loop(x, flag):
    for i in range(3):
        if flag:
            t = i
    x[0] = t


def test_real_variable_set_in_a_loop_merges_with_undef():
    fn = infer_types(_frontend(maybe_set_in_loop), (F32_1D, boolean))
    check_contract(fn)
    (undef,) = ops(fn, ir.Undef)
    assert undef.name == "t" and undef.result.type == int64


def min_of_shape(x, out):
    out[0] = min(x.shape) + max(x.shape[0], 2.5)


def test_real_min_of_a_tuple_and_max_of_mixed():
    fn = infer_types(_frontend(min_of_shape), (F32_2D, Array(float64, 1, "C")))
    check_contract(fn)
    names = [(o.name, o.result.type) for o in ops(fn, ir.Intrinsic) if o.name in ("min", "max")]
    assert names == [("min", int64), ("max", float64)]
