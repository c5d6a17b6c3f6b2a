"""Stage 4, type inference: the cuda intrinsics (special registers, grid, shared and local
arrays, atomics)."""

from __future__ import annotations

import numpy as np
import pytest
from infer_helpers import F32_1D, F32_2D, B, infer, op_of, ops

from cujit import cuda, ir
from cujit.diagnostics import CompileError, TypingError
from cujit.types import (
    Array,
    Tuple,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint32,
)

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


@pytest.mark.parametrize(
    "shape,dtype,kw,want_shape,want_dtype",
    [
        ((16, 8), float32, False, (16, 8), float32),
        (4, np.int32, True, (4,), int32),
        (0, np.dtype("float64"), False, (0,), float64),
    ],
)
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
