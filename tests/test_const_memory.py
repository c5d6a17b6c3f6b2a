"""``cuda.const.array_like(ary)``: a NumPy array frozen into the kernel at compile time,
read from constant memory (PTX ``.const``) on the GPU, from a private constant global on
the CPU target."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError
from cujit.infer.cuda_calls import ConstData
from cujit.ir import Intrinsic
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import float32, float64, int32, typeof

TABLE = np.arange(12, dtype=np.float64).reshape(3, 4) * 1.5 - 2.0
COEFFS = np.array([3, -1, 4, 1, 5, -9, 2, 6], dtype=np.int32)


def _lookup(out, idx):
    i = cuda.grid(1)
    t = cuda.const.array_like(TABLE)
    c = cuda.const.array_like(COEFFS)
    if i < out.shape[0]:
        j = idx[i]
        out[i] = t[j % t.shape[0], j % t.shape[1]] * c[j % c.size] + t.size


def _closure_kernel():
    weights = np.linspace(0.0, 1.0, 5).astype(np.float32)

    def kern(out):
        i = cuda.grid(1)
        w = cuda.const.array_like(weights)
        if i < out.shape[0]:
            acc = float32(0)
            for k in range(w.shape[0]):
                acc += w[k] * float32(i)
            out[i] = acc

    return kern, weights


def _expected_lookup(idx):
    j = idx.astype(np.int64)
    return TABLE[j % 3, j % 4] * COEFFS[j % 8] + TABLE.size


def _run(kern, target, *args):
    cuda.jit(kern, target=target)[4, 64](*args)


TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("target", TARGETS)
def test_global_tables(target):
    idx = np.random.default_rng(1).integers(0, 1000, 256).astype(np.int32)
    out = np.full(256, np.nan)
    _run(_lookup, target, out, idx)
    np.testing.assert_array_equal(out, _expected_lookup(idx))


@pytest.mark.parametrize("target", TARGETS)
def test_closure_table(target):
    kern, weights = _closure_kernel()
    out = np.full(256, np.nan, np.float32)
    _run(kern, target, out)
    np.testing.assert_allclose(out, weights.sum() * np.arange(256, dtype=np.float32), rtol=1e-6)


def test_ptx_has_a_const_table():
    ptx, _ = cuda.compile_ptx(_lookup, "void(float64[:], int32[:])")
    assert ".const .align 16 .b8 __cujit_const_" in ptx
    assert "ld.const.f64" in ptx  # the float64 table is read from constant memory
    assert any(f"ld.const.{t}32" in ptx for t in "usb")  # and the int32 one


def test_typed_ir_carries_the_bytes():
    result = compile_kernel(
        _lookup,
        (typeof(np.zeros(1)), typeof(np.zeros(1, np.int32))),
        Options(verify=True),
        stop_after="typed",
    )
    fn = result.outputs["typed"]
    ops = [
        op
        for b in fn.blocks
        for op in b.ops
        if isinstance(op, Intrinsic) and op.name == "const.array_like"
    ]
    assert len(ops) == 2
    first = ops[0]
    assert first.attr("shape") == (3, 4) and first.attr("dtype") == float64
    assert isinstance(first.attr("data"), ConstData) and first.attr("data") == TABLE.tobytes()
    assert first.result.type.ndim == 2 and first.result.type.layout == "C"
    assert "48 bytes" not in repr(first.attr("data")) and "96 bytes" in repr(first.attr("data"))
    assert ops[1].attr("dtype") == int32


def test_a_fortran_ordered_global_is_copied_in_c_order():
    fortran = np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3))

    def kern(out):
        t = cuda.const.array_like(fortran)
        for i in range(2):
            for j in range(3):
                out[i, j] = t[i, j]

    out = np.zeros((2, 3))
    cuda.jit(kern, target="cpu")[1, 1](out)
    np.testing.assert_array_equal(out, fortran)


def test_a_kernel_argument_is_refused():
    def kern(a, out):
        t = cuda.const.array_like(a)
        out[0] = t[0]

    with pytest.raises(TypingError, match="NumPy array known at compile time"):
        cuda.jit(kern, target="cpu")[1, 1](np.zeros(3), np.zeros(3))


def test_a_non_array_is_refused():
    def kern(out):
        t = cuda.const.array_like((1.0, 2.0))
        out[0] = t[0]

    with pytest.raises(TypingError, match="cuda.const.array_like"):
        cuda.jit(kern, target="cpu")[1, 1](np.zeros(3))


def test_placeholder_raises_on_the_host():
    with pytest.raises(RuntimeError, match="inside a @cuda.jit kernel"):
        cuda.const.array_like(TABLE)


# -- global and closure arrays used directly: frozen as numba freezes them ----------


def _direct_lookup(out, idx):
    i = cuda.grid(1)
    if i < out.shape[0]:
        j = idx[i]
        out[i] = (
            TABLE[j % TABLE.shape[0], j % TABLE.shape[1]] * COEFFS[j % len(COEFFS)] + TABLE.size
        )


@pytest.mark.parametrize("target", TARGETS)
def test_global_arrays_read_directly(target):
    idx = np.random.default_rng(2).integers(0, 1000, 256).astype(np.int32)
    out = np.full(256, np.nan)
    _run(_direct_lookup, target, out, idx)
    np.testing.assert_array_equal(out, _expected_lookup(idx))


def test_a_global_array_is_frozen_at_compile_time():
    table = np.array([1.0, 2.0, 3.0])

    def kern(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = table[i]

    k = cuda.jit(kern, target="cpu")
    out = np.zeros(3)
    k[1, 4](out)
    table[:] = -1.0  # numba: later changes do not reach the compiled kernel
    k[1, 4](out)
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])


def test_a_direct_global_array_is_a_const_table():
    result = compile_kernel(
        _direct_lookup,
        (typeof(np.zeros(1)), typeof(np.zeros(1, np.int32))),
        Options(verify=True),
        stop_after="typed",
    )
    ops = [
        op
        for b in result.outputs["typed"].blocks
        for op in b.ops
        if isinstance(op, Intrinsic) and op.name == "const.array_like"
    ]
    assert {op.attr("data") for op in ops} == {TABLE.tobytes(), COEFFS.tobytes()}
    ptx, _ = cuda.compile_ptx(_direct_lookup, "void(float64[:], int32[:])")
    assert "ld.const.f64" in ptx


def test_storing_into_a_global_array_is_refused_at_the_line():
    def kern(out):
        COEFFS[0] = 1

    with pytest.raises(TypingError, match="cannot assign into a global NumPy array") as e:
        cuda.jit(kern, target="cpu")[1, 1](np.zeros(3))
    assert e.value.loc.line == kern.__code__.co_firstlineno + 1


def _store_into_const(out):
    t = cuda.const.array_like(COEFFS)
    t[1] = 7


def _store_into_frozen_global(out):
    t = COEFFS  # a global array read as a constant, through a local name
    out[0] = t[0]
    t[2] = 7


def _atomic_into_const(out):
    cuda.atomic.add(cuda.const.array_like(COEFFS), 0, 1)


def _cas_into_const(out):
    out[0] = cuda.atomic.cas(cuda.const.array_like(COEFFS), 0, 3, 4)


@pytest.mark.parametrize(
    "kern,what,line",
    [
        (_store_into_const, "cannot assign into a constant array", 2),
        (_store_into_frozen_global, "cannot assign into", 3),
        (_atomic_into_const, "cuda.atomic.add cannot update a constant array", 1),
        (_cas_into_const, "cuda.atomic.cas cannot update a constant array", 1),
    ],
)
@pytest.mark.parametrize("target", ["cuda", "cpu"])
def test_a_store_into_a_constant_array_is_refused_at_its_line(kern, what, line, target):
    with pytest.raises(TypingError, match=what) as e:
        compile_kernel(kern, (int32[::1],), Options(target=target), stop_after="typed")
    assert e.value.loc.line == kern.__code__.co_firstlineno + line
    assert "kernel argument" in str(e.value)


def test_a_global_device_array_is_taken_by_reference():
    from cujit.targets.cpu import memory as cpu_memory

    prices = cpu_memory.to_device(np.arange(8.0).reshape(2, 4))[:, 1::2]  # a strided view

    def kern(out):
        i = cuda.grid(1)
        if i < prices.size:
            out[i] = prices[i // 2, i % 2] + len(prices)
            prices[i // 2, i % 2] = -1.0  # by reference: the kernel writes the array

    k = cuda.jit(kern, target="cpu")
    out = np.full(4, np.nan)
    k[1, 8](out)
    np.testing.assert_array_equal(out, [3.0, 5.0, 7.0, 9.0])
    assert (prices.copy_to_host() == -1.0).all()
    prices.copy_to_device(np.array([[10.0, 20.0], [30.0, 40.0]]))
    k[1, 8](out)  # the same compiled kernel sees the new contents
    np.testing.assert_array_equal(out, [12.0, 22.0, 32.0, 42.0])
    assert len(k.overloads) == 1


def test_a_gpu_array_global_on_the_cpu_target_is_refused_at_its_line():
    from types import SimpleNamespace

    from cujit.diagnostics import UnsupportedError

    gpu = SimpleNamespace(
        __cuda_array_interface__={
            "shape": (4,),
            "strides": None,
            "typestr": "<f8",
            "data": (0x7F0000000000, False),
            "version": 3,
        }
    )

    def kern(out):
        out[0] = gpu[0]

    with pytest.raises(UnsupportedError, match="kernels on the CPU cannot address") as e:
        cuda.jit(kern, target="cpu")[1, 1](np.zeros(3))
    assert e.value.loc.line == kern.__code__.co_firstlineno + 1
    assert "kernel argument" in str(e.value)
    # The same global on the GPU target compiles, its address a constant of the kernel
    ptx = compile_kernel(kern, (float64[::1],), Options(arch=(9, 0)), stop_after="ptx").ptx
    assert str(0x7F0000000000) in ptx
