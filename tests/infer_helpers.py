"""Shared by the stage-4 tests (test_infer_*.py): a builder of untyped IR by hand and
helpers that infer its types and find the typed ops; the typed-IR contract checked op by
op, and the kernel set through the front end (also used by test_passes.py).

Expected types are reasoned from numba's rules (``numba/core/typing/builtins.py``,
``mathdecl.py`` and its unification), cited per case; numba itself is not
imported (it is not a dependency).
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import ir
from cujit.diagnostics import Loc
from cujit.infer import infer_types
from cujit.types import Array, Tuple, boolean, float32, int64

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
        self.term(
            ir.Branch,
            cond=cond,
            then_target=then,
            else_target=else_,
            then_args=tuple(then_args),
            else_args=tuple(else_args),
        )

    def ret(self, value=None):
        self.term(ir.Return, value=value)

    def build(self) -> ir.Function:
        blocks = tuple(
            ir.Block(bid, p, tuple(ops), term) for bid, (p, ops, term) in self.blocks.items()
        )
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


def foo(x):
    return x


# -- real kernels through irgen (test_passes.py uses these too) -----------------------


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
        out.append(pytest.param(case.kernel.py_func, tuple(typeof(a) for a in args), id=case.name))
    return out


def _frontend(pyfunc):
    irgen = pytest.importorskip("cujit.irgen")
    from cujit.bytecode import decode
    from cujit.cfg import build_cfg

    return irgen.build_ir(build_cfg(decode(pyfunc)))
