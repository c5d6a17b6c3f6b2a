"""Stage 6 on hand-built typed IR: the kernel signature (the ABI's parameters), saxpy, and
2-D indexing in the C, F and strided layouts (LLVM IR, PTX, addresses on the host)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from codegen_helpers import (
    FunctionBuilder,
    arr,
    host_compile,
    nvvm_text,
    to_ptx,
)

from cujit import ir
from cujit.abi import param_kinds
from cujit.codegen import kernel_symbol, lower_to_llvm
from cujit.targets.cuda import CUDA_TARGET
from cujit.types import (
    Tuple,
    boolean,
    float32,
    float64,
    int32,
    int64,
    uint8,
)

# == the kernel signature ==========================================================


def test_parameters_follow_the_abi():
    fb = FunctionBuilder(
        "sig", flag=boolean, n=int32, x=arr(float64, 2, "A"), pair=Tuple((float32, arr(uint8)))
    )
    fb.ret()
    fn = fb.finish()
    llfn = lower_to_llvm(fn, CUDA_TARGET).get_global("sig")
    expect = {"ptr": None, "uint8": "i8", "int32": "i32", "int64": "i64", "float32": "float"}
    kinds = [k for p in fn.args for k in param_kinds(p.type)]
    types = [str(t) for t in llfn.function_type.args]
    # bool, int32, the 'A' array (pointer, 2 extents, 2 strides), float32, the C array
    # (pointer and extent: its stride follows from its extent)
    assert len(kinds) == len(types) == 1 + 1 + 5 + 1 + 2
    for kind, ty in zip(kinds, types, strict=True):
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
    assert re.search(
        r'define void @"saxpy"\(float %"a", float\* %"x.data", i64 %"x.shape0", '
        r'float\* %"y.data",',
        text,
    )
    for sreg in ("ctaid.x", "ntid.x", "tid.x"):
        assert f'@"llvm.nvvm.read.ptx.sreg.{sreg}"(), !range' in text  # with its range
    assert "mul nuw nsw i64" in text  # cuda.grid in int64
    assert re.search(r"fmul float %\"a\", %\"v\d+\"", text)
    assert "load float, float*" in text and "store float" in text
    assert "noalias" not in text  # arrays may alias
    assert re.search(r"!nvvm.annotations = !{ !\d+ }", text)
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
    fb = FunctionBuilder(
        f"at_{layout}", x=arr(float64, 2, layout), i=int64, j=int64, out=arr(float64)
    )
    x, i, j, out = fb.args
    fb.setitem(out, fb.const(int64, 0), fb.getitem(x, fb.tuple(i, j)))
    fb.ret()
    return fb.finish()


@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_2d_layout_llvm_ir_and_ptx(layout):
    text = nvvm_text(copy_at(layout))
    # C and F address from the extents alone (the kernel takes no strides); A multiplies
    # by the byte strides it takes.
    strides_used = re.search(r'mul i64 %"[^"]+", %"x\.stride[01]"', text)
    assert bool(strides_used) == (layout == "A")
    assert ('%"x.stride' in text) == (layout == "A")
    if layout == "A":
        assert "bitcast double* " in text and "to i8*" in text
    else:
        assert "getelementptr double, double*" in text
    assert "ld.global.f64" in to_ptx(copy_at(layout))


@pytest.mark.parametrize("layout", ["C", "F", "A"])
def test_2d_layout_addresses_on_host(layout):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((7, 10))
    x = {
        "C": base[:5, :6].copy(),
        "F": np.asfortranarray(base[:5, :6]),
        "A": base[::-1, ::2][:5, :5],
    }[layout]  # negative and non-unit strides
    assert x.flags.c_contiguous == (layout == "C") and x.flags.f_contiguous == (layout == "F")
    run = host_compile(copy_at(layout))
    out = np.full(1, np.nan)
    for i in range(-x.shape[0], x.shape[0]):
        for j in range(-x.shape[1], x.shape[1]):
            run(x, i, j, out)
            assert out[0] == x[i, j], (i, j)
