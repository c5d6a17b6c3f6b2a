"""``types.CPointer``: pointer arguments of kernels and C-ABI functions, ``p[i]``,
cffi's ``ffi.from_buffer`` in kernels, and ``CPointer`` in signature strings."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, types
from cujit.diagnostics import LaunchError, TypingError
from cujit.types import parse_signature


def test_signature_strings_name_cpointer():
    sig = parse_signature("float32(CPointer(float32), int32)")
    assert sig.args[0] == types.CPointer(types.float32)
    assert sig.return_type == types.float32


def test_kernel_takes_an_address_and_writes_through_it():
    @cuda.jit(types.void(types.CPointer(types.uint8), types.uint32), target="cpu")
    def add_one(x, n):
        i = cuda.grid(1)
        if i < n:
            x[i] += 1

    a = np.arange(10, dtype=np.uint8) * 3
    want = a + 1
    add_one[1, 32](a.ctypes.data, 8)  # only the first 8 elements
    np.testing.assert_array_equal(a[:8], want[:8])
    assert a[8] == 24 and a[9] == 27


def test_a_pointer_argument_refuses_a_non_address():
    @cuda.jit(types.void(types.CPointer(types.float64)), target="cpu")
    def k(p):
        p[0] = 1.0

    with pytest.raises((LaunchError, TypeError)):
        k[1, 1](1.5)


def test_ffi_from_buffer_points_at_the_array():
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()

    @cuda.jit(target="cpu")
    def k(a, out):
        p = ffi.from_buffer(a)
        out[0] = p[2] * 2.0
        p[0] = p[1] + 0.5

    a = np.array([9.0, 1.25, 3.5], np.float32)
    out = np.full(1, np.nan, np.float32)
    k[1, 1](a, out)
    assert out[0] == 7.0
    assert a[0] == 1.75


def test_pointer_index_must_be_an_integer():
    def k(p, x):
        p[x] = 1.0

    with pytest.raises(TypingError, match="pointer's index must be an integer") as info:
        cuda.jit(types.void(types.CPointer(types.float64), types.float64), target="cpu")(k)
    assert "test_cpointer_args.py" in str(info.value)


def test_c_abi_function_takes_a_pointer_parameter():
    def load_twice(p, i):
        return p[i] * 2

    ptx, rtype = cuda.compile_ptx(
        load_twice, "float32(CPointer(float32), int32)", device=True, abi="c"
    )
    assert rtype == types.float32
    head = ptx[ptx.index(".func") :]
    assert ".param .b64 load_twice_param_0" in head  # the pointer
    assert "ld.f32" in head or "ld.global.f32" in head
