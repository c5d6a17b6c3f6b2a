"""Stage 6 (lowering to LLVM IR) tests, on typed IR built by hand.

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
import re

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
from cujit.targets.cuda.libdevice import LIBDEVICE
from cujit.types import (
    Array,
    PyObject,
    RangeIter,
    RangeType,
    Scalar,
    Tuple,
    Type,
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
        self._term(ir.Branch(loc=LOC, cond=cond, then_target=then, else_target=els,
                             then_args=tuple(then_args), else_args=tuple(else_args)))

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
        return self._op(ir.Intrinsic, result_type, name=name, args=tuple(args),
                        attrs=tuple(attrs.items()))

    def get_iter(self, rng):

        return self._op(ir.GetIter, RangeIter(int64), obj=rng)

    def iter_valid(self, it):
        return self._op(ir.IterValid, boolean, iter=it)

    def iter_value(self, it):

        return self._op(ir.IterValue, int64, iter=it)

    def iter_next(self, it):
        return self._op(ir.IterNext, it.type, iter=it)

    def finish(self) -> ir.Function:
        blocks = tuple(ir.Block(i, params, tuple(ops), term)
                       for i, params, ops, term in self._blocks)
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

_HOST_MATH = {"floor", "ceil", "fmod", "copysign", "pow", "fabs", "sqrt", "exp", "log", "sin",
              "atan2", "hypot"}

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()
_HOST_TM = llvm.Target.from_default_triple().create_target_machine()

HOST_TARGET = Target(
    name="host-test",
    triple=llvm.get_process_triple(),
    data_layout=str(_HOST_TM.target_data),
    # Only the target-independent intrinsics: the GPU ones have no host meaning.
    intrinsics={k: v for k, v in INTRINSICS.items()
                if not k.startswith(("cuda.", "shared.", "atomic."))},
    math={**{(n, "float64"): MathFn(n, 2 if n in ("fmod", "copysign", "pow", "atan2",
                                                  "hypot") else 1) for n in _HOST_MATH},
          **{(n, "float32"): MathFn(n + "f", 2 if n in ("fmod", "copysign", "pow", "atan2",
                                                        "hypot") else 1) for n in _HOST_MATH}},
)

_CTYPES = {"bool": ctypes.c_uint8, "int8": ctypes.c_int8, "int16": ctypes.c_int16,
           "int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint8": ctypes.c_uint8,
           "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
           "float32": ctypes.c_float, "float64": ctypes.c_double, "ptr": ctypes.c_void_p}
_engines = []  # keep JIT engines (and their code) alive for the session


def host_compile(fn: ir.Function):
    """JIT ``fn`` for the host; returns ``call(*args)`` taking scalars and NumPy arrays."""
    mod = llvm.parse_assembly(str(lower_to_llvm(fn, HOST_TARGET)))
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, _HOST_TM)
    engine.finalize_object()
    _engines.append(engine)
    kinds = [k for p in fn.args for k in param_kinds(p.type)]
    cfunc = ctypes.CFUNCTYPE(None, *[_CTYPES[k] for k in kinds])(
        engine.get_function_address(kernel_symbol(fn)))

    def flatten(value, t: Type) -> list:
        if isinstance(t, Array):
            assert value.dtype == t.dtype.dtype and value.ndim == t.ndim
            return [value.ctypes.data, *value.shape, *(value.strides if passes_strides(t) else ())]
        if isinstance(t, Tuple):
            return [x for v, it in zip(value, t.items) for x in flatten(v, it)]
        return [int(value) if t.kind == "b" else value]

    def call(*args):
        flat = [x for a, p in zip(args, fn.args) for x in flatten(a, p.type)]
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


# == the kernel signature ==========================================================

def test_parameters_follow_the_abi():
    fb = FunctionBuilder("sig", flag=boolean, n=int32, x=arr(float64, 2, "A"),
                         pair=Tuple((float32, arr(uint8))))
    fb.ret()
    fn = fb.finish()
    llfn = lower_to_llvm(fn, CUDA_TARGET).get_global("sig")
    expect = {"ptr": None, "uint8": "i8", "int32": "i32", "int64": "i64", "float32": "float"}
    kinds = [k for p in fn.args for k in param_kinds(p.type)]
    types = [str(t) for t in llfn.function_type.args]
    # bool, int32, the 'A' array (pointer, 2 extents, 2 strides), float32, the C array
    # (pointer and extent: its stride follows from its extent)
    assert len(kinds) == len(types) == 1 + 1 + 5 + 1 + 2
    for kind, ty in zip(kinds, types):
        assert ty.endswith("*") if kind == "ptr" else ty == expect[kind]
    assert types[2] == "double*" and types[8] == "i8*"
    assert str(llfn.function_type.return_type) == "void"


def test_kernel_symbol_is_a_ptx_identifier():
    fb = FunctionBuilder("outer.<locals>.k")
    fb.ret()
    assert kernel_symbol(fb.finish()) == "outer__locals__k"


# == saxpy ========================================================================

def saxpy() -> ir.Function:
    fb = FunctionBuilder("saxpy", a=float32, x=arr(float32), y=arr(float32), out=arr(float32))
    a, x, y, out = fb.args
    i = fb.intrinsic("cuda.grid", (), int64, ndim=1)
    inside, _ = fb.block()
    done, _ = fb.block()
    fb.branch(fb.compare("<", i, fb.intrinsic("array.size", (x,), int64)), inside, done)
    fb.enter(inside)
    fb.setitem(out, i, fb.binop("+", fb.binop("*", a, fb.getitem(x, i)), fb.getitem(y, i)))
    fb.jump(done)
    fb.enter(done)
    fb.ret()
    return fb.finish()


def test_saxpy_llvm_ir():
    text = nvvm_text(saxpy())
    assert 'target triple = "nvptx64-nvidia-cuda"' in text
    # C-contiguous arrays travel as pointer and extent (cujit.abi): no stride parameter
    assert re.search(r'define void @"saxpy"\(float %"a", float\* %"x.data", i64 %"x.shape0", '
                     r'float\* %"y.data",', text)
    for sreg in ("ctaid.x", "ntid.x", "tid.x"):
        assert f"@\"llvm.nvvm.read.ptx.sreg.{sreg}\"(), !range" in text  # with its range
    assert "mul nuw nsw i64" in text  # cuda.grid in int64
    assert re.search(r"fmul float %\"a\", %\"v\d+\"", text)
    assert "load float, float*" in text and "store float" in text
    assert "noalias" not in text  # arrays may alias
    assert re.search(r'!nvvm.annotations = !{ !\d+ }', text)
    assert re.search(r'!{ void \(float, float\*, .*\)\* @"saxpy", !"kernel", i32 1 }', text)
    assert "!{ i32 2, i32 0, i32 3, i32 1 }" in text


@pytest.mark.parametrize("arch", [(9, 0), (7, 5)], ids=["sm_90", "sm_75"])
def test_saxpy_ptx(arch):
    ptx = to_ptx(saxpy(), arch)
    assert "ld.global.f32" in ptx and "st.global.f32" in ptx
    assert "fma.rn.f32" in ptx
    # The grid index is known non-negative, so no negative-index wrap survives.
    assert "shr.s64" not in ptx


# == 2-D indexing in the three layouts ===============================================

def copy_at(layout: str) -> ir.Function:
    """``out[0] = x[i, j]``: one element read through the layout's addressing."""
    fb = FunctionBuilder(f"at_{layout}", x=arr(float64, 2, layout), i=int64, j=int64,
                         out=arr(float64))
    x, i, j, out = fb.args
    fb.setitem(out, fb.const(int64, 0), fb.getitem(x, fb.tuple(i, j)))
    fb.ret()
    return fb.finish()


@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_2d_layout_llvm_ir_and_ptx(layout):
    text = nvvm_text(copy_at(layout))
    strides_read = re.search(r"extractvalue \{double\*, \[2 x i64\], \[2 x i64\]\} %\"v0\", 2,",
                             text)
    # C and F address from the extents alone; A multiplies by the byte strides.
    assert bool(strides_read) == (layout == "A")
    if layout == "A":
        assert "bitcast double* " in text and "to i8*" in text
    else:
        assert "getelementptr double, double*" in text
    assert "ld.global.f64" in to_ptx(copy_at(layout))


@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_2d_layout_addresses_on_host(layout):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((7, 10))
    x = {"C": base[:5, :6].copy(),
         "F": np.asfortranarray(base[:5, :6]),
         "A": base[::-1, ::2][:5, :5]}[layout]  # negative and non-unit strides
    assert x.flags.c_contiguous == (layout == "C") and x.flags.f_contiguous == (layout == "F")
    run = host_compile(copy_at(layout))
    out = np.full(1, np.nan)
    for i in range(-x.shape[0], x.shape[0]):
        for j in range(-x.shape[1], x.shape[1]):
            run(x, i, j, out)
            assert out[0] == x[i, j], (i, j)


# == Python arithmetic: // % ** shifts, checked on the host against Python ============

INT_EDGES = [0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100]


def int_operands(t: Scalar, rng) -> tuple[np.ndarray, np.ndarray]:
    signed = t.kind == "i"
    lo, hi = (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if signed else (0, (1 << t.bits) - 1)
    edges = [v for v in INT_EDGES + [lo, hi, lo + 1, hi - 1] if lo <= v <= hi]
    pairs = [(a, b) for a in edges for b in edges]
    randoms = [rng.integers(lo, hi, 300, endpoint=True, dtype=t.dtype).tolist() for _ in "ab"]
    pairs += list(zip(*randoms))
    a, b = zip(*pairs)
    return np.array(a, dtype=t.dtype), np.array(b, dtype=t.dtype)


def py_floordiv(a: int, b: int, t: Scalar) -> int:
    return 0 if b == 0 else wrap(a // b, t)


def py_mod(a: int, b: int, t: Scalar) -> int:
    return 0 if b == 0 else wrap(a % b, t)


@pytest.mark.parametrize("t", [int8, int32, int64, uint8, uint32, uint64], ids=str)
@pytest.mark.parametrize("op", ["//", "%"])
def test_int_floor_division_on_host(op, t):
    a, b = int_operands(t, np.random.default_rng(2))
    fn = elementwise("idiv", t, t, lambda fb, x, y: fb.binop(op, x, y))
    got = run_elementwise(fn, a, b, t.dtype, 99)
    ref = py_floordiv if op == "//" else py_mod
    expect = [ref(int(x), int(y), t) for x, y in zip(a, b)]
    assert got.tolist() == expect


def test_int_floor_division_llvm_ir_and_ptx():
    fn = elementwise("idiv", int32, int32, lambda fb, x, y: fb.binop(
        "+", fb.binop("//", x, y), fb.binop("%", x, y)))
    text = nvvm_text(fn)
    assert "sdiv i32" in text and "srem i32" in text
    assert re.search(r"icmp eq i32 %\"v\d+\", 0", text)  # the zero-divisor guard
    ptx = to_ptx(fn)
    assert "div.s32" in ptx
    fn = elementwise("udiv", uint32, uint32, lambda fb, x, y: fb.binop("//", x, y))
    assert "udiv i32" in nvvm_text(fn) and "div.u32" in to_ptx(fn)


def py_float_divmod(a: float, b: float) -> tuple[float, float]:
    if b == 0.0:  # NumPy's answers where Python raises
        with np.errstate(all="ignore"):
            return float(np.float64(a) / np.float64(b)), math.nan
    return a // b, a % b


FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, -3.0, 7.25, -7.25, 1e300,
               -1e300, 5e-324, math.inf, -math.inf, math.nan, 0.1, -0.1, 1e-300]


def same_float(x: float, y: float) -> bool:
    """Equal including the sign of zero, and nan matching nan."""
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


@pytest.mark.parametrize("op", ["//", "%"])
def test_float_floor_division_on_host(op):
    rng = np.random.default_rng(3)
    pairs = [(a, b) for a in FLOAT_EDGES for b in FLOAT_EDGES]
    pairs += list(zip((rng.standard_normal(300) * 100).tolist(),
                      (rng.standard_normal(300) * 10).tolist()))
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    fn = elementwise("fdiv", float64, float64, lambda fb, x, y: fb.binop(op, x, y))
    got = run_elementwise(fn, a, b, np.float64, 12345.0)
    k = 0 if op == "//" else 1
    bad = [(x, y, g, py_float_divmod(x, y)[k]) for x, y, g in zip(a, b, got)
           if not same_float(g, py_float_divmod(float(x), float(y))[k])]
    assert not bad, bad[:5]


def test_float_floor_division_ptx():
    for t in (float32, float64):
        fn = elementwise("fdiv", t, t, lambda fb, x, y: fb.binop(
            "+", fb.binop("//", x, y), fb.binop("%", x, y)))
        suffix = "f" if t is float32 else ""
        text = nvvm_text(fn)
        for name in ("fmod", "floor", "copysign"):
            assert f'declare {"float" if suffix else "double"} @"__nv_{name}{suffix}"' in text
        to_ptx(fn)


def clamped_shift(op: str, a: int, n: int, t: Scalar) -> int:
    """The documented shift semantics: counts outside [0, bits) clamp, as PTX shl/shr."""
    n &= (1 << t.bits) - 1  # the count is read as unsigned
    if n >= t.bits:
        return 0 if op == "<<" or a >= 0 else -1
    return wrap(a << n, t) if op == "<<" else a >> n


@pytest.mark.parametrize("t", [int8, int32, int64, uint32, uint64], ids=str)
@pytest.mark.parametrize("op", ["<<", ">>"])
def test_shifts_on_host(op, t):
    rng = np.random.default_rng(4)
    a, _ = int_operands(t, rng)
    counts = [0, 1, 3, t.bits - 1, t.bits, t.bits + 1, 2 * t.bits, 255]
    if t.kind == "i":
        counts += [-1, -t.bits]
    n = np.array([counts[k % len(counts)] for k in range(len(a))]).astype(t.dtype)
    fn = elementwise("shift", t, t, lambda fb, x, y: fb.binop(op, x, y))
    got = run_elementwise(fn, a, n, t.dtype, 7)
    assert got.tolist() == [clamped_shift(op, int(x), int(c), t) for x, c in zip(a, n)]


def test_shifts_ptx():
    fn = elementwise("shift", int32, int32, lambda fb, x, y: fb.binop(
        "^", fb.binop("<<", x, y), fb.binop(">>", x, y)))
    text = nvvm_text(fn)
    assert "shl i32" in text and "ashr i32" in text and "icmp uge i32" in text
    ptx = to_ptx(fn)
    assert "shl.b32" in ptx and "shr.s32" in ptx


def py_int_pow(a: int, n: int, t: Scalar) -> int:
    if n >= 0:
        return wrap(a ** n, t)
    return 1 if a == 1 else (-1 if n % 2 else 1) if a == -1 else 0


@pytest.mark.parametrize("t", [int32, int64, uint8], ids=str)
def test_int_power_on_host(t):
    bases = [0, 1, -1, 2, -2, 3, -3, 7, 10, -5, 255] if t.kind == "i" else [0, 1, 2, 3, 7, 255]
    exps = [0, 1, 2, 3, 5, 8, 13, 31, 63, 64, 100] + ([-1, -2, -3] if t.kind == "i" else [])
    pairs = [(b, e) for b in bases for e in exps if wrap(b, t) == b]
    a = np.array([p[0] for p in pairs], dtype=t.dtype)
    n = np.array([p[1] for p in pairs], dtype=t.dtype)
    fn = elementwise("ipow", t, t, lambda fb, x, y: fb.binop("**", x, y))
    got = run_elementwise(fn, a, n, t.dtype, 3)
    assert got.tolist() == [py_int_pow(int(x), int(e), t) for x, e in zip(a, n)]
    assert "cujit.ipow" in nvvm_text(fn)
    to_ptx(fn)


def test_float_power_uses_libdevice():
    fn = elementwise("fpow", float32, float32, lambda fb, x, y: fb.binop("**", x, y))
    assert 'call float @"__nv_powf"' in nvvm_text(fn)
    to_ptx(fn)
    x = np.array([2.0, 0.5, 9.0], np.float32)
    y = np.array([10.0, -1.0, 0.5], np.float32)
    np.testing.assert_allclose(run_elementwise(fn, x, y, np.float32, np.nan), x ** y, rtol=1e-6)


def test_int_arithmetic_wraps():
    fn = elementwise("wrapadd", int8, int8, lambda fb, x, y: fb.binop(
        "-", fb.binop("*", x, y), fb.unary("-", fb.binop("+", x, y))))
    text = nvvm_text(fn)
    assert "nsw" not in text.replace("add nsw i64", "")  # only the range advance has a flag
    a = np.array([127, -128, 100, -1], np.int8)
    b = np.array([1, -1, 3, -128], np.int8)
    expect = [wrap(x * y + (x + y), int8) for x, y in zip(a.tolist(), b.tolist())]
    assert run_elementwise(fn, a, b, np.int8, 0).tolist() == expect


# == control flow: block params become phis ===========================================

def range_sum(step_is_arg: bool = True) -> ir.Function:
    """``acc = 0; for k in range(start, stop, step): acc += k * k; out[0] = acc``."""
    fb = FunctionBuilder("rsum", start=int64, stop=int64, step=int64, out=arr(int64))
    start, stop, step, out = fb.args
    rng = fb.intrinsic("range", (start, stop, step), RangeType(int64))
    it0 = fb.get_iter(rng)
    head, (it, acc) = fb.block(RangeIter(int64), int64)
    body, _ = fb.block()
    done, (total,) = fb.block(int64)
    fb.jump(head, it0, fb.const(int64, 0))
    fb.enter(head)
    fb.branch(fb.iter_valid(it), body, done, else_args=(acc,))
    fb.enter(body)
    k = fb.iter_value(it)
    fb.jump(head, fb.iter_next(it), fb.binop("+", acc, fb.binop("*", k, k)))
    fb.enter(done)
    fb.setitem(out, fb.const(int64, 0), total)
    fb.ret()
    return fb.finish()


def test_loop_phis_llvm_ir_and_ptx():
    text = nvvm_text(range_sum())
    # The iterator is carried as one phi per field, the accumulator as its own.
    for field in (0, 1, 2):  # next, stop, step
        assert re.search(rf'%"v\d+\.{field}" = phi  i64 \[%"[.\w]+", %"block0"\], '
                         r'\[%"[.\w]+", %"block2"\]', text)
    assert len(re.findall(r"= phi  i64", text)) >= 5  # next, stop, step, acc, total
    assert "add nsw i64" in text  # the range advance
    to_ptx(range_sum())


@pytest.mark.parametrize("start,stop,step", [(0, 10, 1), (3, 20, 4), (10, 0, -1), (10, -7, -3),
                                             (5, 5, 1), (5, 0, 1), (0, 5, -1), (0, 5, 0),
                                             (-4, 4, 3)])
def test_range_loop_on_host(start, stop, step):
    out = np.full(1, -1, np.int64)
    host_compile(range_sum())(start, stop, step, out)
    expect = sum(k * k for k in range(start, stop, step)) if step else 0
    assert out[0] == expect


def test_branch_to_one_block_with_different_args():
    """``out[0] = 1 if c else 2`` written as two edges into one block."""
    fb = FunctionBuilder("same", c=boolean, out=arr(int32))
    c, out = fb.args
    join, (v,) = fb.block(int32)
    fb.branch(c, join, join, then_args=(fb.const(int32, 1),), else_args=(fb.const(int32, 2),))
    fb.enter(join)
    fb.setitem(out, fb.const(int64, 0), v)
    fb.ret()
    fn = fb.finish()
    to_ptx(fn)
    run = host_compile(fn)
    out = np.zeros(1, np.int32)
    run(True, out)
    assert out[0] == 1
    run(False, out)
    assert out[0] == 2


def test_unreachable_blocks_compile_time_values_and_raise():
    fb = FunctionBuilder("odd", x=arr(float32))
    (x,) = fb.args
    fb.const(PyObject(math), math)  # a module: no machine value, no code
    fb.const(none, None)
    u = fb.undef(float32)
    dead, _ = fb.block()
    fail, _ = fb.block()
    ok, _ = fb.block()
    fb.branch(fb.compare("<", fb.intrinsic("array.size", (x,), int64), fb.const(int64, 0)),
              fail, ok)
    fb.enter(fail)
    fb.raise_()
    fb.enter(ok)
    fb.setitem(x, fb.const(int64, -1), fb.const(float32, 2.5))
    fb.ret()
    fb.enter(dead)  # no edge reaches it: not lowered
    fb.setitem(x, fb.const(int64, 0), u)
    fb.ret()
    fn = fb.finish()
    text = nvvm_text(fn)
    assert "block1" not in text and "undef" not in text.split("block0")[-1]
    assert text.count("ret void") == 2  # Raise ends the thread
    to_ptx(fn)
    a = np.zeros(3, np.float32)
    host_compile(fn)(a)
    assert a.tolist() == [0, 0, 2.5]  # a[-1] counts from the end


# == min, max, abs, compares, casts, bools ============================================

def test_min_max_follow_python_on_host():
    vals = [1.0, -1.0, 0.0, -0.0, math.nan, math.inf, -math.inf, 2.5]
    a = np.array([x for x in vals for _ in vals])
    b = np.array([y for _ in vals for y in vals])
    for name, ref in (("min", min), ("max", max)):
        fn = elementwise(name, float64, float64,
                         lambda fb, x, y, name=name: fb.intrinsic(name, (x, y), float64))
        got = run_elementwise(fn, a, b, np.float64, 42.0)
        bad = [(x, y) for x, y, g in zip(a, b, got) if not same_float(g, ref(x, y))]
        assert not bad, (name, bad)
    fn = elementwise("imin", int32, int32, lambda fb, x, y: fb.intrinsic("min", (x, y), int32))
    a32 = np.array([-5, 3, 2**31 - 1, -2**31], np.int32)
    b32 = np.array([2, -7, 0, 5], np.int32)
    assert run_elementwise(fn, a32, b32, np.int32, 0).tolist() == [-5, -7, 0, -2**31]
    assert "icmp slt i32" in nvvm_text(fn)


def test_abs_on_host():
    fn = elementwise("iabs", int8, int8, lambda fb, x, y: fb.intrinsic("abs", (x,), int8))
    a = np.array([-5, 5, 0, -128, 127], np.int8)
    assert run_elementwise(fn, a, a, np.int8, 1).tolist() == [5, 5, 0, -128, 127]
    fn = elementwise("fabs", float32, float32, lambda fb, x, y: fb.intrinsic("abs", (x,),
                                                                             float32))
    assert 'call float @"__nv_fabsf"' in nvvm_text(fn)
    to_ptx(fn)


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_compares_on_host(op):
    ops = {"<": lambda x, y: x < y, "<=": lambda x, y: x <= y, ">": lambda x, y: x > y,
           ">=": lambda x, y: x >= y, "==": lambda x, y: x == y, "!=": lambda x, y: x != y}
    vals = [1.0, -1.0, 0.0, -0.0, math.nan, math.inf]
    a = np.array([x for x in vals for _ in vals])
    b = np.array([y for _ in vals for y in vals])
    fn = elementwise("fcmp", float64, boolean, lambda fb, x, y: fb.compare(op, x, y))
    got = run_elementwise(fn, a, b, np.bool_, True)
    assert got.tolist() == [ops[op](x, y) for x, y in zip(a.tolist(), b.tolist())]
    fn = elementwise("ucmp", uint32, boolean, lambda fb, x, y: fb.compare(op, x, y))
    ua = np.array([0, 1, 2**32 - 1, 7], np.uint32)
    ub = np.array([2**32 - 1, 1, 0, 7], np.uint32)
    got = run_elementwise(fn, ua, ub, np.bool_, True)
    assert got.tolist() == [ops[op](x, y) for x, y in zip(ua.tolist(), ub.tolist())]


CASTS = [
    (float64, int32, [2.9, -2.9, 0.5, -0.0, 1e9]),
    (float32, uint8, [2.9, 255.0, 0.0, 17.5]),
    (float64, boolean, [0.0, -0.0, 1.5, math.nan, math.inf]),
    (int32, boolean, [0, 1, -1, 7]),
    (boolean, int64, [True, False]),
    (boolean, float32, [True, False]),
    (int8, int64, [-1, 127, -128]),
    (uint8, int64, [255, 0, 128]),
    (int64, int8, [257, -129, 128]),
    (uint64, float64, [2**64 - 1, 0, 2**63]),
    (int64, float32, [-(2**40) - 1, 3]),
    (float64, float32, [1.1, 1e300, -0.0]),
    (float32, float64, [1.1, -2.5]),
]


@pytest.mark.parametrize("src,dst,values", CASTS, ids=lambda v: str(v) if isinstance(
    v, Scalar) else "")
def test_casts_follow_numpy_astype_on_host(src, dst, values):
    a = np.array(values, dtype=src.dtype)
    fn = elementwise("cast", src, dst, lambda fb, x, y: fb.cast(dst, x))
    with np.errstate(all="ignore"):
        expect = a.astype(dst.dtype)
    got = run_elementwise(fn, a, a, dst.dtype, 0)
    np.testing.assert_array_equal(got, expect)
    to_ptx(fn)


def test_bool_params_arrays_and_logic():
    """bool params travel as i8, bool elements are bytes, bool & | ^ and not stay i1."""
    fb = FunctionBuilder("bools", flag=boolean, a=arr(boolean), out=arr(boolean))
    flag, a, out = fb.args
    for k, op in enumerate(("&", "|", "^")):
        i = fb.const(int64, k)
        fb.setitem(out, i, fb.binop(op, flag, fb.getitem(a, i)))
    fb.setitem(out, fb.const(int64, 3), fb.unary("not", flag))
    fb.ret()
    fn = fb.finish()
    text = nvvm_text(fn)
    assert 'define void @"bools"(i8 %"flag", i8* %"a.data"' in text
    assert "zext i1" in text and "load i8, i8*" in text
    to_ptx(fn)
    run = host_compile(fn)
    for f in (False, True):
        a = np.array([True, False, True], np.bool_)
        out = np.zeros(4, np.uint8).view(np.bool_)
        run(f, a, out)
        assert out.view(np.uint8).tolist() == [f & a[0], f | a[1], f ^ a[2], not f]


def test_unary_ops_on_host():
    fn = elementwise("neg", float64, float64, lambda fb, x, y: fb.unary("-", x))
    a = np.array([0.0, -0.0, 1.5, math.inf])
    got = run_elementwise(fn, a, a, np.float64, 9.0)
    assert [math.copysign(1, g) for g in got] == [-1, 1, -1, -1]
    assert "fsub double -0.0" in nvvm_text(fn) or "fsub double 0x8000000000000000" in \
        nvvm_text(fn)
    fn = elementwise("inv", int32, int32, lambda fb, x, y: fb.unary("~", x))
    ia = np.array([0, -1, 5], np.int32)
    assert run_elementwise(fn, ia, ia, np.int32, 9).tolist() == [-1, 0, -6]


# == GPU intrinsics ====================================================================

def test_special_registers_grid_and_gridsize():
    fb = FunctionBuilder("grid3", out=arr(int64, 3))
    (out,) = fb.args
    g = fb.intrinsic("cuda.grid", (), Tuple((int64,) * 3), ndim=3)
    s = fb.intrinsic("cuda.gridsize", (), Tuple((int64,) * 2), ndim=2)
    tid_y = fb.cast(int64, fb.intrinsic("cuda.sreg", (), int32, reg="threadIdx.y"))
    dim_z = fb.cast(int64, fb.intrinsic("cuda.sreg", (), int32, reg="gridDim.z"))
    v = fb.binop("+", fb.binop("*", fb.tuple_get(s, 1), tid_y), dim_z)
    fb.setitem(out, g, v)
    fb.ret()
    fn = fb.finish()
    text = nvvm_text(fn)
    for reg in ("tid", "ctaid", "ntid"):
        for axis in "xyz":
            assert f'@"llvm.nvvm.read.ptx.sreg.{reg}.{axis}"' in text
    assert '@"llvm.nvvm.read.ptx.sreg.nctaid.y"' in text
    assert '@"llvm.nvvm.read.ptx.sreg.nctaid.z"' in text
    ptx = to_ptx(fn)
    for reg in ("%tid.z", "%ctaid.y", "%ntid.x", "%nctaid.z"):
        assert reg in ptx
    assert "mul.wide.u32" in ptx  # blockIdx * blockDim widened to 64 bits


def shared_kernel(shape, dtype=float32, twice=False) -> ir.Function:
    """``buf = shared.array(shape); buf[t] = x[t]; syncthreads(); x[t] = buf[n-1-t]``."""
    fb = FunctionBuilder("smem", x=arr(dtype))
    (x,) = fb.args
    bufs = [fb.intrinsic("shared.array", (), Array(dtype, len(shape), "C"), shape=shape,
                         dtype=dtype) for _ in range(2 if twice else 1)]
    t = fb.cast(int64, fb.intrinsic("cuda.sreg", (), int32, reg="threadIdx.x"))
    idx = t if len(shape) == 1 else fb.tuple(t, fb.const(int64, 0))
    fb.setitem(bufs[0], idx, fb.getitem(x, t))
    fb.intrinsic("cuda.syncthreads", ())
    n = fb.intrinsic("array.size", (bufs[-1],), int64)
    back = fb.binop("-", fb.binop("-", n, fb.const(int64, 1)), t)
    fb.setitem(x, t, fb.getitem(bufs[-1], back if len(shape) == 1 else fb.tuple(back, back)))
    fb.ret()
    return fb.finish()


def test_static_shared_arrays():
    fn = shared_kernel((128,), twice=True)
    text = nvvm_text(fn)
    # One global per op, in the shared address space, 16-byte aligned.
    globals_ = re.findall(r'@"__cujit_shared_\d+" = internal addrspace\(3\) global '
                          r'\[128 x float\] undef, align 16', text)
    assert len(globals_) == 2
    assert "addrspacecast float addrspace(3)* " in text and " to float*" in text
    assert 'call void @"llvm.nvvm.barrier0"()' in text
    ptx = to_ptx(fn)
    assert ".shared .align 16 .b8" in ptx and "bar.sync" in ptx
    assert "st.shared.f32" in ptx or "ld.shared.f32" in ptx
    to_ptx(shared_kernel((8, 16), float64))


def test_dynamic_shared_array():
    fn = shared_kernel((0,), int32, twice=True)
    text = nvvm_text(fn)
    # One extern zero-length array serves every dynamic op.
    assert text.count('@"__cujit_dynamic_shared" = external addrspace(3) global [0 x i8], '
                      'align 16') == 1
    assert "mov.u32 $0, %dynamic_smem_size;" in text
    assert re.search(r"udiv i64 %\"\.\d+\", 4", text)  # extent = bytes / itemsize
    ptx = to_ptx(fn)
    assert ".extern .shared .align 16 .b8 __cujit_dynamic_shared[]" in ptx
    assert "%dynamic_smem_size" in ptx


def local_kernel() -> ir.Function:
    """``tmp = local.array((4, 2), float64)``; fill, then sum it back into ``out[0]``."""
    fb = FunctionBuilder("loc", x=arr(float64), out=arr(float64))
    x, out = fb.args
    tmp = fb.intrinsic("local.array", (), Array(float64, 2, "C"), shape=(4, 2), dtype=float64)
    total = None
    for i in range(4):
        for j in range(2):
            ij = fb.tuple(fb.const(int64, i), fb.const(int64, j))
            fb.setitem(tmp, ij, fb.getitem(x, fb.const(int64, 2 * i + j)))
    for i in range(4):
        for j in range(2):
            v = fb.binop("*", fb.getitem(tmp, fb.tuple(fb.const(int64, i - 4),
                                                       fb.const(int64, j))),
                         fb.const(float64, float(10 ** (2 * i + j))))
            total = v if total is None else fb.binop("+", total, v)
    fb.setitem(out, fb.const(int64, 0), total)
    fb.ret()
    return fb.finish()


def test_local_array():
    text = nvvm_text(local_kernel())
    entry = text.split("entry:")[1].split("block0:")[0]
    assert re.search(r'%"local\d+" = alloca \[8 x double\], align 16', entry)  # in entry block
    to_ptx(local_kernel())
    x = np.arange(1.0, 9.0)
    out = np.full(1, np.nan)
    host_compile(local_kernel())(x, out)
    assert out[0] == sum(x[k] * 10 ** k for k in range(8))


@pytest.mark.parametrize("dtype,ptx_op", [(float32, "add.f32"), (float64, "add.f64"),
                                          (int32, "add.u32"), (uint64, "add.u64")], ids=str)
def test_atomic_add(dtype, ptx_op):
    """``old = atomic.add(acc, (i, -1), x[i]); x[i] = old``, 2-d for the index path."""
    fb = FunctionBuilder("atom", acc=arr(dtype, 2), x=arr(dtype))
    acc, x = fb.args
    i = fb.intrinsic("cuda.grid", (), int64, ndim=1)
    old = fb.intrinsic("atomic.add", (acc, fb.tuple(i, fb.const(int64, -1)), fb.getitem(x, i)),
                       dtype)
    fb.setitem(x, i, old)
    fb.ret()
    fn = fb.finish()
    text = nvvm_text(fn)
    if dtype.kind == "f":
        bits = dtype.bits
        ty = "float" if bits == 32 else "double"
        assert (f'call {ty} @"llvm.nvvm.atomic.load.add.f{bits}.p0f{bits}"({ty}* ' in text)
        assert "atomicrmw" not in text
    else:
        assert re.search(rf"atomicrmw add i{dtype.bits}\* %\"\.\d+\", i{dtype.bits} "
                         r"%\"v\d+\" monotonic", text)
    ptx = to_ptx(fn)
    assert f"atom.global.{ptx_op}" in ptx


def test_atomic_add_result_unused_becomes_red():
    fb = FunctionBuilder("red", acc=arr(float32), v=float32)
    acc, v = fb.args
    fb.intrinsic("atomic.add", (acc, fb.const(int64, 0), v), float32)
    fb.ret()
    ptx = to_ptx(fb.finish())
    assert "red.global.add.f32" in ptx or "atom.global.add.f32" in ptx


MATH1 = ["sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "floor", "ceil", "fabs", "erf", "erfc"]
MATH2 = ("pow", "atan2", "hypot", "copysign")


@pytest.mark.parametrize("t", [float32, float64], ids=str)
def test_every_math_function_compiles(t):
    fb = FunctionBuilder("mathall", x=arr(t))
    (x,) = fb.args
    v = fb.getitem(x, fb.const(int64, 0))
    for k, name in enumerate(MATH1 + list(MATH2)):
        args = (v,) if name in MATH1 else (v, v)
        fb.setitem(x, fb.const(int64, k), fb.intrinsic(f"math.{name}", args, t))
    for k, name in enumerate(("isnan", "isinf", "isfinite")):
        fb.setitem(x, fb.const(int64, 100 + k),
                   fb.cast(t, fb.intrinsic(f"math.{name}", (v,), boolean)))
    fb.ret()
    fn = fb.finish()
    text = nvvm_text(fn)
    for name in MATH1 + list(MATH2):
        assert f'@"{LIBDEVICE[(name, t.name)].symbol}"' in text
    assert "fcmp uno" in text
    ptx = to_ptx(fn)
    assert "__nv_" not in ptx  # libdevice was linked and inlined


# math functions libdevice provides under their C names (math.gamma is C's tgamma).
MATH1_MORE = {"expm1": "expm1", "log1p": "log1p", "asinh": "asinh", "acosh": "acosh",
              "atanh": "atanh", "gamma": "tgamma", "lgamma": "lgamma"}


@pytest.mark.parametrize("t", [float32, float64], ids=str)
def test_more_math_functions_reach_libdevice(t):
    fb = FunctionBuilder("mathmore", x=arr(t))
    (x,) = fb.args
    v = fb.getitem(x, fb.const(int64, 0))
    for k, name in enumerate(MATH1_MORE):
        fb.setitem(x, fb.const(int64, k), fb.intrinsic(f"math.{name}", (v,), t))
    fb.setitem(x, fb.const(int64, 50), fb.intrinsic("math.fmod", (v, v), t))
    fb.ret()
    fn = fb.finish()
    text = nvvm_text(fn)
    suffix = "f" if t is float32 else ""
    for name, c_name in {**MATH1_MORE, "fmod": "fmod"}.items():
        assert LIBDEVICE[(name, t.name)].symbol == f"__nv_{c_name}{suffix}"
        assert f'call {"float" if suffix else "double"} @"__nv_{c_name}{suffix}"' in text
    assert "__nv_" not in to_ptx(fn)


def test_math_on_host_and_float_classes():
    t = float64
    fn = elementwise("m", t, t, lambda fb, x, y: fb.binop(
        "+", fb.intrinsic("math.atan2", (x, y), t), fb.intrinsic("math.sqrt", (
            fb.intrinsic("abs", (x,), t),), t)))
    a = np.array([1.0, -2.0, 0.5])
    b = np.array([3.0, 0.25, -1.0])
    np.testing.assert_allclose(run_elementwise(fn, a, b, np.float64, np.nan),
                               np.arctan2(a, b) + np.sqrt(np.abs(a)), rtol=1e-15)
    vals = np.array([0.0, 1.0, math.inf, -math.inf, math.nan, 5e-324])
    for name, ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        fn = elementwise(name, t, boolean, lambda fb, x, y, name=name: fb.intrinsic(
            f"math.{name}", (x,), boolean))
        assert run_elementwise(fn, vals, vals, np.bool_, False).tolist() == ref(vals).tolist()


def test_target_tables_cover_the_typed_ir_contract():
    names = {"cuda.sreg", "cuda.grid", "cuda.gridsize", "cuda.syncthreads", "shared.array",
             "local.array", "atomic.add", "array.shape", "array.size", "abs", "min", "max",
             "range", "math.isnan", "math.isinf", "math.isfinite"}
    names |= {f"math.{n}" for n in MATH1 + list(MATH2)}
    assert names <= set(CUDA_TARGET.intrinsics)
    for n in MATH1 + list(MATH2) + ["fmod"]:
        for t in ("float32", "float64"):
            assert LIBDEVICE[(n, t)].symbol == f"__nv_{n}" + ("f" if t == "float32" else "")
    assert CUDA_TARGET.triple == "nvptx64-nvidia-cuda" and CUDA_TARGET.shared_addrspace == 3


def test_array_shape_and_len():
    fb = FunctionBuilder("shp", x=arr(float32, 3, "A"), out=arr(int64))
    x, out = fb.args
    shape = fb.intrinsic("array.shape", (x,), Tuple((int64,) * 3))
    for k in range(3):
        fb.setitem(out, fb.const(int64, k), fb.tuple_get(shape, k))
    fb.setitem(out, fb.const(int64, 3), fb.intrinsic("array.size", (x,), int64))
    fb.ret()
    fn = fb.finish()
    to_ptx(fn)
    x = np.zeros((2, 3, 5), np.float32)[:, ::2, 1:]
    out = np.full(4, -1, np.int64)
    host_compile(fn)(x, out)
    assert out.tolist() == [2, 2, 4, 16]
