"""A complex element is stored part by part, so LLVM keeps copies of complex numbers
in float registers: ``ld.const.v2.f32`` / ``st.global.v2.f32`` rather than the integer
moves (``v2.u32``) a whole-struct store became.  PTX checked through libNVVM (no GPU),
values on the CPU target."""

from __future__ import annotations

import re

import numpy as np

from cujit import cuda
from cujit.cuda import complex64, complex128

TABLE = (np.arange(4 * 3, dtype=np.complex64).reshape(4, 3) + 1j) / 2j


def _copy_const(out):
    c = cuda.const.array_like(TABLE)
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    out[i, j] = c[i, j]


def _copy(out, a):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i]


def test_const_complex64_loads_and_stores_two_floats():
    sig = (complex64[:, :],)
    ptx = cuda.jit(sig, target="cuda")(_copy_const).inspect_asm(sig)
    assert re.search(r"ld\.const\.v2\.f32", ptx)
    assert re.search(r"st\.global\.v2\.f32", ptx)
    assert not re.search(r"\.v2\.u32", ptx)


def test_complex128_copy_uses_double_registers():
    sig = (complex128[::1], complex128[::1])
    ptx = cuda.jit(sig, target="cuda")(_copy).inspect_asm(sig)
    assert re.search(r"ld\.global\.v2\.f64", ptx) and re.search(r"st\.global\.v2\.f64", ptx)


def test_complex_copies_on_cpu():
    out = np.zeros((4, 3), np.complex64)
    cuda.jit(target="cpu")(_copy_const)[1, (4, 3)](out)
    np.testing.assert_array_equal(out, TABLE)
    a = (np.arange(7) - 3.5) + 1j * (np.arange(7) ** 2)
    b = np.full(7, np.nan + 0j)
    cuda.jit(target="cpu")(_copy)[1, 7](b, a)
    np.testing.assert_array_equal(b, a)
