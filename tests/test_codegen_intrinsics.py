"""Stage 6 on hand-built typed IR: the GPU intrinsics (special registers, shared and local
arrays, atomics, the math functions through libdevice, array shapes)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from codegen_helpers import (
    FunctionBuilder,
    arr,
    elementwise,
    host_compile,
    nvvm_text,
    run_elementwise,
    to_ptx,
)

from cujit import ir
from cujit.targets.cuda import CUDA_TARGET
from cujit.targets.cuda.libdevice import LIBDEVICE
from cujit.types import (
    Array,
    Tuple,
    boolean,
    float32,
    float64,
    int32,
    int64,
    uint64,
)

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
    bufs = [
        fb.intrinsic("shared.array", (), Array(dtype, len(shape), "C"), shape=shape, dtype=dtype)
        for _ in range(2 if twice else 1)
    ]
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
    globals_ = re.findall(
        r'@"_cudapy_smem_\d+" = internal addrspace\(3\) global '
        r"\[128 x float\] undef, align 16",
        text,
    )
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
    assert (
        text.count('@"__cujit_dynamic_shared" = external addrspace(3) global [0 x i8], align 16')
        == 1
    )
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
            v = fb.binop(
                "*",
                fb.getitem(tmp, fb.tuple(fb.const(int64, i - 4), fb.const(int64, j))),
                fb.const(float64, float(10 ** (2 * i + j))),
            )
            total = v if total is None else fb.binop("+", total, v)
    fb.setitem(out, fb.const(int64, 0), total)
    fb.ret()
    return fb.finish()


def test_local_array():
    text = nvvm_text(local_kernel())
    entry = text.split("entry:")[1].split("block0:")[0]
    # In the entry block, named as numba names it; without alignment= its type's own.
    assert re.search(r'%"_cudapy_lmem" = alloca \[8 x double\]\n', entry)
    to_ptx(local_kernel())
    x = np.arange(1.0, 9.0)
    out = np.full(1, np.nan)
    host_compile(local_kernel())(x, out)
    assert out[0] == sum(x[k] * 10**k for k in range(8))


@pytest.mark.parametrize(
    "dtype,ptx_op",
    [(float32, "add.f32"), (float64, "add.f64"), (int32, "add.u32"), (uint64, "add.u64")],
    ids=str,
)
def test_atomic_add(dtype, ptx_op):
    """``old = atomic.add(acc, (i, -1), x[i]); x[i] = old``, 2-d for the index path."""
    fb = FunctionBuilder("atom", acc=arr(dtype, 2), x=arr(dtype))
    acc, x = fb.args
    i = fb.intrinsic("cuda.grid", (), int64, ndim=1)
    old = fb.intrinsic(
        "atomic.add", (acc, fb.tuple(i, fb.const(int64, -1)), fb.getitem(x, i)), dtype
    )
    fb.setitem(x, i, old)
    fb.ret()
    fn = fb.finish()
    text = nvvm_text(fn)
    if dtype.kind == "f":
        bits = dtype.bits
        ty = "float" if bits == 32 else "double"
        assert f'call {ty} @"llvm.nvvm.atomic.load.add.f{bits}.p0f{bits}"({ty}* ' in text
        assert "atomicrmw" not in text
    else:
        assert re.search(
            rf"atomicrmw add i{dtype.bits}\* %\"\.\d+\", i{dtype.bits} "
            r"%\"v\d+\" monotonic",
            text,
        )
    ptx = to_ptx(fn)
    assert f"atom.global.{ptx_op}" in ptx


def test_atomic_add_result_unused_becomes_red():
    fb = FunctionBuilder("red", acc=arr(float32), v=float32)
    acc, v = fb.args
    fb.intrinsic("atomic.add", (acc, fb.const(int64, 0), v), float32)
    fb.ret()
    ptx = to_ptx(fb.finish())
    assert "red.global.add.f32" in ptx or "atom.global.add.f32" in ptx


MATH1 = [
    "sqrt",
    "exp",
    "log",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "floor",
    "ceil",
    "fabs",
    "erf",
    "erfc",
]
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
        fb.setitem(
            x, fb.const(int64, 100 + k), fb.cast(t, fb.intrinsic(f"math.{name}", (v,), boolean))
        )
    fb.ret()
    fn = fb.finish()
    text = nvvm_text(fn)
    for name in MATH1 + list(MATH2):
        assert f'@"{LIBDEVICE[(name, t.name)].symbol}"' in text
    assert "fcmp uno" in text
    ptx = to_ptx(fn)
    assert "__nv_" not in ptx  # libdevice was linked and inlined


# math functions libdevice provides under their C names (math.gamma is C's tgamma).
MATH1_MORE = {
    "expm1": "expm1",
    "log1p": "log1p",
    "asinh": "asinh",
    "acosh": "acosh",
    "atanh": "atanh",
    "gamma": "tgamma",
    "lgamma": "lgamma",
}


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
    fn = elementwise(
        "m",
        t,
        t,
        lambda fb, x, y: fb.binop(
            "+",
            fb.intrinsic("math.atan2", (x, y), t),
            fb.intrinsic("math.sqrt", (fb.intrinsic("abs", (x,), t),), t),
        ),
    )
    a = np.array([1.0, -2.0, 0.5])
    b = np.array([3.0, 0.25, -1.0])
    np.testing.assert_allclose(
        run_elementwise(fn, a, b, np.float64, np.nan),
        np.arctan2(a, b) + np.sqrt(np.abs(a)),
        rtol=1e-15,
    )
    vals = np.array([0.0, 1.0, math.inf, -math.inf, math.nan, 5e-324])
    for name, ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        fn = elementwise(
            name,
            t,
            boolean,
            lambda fb, x, y, name=name: fb.intrinsic(f"math.{name}", (x,), boolean),
        )
        assert run_elementwise(fn, vals, vals, np.bool_, False).tolist() == ref(vals).tolist()


def test_target_tables_cover_the_typed_ir_contract():
    names = {
        "cuda.sreg",
        "cuda.grid",
        "cuda.gridsize",
        "cuda.syncthreads",
        "shared.array",
        "local.array",
        "atomic.add",
        "array.shape",
        "array.size",
        "abs",
        "min",
        "max",
        "range",
        "math.isnan",
        "math.isinf",
        "math.isfinite",
    }
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
