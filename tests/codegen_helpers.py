"""Shared by the stage-6 tests (test_codegen_*.py): a builder of typed IR by hand, compiling
its LLVM IR through libNVVM and nvJitLink, and running it on the host (the same lowering
with a host Target, JIT-compiled with llvmlite's MCJIT and called through ctypes).

Three layers, as docs/testing.md asks:
- the LLVM IR text has the key instructions (substring/regex checks);
- every module goes through libNVVM to PTX and nvJitLink to an sm_90 cubin
  (and sm_75 for some), so a module that does not assemble fails; the PTX has
  the feature's instruction;
- kernels without GPU-only intrinsics also run on the host: the same lowering
  with a host Target (host triple, libm math table) is JIT-compiled with
  llvmlite's MCJIT and called through ctypes with NumPy arrays, checking what the
  code computes against plain Python.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest
from llvmlite import binding as llvm

from cujit import ir
from cujit.abi import param_kinds, passes_strides
from cujit.codegen import kernel_symbol, lower_to_llvm
from cujit.diagnostics import Loc
from cujit.targets import MathFn, Target
from cujit.targets.cuda import CUDA_TARGET
from cujit.targets.cuda.intrinsics import INTRINSICS
from cujit.types import (
    Array,
    RangeIter,
    RangeType,
    Scalar,
    Tuple,
    Type,
    boolean,
    int64,
    none,
)

LOC = Loc("kernel.py", 1, 0)


# -- a tiny typed-IR builder ---------------------------------------------------------


class FunctionBuilder:
    def __init__(self, name: str, **args: Type):
        self.name = name
        self.arg_names = tuple(args)
        self._next = 0
        self._blocks: list[list] = []  # [id, params, ops, term]
        params = tuple(self._value(t) for t in args.values())
        self.args = params
        self.current = self._new_block(params)

    def _value(self, t: Type) -> ir.Value:
        v = ir.Value(self._next, t)
        self._next += 1
        return v

    def _new_block(self, params) -> list:
        block = [len(self._blocks), params, [], None]
        self._blocks.append(block)
        return block

    # -- blocks ---------------------------------------------------------------
    def block(self, *param_types: Type) -> tuple[int, tuple[ir.Value, ...]]:
        """A new block (not yet current): its id and its parameters."""
        b = self._new_block(tuple(self._value(t) for t in param_types))
        return b[0], b[1]

    def enter(self, block_id: int) -> None:
        self.current = self._blocks[block_id]

    def _term(self, term) -> None:
        assert self.current[3] is None, "block already terminated"
        self.current[3] = term

    def jump(self, target: int, *args) -> None:
        self._term(ir.Jump(loc=LOC, target=target, args=tuple(args)))

    def branch(self, cond, then, els, then_args=(), else_args=()) -> None:
        self._term(
            ir.Branch(
                loc=LOC,
                cond=cond,
                then_target=then,
                else_target=els,
                then_args=tuple(then_args),
                else_args=tuple(else_args),
            )
        )

    def ret(self) -> None:
        self._term(ir.Return(loc=LOC))

    def raise_(self) -> None:
        self._term(ir.Raise(loc=LOC, message="boom"))

    # -- ops ------------------------------------------------------------------
    def _op(self, cls, result_type, **fields):
        result = self._value(result_type) if result_type is not None else None
        if result is not None:
            fields["result"] = result
        self.current[2].append(cls(loc=LOC, **fields))
        return result

    def const(self, t: Type, value):
        return self._op(ir.Const, t, value=value)

    def undef(self, t: Type):
        return self._op(ir.Undef, t, name="u")

    def binop(self, op: str, a, b):
        return self._op(ir.BinOp, a.type, op=op, lhs=a, rhs=b)

    def unary(self, op: str, a):
        return self._op(ir.UnaryOp, a.type, op=op, operand=a)

    def compare(self, op: str, a, b):
        return self._op(ir.Compare, boolean, op=op, lhs=a, rhs=b)

    def cast(self, t: Scalar, a):
        return self._op(ir.Cast, t, operand=a)

    def getitem(self, arr, index):
        return self._op(ir.GetItem, arr.type.dtype, obj=arr, index=index)

    def setitem(self, arr, index, value) -> None:
        self._op(ir.SetItem, None, obj=arr, index=index, value=value)

    def tuple(self, *items):

        return self._op(ir.BuildTuple, Tuple(tuple(i.type for i in items)), items=tuple(items))

    def tuple_get(self, tup, k: int):
        return self._op(ir.TupleGet, tup.type.items[k], tuple=tup, index=k)

    def intrinsic(self, name: str, args, result_type: Type = none, **attrs):
        return self._op(
            ir.Intrinsic, result_type, name=name, args=tuple(args), attrs=tuple(attrs.items())
        )

    def get_iter(self, rng):

        return self._op(ir.GetIter, RangeIter(int64), obj=rng)

    def iter_valid(self, it):
        return self._op(ir.IterValid, boolean, iter=it)

    def iter_value(self, it):

        return self._op(ir.IterValue, int64, iter=it)

    def iter_next(self, it):
        return self._op(ir.IterNext, it.type, iter=it)

    def finish(self) -> ir.Function:
        blocks = tuple(
            ir.Block(i, params, tuple(ops), term) for i, params, ops, term in self._blocks
        )
        fn = ir.Function(self.name, self.arg_names, blocks, LOC)
        ir.verify(fn, typed=True)
        return fn


def arr(dtype: Scalar, ndim: int = 1, layout: str = "C") -> Array:
    return Array(dtype, ndim, layout)


# -- compiling: NVVM -> PTX -> cubin -----------------------------------------------------


def nvvm_text(fn: ir.Function) -> str:
    return str(lower_to_llvm(fn, CUDA_TARGET))


def to_ptx(fn: ir.Function, arch=(9, 0)) -> str:
    """LLVM IR -> PTX -> cubin for ``arch``; returns the PTX (the cubin must link)."""
    ptx_stage = pytest.importorskip("cujit.ptx")
    try:
        # As bytes: cujit.ptx then always links libdevice (its text check looks for
        # ``@__nv_`` while llvmlite prints ``@"__nv_..."``; reported to its owner).
        ptx = ptx_stage.compile_ptx(nvvm_text(fn).encode(), arch)
        cubin = ptx_stage.link_cubin(ptx, arch)
    except ptx_stage.ToolchainNotFoundError as exc:  # pragma: no cover - CI has the wheels
        pytest.skip(f"no CUDA toolchain: {exc}")
    assert cubin[:4] == b"\x7fELF"
    assert f".entry {kernel_symbol(fn)}(" in ptx
    return ptx


# -- running on the host: the same lowering, retargeted -------------------------------------

_HOST_MATH = {
    "floor",
    "ceil",
    "fmod",
    "copysign",
    "pow",
    "fabs",
    "sqrt",
    "exp",
    "log",
    "sin",
    "atan2",
    "hypot",
}

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()
_HOST_TM = llvm.Target.from_default_triple().create_target_machine()

HOST_TARGET = Target(
    name="host-test",
    triple=llvm.get_process_triple(),
    data_layout=str(_HOST_TM.target_data),
    # Only the target-independent intrinsics: the GPU ones have no host meaning.
    intrinsics={
        k: v for k, v in INTRINSICS.items() if not k.startswith(("cuda.", "shared.", "atomic."))
    },
    math={
        **{
            (n, "float64"): MathFn(
                n, 2 if n in ("fmod", "copysign", "pow", "atan2", "hypot") else 1
            )
            for n in _HOST_MATH
        },
        **{
            (n, "float32"): MathFn(
                n + "f", 2 if n in ("fmod", "copysign", "pow", "atan2", "hypot") else 1
            )
            for n in _HOST_MATH
        },
    },
)

_CTYPES = {
    "bool": ctypes.c_uint8,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
    "ptr": ctypes.c_void_p,
}
_engines = []  # keep JIT engines (and their code) alive for the session


def host_compile(fn: ir.Function):
    """JIT ``fn`` for the host; returns ``call(*args)`` taking scalars and NumPy arrays."""
    return host_module_call(lower_to_llvm(fn, HOST_TARGET), fn)


def host_module_call(module, fn: ir.Function):
    """``host_compile`` of ``fn`` lowered to ``module`` already (every parameter passed)."""
    mod = llvm.parse_assembly(str(module))
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, _HOST_TM)
    engine.finalize_object()
    _engines.append(engine)
    kinds = [k for p in fn.args for k in param_kinds(p.type)]
    cfunc = ctypes.CFUNCTYPE(None, *[_CTYPES[k] for k in kinds])(
        engine.get_function_address(kernel_symbol(fn))
    )

    def flatten(value, t: Type) -> list:
        if isinstance(t, Array):
            assert value.dtype == t.dtype.dtype and value.ndim == t.ndim
            return [value.ctypes.data, *value.shape, *(value.strides if passes_strides(t) else ())]
        if isinstance(t, Tuple):
            return [x for v, it in zip(value, t.items, strict=True) for x in flatten(v, it)]
        return [int(value) if t.kind == "b" else value]

    def call(*args):
        flat = [x for a, p in zip(args, fn.args, strict=True) for x in flatten(a, p.type)]
        cfunc(*flat)

    return call


def elementwise(name: str, in_t: Scalar, out_t: Scalar, body) -> ir.Function:
    """``for i in range(a.size): out[i] = body(a[i], b[i])`` over 1-d C arrays;
    exercises range iteration and block params (phis) on every call."""
    fb = FunctionBuilder(name, a=arr(in_t), b=arr(in_t), out=arr(out_t))
    a, b, out = fb.args
    n = fb.intrinsic("array.size", (a,), int64)
    rng = fb.intrinsic("range", (fb.const(int64, 0), n, fb.const(int64, 1)), RangeType(int64))
    it0 = fb.get_iter(rng)
    head, (it,) = fb.block(it0.type)
    body_id, _ = fb.block()
    done, _ = fb.block()
    fb.jump(head, it0)
    fb.enter(head)
    fb.branch(fb.iter_valid(it), body_id, done)
    fb.enter(body_id)
    i = fb.iter_value(it)
    fb.setitem(out, i, body(fb, fb.getitem(a, i), fb.getitem(b, i)))
    fb.jump(head, fb.iter_next(it))
    fb.enter(done)
    fb.ret()
    return fb.finish()


def run_elementwise(fn, a, b, out_dtype, poison):
    out = np.full(len(a), poison, dtype=out_dtype)
    host_compile(fn)(a, b, out)
    return out


def wrap(value: int, t: Scalar) -> int:
    """``value`` wrapped to ``t``'s width, as a Python int of the right sign."""
    bits = t.bits
    value &= (1 << bits) - 1
    return value - (1 << bits) if t.kind == "i" and value >> (bits - 1) else value


def same_float(x: float, y: float) -> bool:
    """Equal including the sign of zero, and nan matching nan."""
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
