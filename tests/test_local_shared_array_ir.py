"""How cuda.local.array and cuda.shared.array appear in the NVVM IR: numba's names
(``_cudapy_lmem``, ``_cudapy_smem_N``), an alignment stated only where ``alignment=``
asks (never less than the elements' accesses assume), slot types that carry the
elements' alignment otherwise; and numba's error classes for bad alignments."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import ConstantValueError, RequireLiteralValue, TypingError
from cujit.types import complex128, float32

LMEM = re.compile(r'^\s*%"_cudapy_lmem" = alloca (.*)$', re.MULTILINE)
SMEM = re.compile(r'^@"_cudapy_smem_\d+" = .*$', re.MULTILINE)

PAIR = np.dtype([("a", np.uint8), ("b", np.float64)], align=True)  # 16 bytes, b at 8


def _local_kernel(dtype, alignment):
    def k(out):
        loc = cuda.local.array(3, dtype, alignment=alignment)
        out[0] = loc.ctypes.data

    return k


def _llvm(pyfunc, sig="void(uint64[::1])") -> str:
    kernel = cuda.jit(sig, target="cpu")(pyfunc)
    return kernel.inspect_llvm(kernel.signatures[0])


@pytest.mark.parametrize(
    "dtype,slot",
    [
        (np.float32, "[3 x float]"),
        (np.uint8, "[3 x i8]"),
        (np.complex128, "[3 x i128]"),  # parts aligned 8, loaded at 16
        (np.complex64, "[3 x i64]"),
        (PAIR, "[3 x i128]"),  # the record's 16 bytes keep a 16-byte alignment
    ],
    ids=str,
)
def test_a_local_array_without_alignment_states_none(dtype, slot):
    allocas = LMEM.findall(_llvm(_local_kernel(dtype, None)))
    assert allocas == [slot], allocas


@pytest.mark.parametrize("alignment", [8, 32, 128])
def test_a_local_array_states_the_alignment_asked_for(alignment):
    allocas = LMEM.findall(_llvm(_local_kernel(np.uint8, alignment)))
    assert allocas == [f"[3 x i8], align {alignment}"], allocas


def test_an_alignment_below_the_elements_is_raised_to_theirs():
    # complex128 is loaded 16 bytes at a time: alignment=8 cannot lower that.
    allocas = LMEM.findall(_llvm(_local_kernel(np.complex128, 8)))
    assert allocas == ["[3 x i128], align 16"], allocas

    def k(out):
        s = cuda.shared.array(4, complex128, alignment=8)
        out[0] = s.ctypes.data

    (glob,) = SMEM.findall(_llvm(k))
    assert glob.endswith("align 16"), glob


def test_shared_arrays_have_numbas_names_and_an_alignment():
    def k(out):
        a = cuda.shared.array(4, float32)
        b = cuda.shared.array(2, float32, alignment=64)
        out[0] = a.ctypes.data
        out[1] = b.ctypes.data

    found = SMEM.findall(_llvm(k))
    assert len(found) == 2, found
    assert found[0].endswith("align 16") and found[1].endswith("align 64"), found


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_local_arrays_of_complex_and_records_hold_their_values(target):
    @cuda.jit(target=target)
    def k(x, y, out_c, out_r):
        c = cuda.local.array(4, complex128)
        r = cuda.local.array(3, PAIR)
        for i in range(4):
            c[i] = complex(x[i], -x[i] * 2.0)
        for i in range(3):
            r[i].a = i + 1
            r[i].b = y[i]
        for i in range(4):
            out_c[i] = c[3 - i]
        for i in range(3):
            out_r[i] = r[i].b * r[i].a

    x = np.array([1.5, -2.25, 3.0, 0.125])
    y = np.array([0.5, 7.0, -3.5])
    out_c = np.full(4, np.nan + 0j)
    out_r = np.full(3, np.nan)
    k[1, 1](x, y, out_c, out_r)
    expect_c = (x - 2j * x)[::-1]
    assert np.array_equal(out_c, expect_c)
    assert np.array_equal(out_r, y * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("which", ["local", "shared"])
@pytest.mark.parametrize("bad", [-8, 0, 3, 17, 24])
def test_an_integer_alignment_that_is_no_power_of_2_times_8_is_a_value_error(which, bad):
    local = which == "local"

    def k(out):
        if local:
            a = cuda.local.array(2, np.uint8, alignment=bad)
        else:
            a = cuda.shared.array(2, np.uint8, alignment=bad)
        out[0] = a.ctypes.data

    with pytest.raises(ValueError, match="Alignment must be a positive power of 2") as info:
        cuda.jit(target="cpu")(k)[1, 1](np.zeros(1, np.uint64))
    assert isinstance(info.value, ConstantValueError)
    assert f"not {bad}" in str(info.value) and f"cuda.{which}.array" in str(info.value)


@pytest.mark.parametrize("bad", ["16", 16.0, True])
def test_a_non_integer_alignment_requires_a_literal(bad):
    def k(out):
        a = cuda.local.array(2, np.uint8, alignment=bad)
        out[0] = a.ctypes.data

    with pytest.raises(RequireLiteralValue) as info:
        cuda.jit(target="cpu")(k)[1, 1](np.zeros(1, np.uint64))
    assert isinstance(info.value, TypingError) and not isinstance(info.value, ValueError)
    assert re.search(r"RequireLiteralValue:.*alignment must be a constant integer", str(info.value))


def test_an_alignment_from_a_parameter_requires_a_literal():
    @cuda.jit(target="cpu")
    def k(out, n):
        a = cuda.shared.array(2, np.uint8, alignment=n)
        out[0] = a.ctypes.data

    with pytest.raises(RequireLiteralValue, match="constant integer, not int64"):
        k[1, 1](np.zeros(1, np.uint64), 16)
