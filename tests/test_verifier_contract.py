"""The verifier checks the typed-IR contract of docs/typed-ir.md op by op; a failure is
an InternalCompilerError naming the stage and the kernel; ``CUJIT_VERIFY=1`` turns it on
for every compile, and the kernel set keeps the contract through stages 1-6."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from kernels import CASES

from cujit import cuda, ir
from cujit.diagnostics import InternalCompilerError, Loc
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import (
    Array,
    PyObject,
    Tuple,
    boolean,
    complex64,
    float32,
    float64,
    int32,
    int64,
    typeof,
    void,
)

L = Loc("kernel.py", 3, 0)


class F:
    """A one-block typed function: ``f.op(cls, type, **fields)`` appends an op."""

    def __init__(self, *arg_types, return_type=void):
        self.args = tuple(ir.Value(k, t) for k, t in enumerate(arg_types))
        self.next = len(arg_types)
        self.ops: list = []
        self.return_type = return_type
        self.callees: tuple = ()

    def op(self, cls, t=None, **fields):
        result = None
        if t is not None:
            result = ir.Value(self.next, t)
            self.next += 1
            fields["result"] = result
        self.ops.append(cls(loc=L, **fields))
        return result

    def function(self, term=None) -> ir.Function:
        term = term or ir.Return(loc=L)
        block = ir.Block(0, self.args, tuple(self.ops), term)
        return ir.Function(
            name="k",
            arg_names=tuple(f"a{i}" for i in range(len(self.args))),
            blocks=(block,),
            loc=L,
            return_type=self.return_type,
            callees=self.callees,
        )


def _bad(f: F, match: str, term=None) -> None:
    with pytest.raises(ir.VerificationError, match=match):
        ir.verify(f.function(term), typed=True)


def test_a_well_typed_function_passes():
    f = F(Array(float32, 1, "C"), int64)
    x = f.op(ir.GetItem, float32, obj=f.args[0], index=f.args[1])
    y = f.op(ir.BinOp, float32, op="*", lhs=x, rhs=x)
    c = f.op(ir.Compare, boolean, op="<", lhs=x, rhs=y)
    z = f.op(ir.Cast, float64, operand=y)
    t = f.op(ir.BuildTuple, Tuple((float32, float64)), items=(y, z))
    f.op(ir.TupleGet, float64, tuple=t, index=1)
    f.op(ir.SetItem, obj=f.args[0], index=f.args[1], value=y)
    f.op(ir.UnaryOp, boolean, op="not", operand=c)
    ir.verify(f.function(), typed=True)


def test_binop_operands_of_two_types():
    f = F(int32, float32)
    f.op(ir.BinOp, float32, op="+", lhs=f.args[0], rhs=f.args[1])
    _bad(f, "binop \\+ needs one Scalar type, has int32, float32")


def test_true_division_of_ints():
    f = F(int64)
    f.op(ir.BinOp, int64, op="/", lhs=f.args[0], rhs=f.args[0])
    _bad(f, "'/' on int64")


def test_complex_floor_division():
    f = F(complex64)
    f.op(ir.BinOp, complex64, op="//", lhs=f.args[0], rhs=f.args[0])
    _bad(f, "'//' on complex")


def test_compare_must_give_bool():
    f = F(float32)
    f.op(ir.Compare, int32, op="<", lhs=f.args[0], rhs=f.args[0])
    _bad(f, "compare <: float32, float32 -> int32")


def test_cast_of_complex_to_a_real():
    f = F(complex64)
    f.op(ir.Cast, float32, operand=f.args[0])
    _bad(f, "cast of complex complex64 to float32")


def test_cast_of_an_array_must_give_layout_a():
    f = F(Array(float32, 1, "A"))
    f.op(ir.Cast, Array(float32, 1, "C"), operand=f.args[0])
    _bad(f, "cast array")


def test_getitem_with_a_float_index():
    f = F(Array(float32, 1, "C"), float64)
    f.op(ir.GetItem, float32, obj=f.args[0], index=f.args[1])
    _bad(f, "index float64 into array")


def test_getitem_of_a_2d_array_with_one_index():
    f = F(Array(float32, 2, "C"), int64)
    f.op(ir.GetItem, float32, obj=f.args[0], index=f.args[1])
    _bad(f, "index int64 into array\\(float32, 2d")


def test_setitem_of_the_wrong_dtype():
    f = F(Array(float32, 1, "C"), int64, float64)
    f.op(ir.SetItem, obj=f.args[0], index=f.args[1], value=f.args[2])
    _bad(f, "setitem of float64 into")


def test_tuple_get_past_the_end():
    f = F(Tuple((int32, float32)))
    f.op(ir.TupleGet, int32, tuple=f.args[0], index=2)
    _bad(f, "tuple_get 2 of tuple")


def test_tuple_get_of_the_wrong_item_type():
    f = F(Tuple((int32, float32)))
    f.op(ir.TupleGet, int32, tuple=f.args[0], index=1)
    _bad(f, "gives int32")


def test_branch_on_an_int():
    f = F(int32)
    _bad(f, "branch on int32", ir.Branch(loc=L, cond=f.args[0], then_target=0, else_target=0))


def test_kernel_returning_a_value():
    f = F(int32)
    _bad(f, "return of a value from a void function", ir.Return(loc=L, value=f.args[0]))


def test_device_function_returning_the_wrong_type():
    f = F(int32, return_type=float32)
    _bad(f, "return of int32 from a function returning float32", ir.Return(loc=L, value=f.args[0]))


def test_an_untyped_call_must_not_remain():
    f = F(int32)
    fn = f.op(ir.Const, PyObject(abs), value=abs)
    f.op(ir.Call, int32, func=fn, args=(f.args[0],))
    _bad(f, "Call must not remain after type inference")


def test_call_function_with_the_wrong_argument_types():
    callee = F(float32, return_type=float32)
    callee_fn = dataclasses.replace(
        callee.function(ir.Return(loc=L, value=callee.args[0])), name="g(float32)"
    )
    f = F(int32)
    f.callees = (callee_fn,)
    f.op(ir.CallFunction, float32, callee="g(float32)", args=(f.args[0],))
    _bad(f, "call of 'g\\(float32\\)' with \\['int32'\\]")
    ok = F(float32)
    ok.callees = (callee_fn,)
    ok.op(ir.CallFunction, float32, callee="g(float32)", args=(ok.args[0],))
    ir.verify(ok.function(), typed=True)


def _grid_kernel(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * 2.0


def _forget_grid(monkeypatch):
    """The intrinsic table loses ``cuda.grid``'s row: stage 4 now emits IR that names an
    intrinsic the table does not have, a bug the verifier must report as cujit's own."""
    from cujit.ir import intrinsics

    monkeypatch.delitem(intrinsics.TABLE, "cuda.grid")


def test_verifier_failure_is_an_internal_error_naming_stage_and_kernel(monkeypatch):
    _forget_grid(monkeypatch)
    with pytest.raises(InternalCompilerError) as info:
        compile_kernel(
            _grid_kernel, (typeof(np.ones(4, np.float32)),), Options(verify=True), stop_after="llvm"
        )
    err = info.value
    assert err.stage == "typed" and err.kernel == "_grid_kernel"
    assert isinstance(err.cause, ir.VerificationError)
    assert "stage 'typed'" in str(err) and "'_grid_kernel'" in str(err)
    assert "'cuda.grid' is not in the intrinsic table" in str(err)


def test_cujit_verify_turns_the_verifier_on_for_jit_kernels(monkeypatch):
    _forget_grid(monkeypatch)
    monkeypatch.setenv("CUJIT_VERIFY", "1")

    @cuda.jit(target="cpu")
    def doubled(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 2.0

    a = np.arange(1.0, 5.0, dtype=np.float32)
    with pytest.raises(InternalCompilerError, match="stage 'typed' while compiling"):
        doubled[1, 4](a)
    monkeypatch.setenv("CUJIT_VERIFY", "0")

    @cuda.jit(target="cpu")
    def doubled_unverified(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 2.0

    # Unverified, nothing looks at the table's rows for cuda.grid: the kernel runs.
    doubled_unverified[1, 4](a)
    assert a.tolist() == [2.0, 4.0, 6.0, 8.0]


def test_cujit_verify_sets_the_kernels_options(monkeypatch):
    # The knob is read where a kernel's options are made (stages never read the
    # environment): a plain Options() stays unverified.
    def kernel_options():
        return cuda.jit(target="cpu")(lambda a: None)._base_options

    monkeypatch.setenv("CUJIT_VERIFY", "1")
    assert kernel_options().verify and not Options().verify
    monkeypatch.setenv("CUJIT_VERIFY", "0")
    assert not kernel_options().verify
    monkeypatch.delenv("CUJIT_VERIFY")
    assert not kernel_options().verify


def _arg_types(case):
    args, *_ = case.setup(np.random.default_rng(0))
    return tuple(typeof(a) for a in args)


@pytest.mark.parametrize("target, last", [("cuda", "llvm"), ("cpu", "native")])
def test_the_kernel_set_keeps_the_contract_under_cujit_verify(monkeypatch, target, last):
    monkeypatch.setenv("CUJIT_VERIFY", "1")
    calls = []
    real = ir.verify

    def counted(fn, typed=False):
        calls.append(fn.name)
        return real(fn, typed)

    monkeypatch.setattr(ir, "verify", counted)
    for case in CASES:
        before = len(calls)
        options = Options(verify=True, target=target)
        result = compile_kernel(case.kernel.py_func, _arg_types(case), options, stop_after=last)
        assert last in result.outputs
        assert len(calls) - before >= 3, case.name  # ir, typed and passes at least
