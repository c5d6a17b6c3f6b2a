"""A device function's numba-style ``signatures`` and ``overloads``: the argument types
declared or compiled for kernels' calls, each compiled alone in numba's ABI."""

from __future__ import annotations

import numpy as np

from cujit import cuda
from cujit.cuda import float64, int32


def test_calls_from_kernels_add_signatures_and_overloads():
    @cuda.jit(device=True)
    def twice_plus_one(x):
        return x * 2 + 1

    assert twice_plus_one.signatures == []
    assert dict(twice_plus_one.overloads) == {}

    @cuda.jit(target="cpu")
    def kernel(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = twice_plus_one(x[i])

    x = np.arange(-5, 5, dtype=np.int32) * 3
    r = np.full_like(x, -999)
    kernel[1, 32](r, x)
    np.testing.assert_array_equal(r, x * 2 + 1)
    assert twice_plus_one.signatures == [(int32,)]
    compiled = twice_plus_one.overloads[(int32,)]
    llvm = compiled.library.get_llvm_str()
    # numba's ABI: the status returned, the value stored through the first pointer.
    assert "ret i32 0" in llvm
    assert 'i32* %"retptr"' in llvm or "i64* %" in llvm
    assert ".visible .func" in compiled.library.get_asm_str()
    assert list(twice_plus_one.inspect_llvm()) == [(int32,)]


def test_declared_signatures_come_first_with_their_return_type():
    @cuda.jit("float64(float64)", device=True)
    def halve(x):
        return x / 2

    assert halve.signatures == [(float64,)]
    assert halve.overloads[(float64,)].signature.return_type == float64
    assert set(halve.overloads) == {(float64,)}


def test_a_kernel_called_from_a_kernel_lists_its_device_compiles():
    @cuda.jit
    def inner(x):
        return x - 3

    @cuda.jit(target="cpu")
    def outer(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = inner(x[i])

    x = np.arange(8, dtype=np.int32) * 5
    r = np.full_like(x, -999)
    outer[1, 8](r, x)
    np.testing.assert_array_equal(r, x - 3)
    assert inner.signatures == [(int32,)]
    assert "ret i32 0" in inner.overloads[(int32,)].library.get_llvm_str()
    assert inner.overloads.get((int32,)) is None  # no kernel of its own to launch
    assert list(inner.overloads) == [] and inner.definitions == {}
    assert inner.device_view() is inner.device_view()
