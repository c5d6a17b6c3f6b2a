"""complex64/complex128, float16, cmath, cuda.fp16 and NumPy scalar math in kernels:
run against NumPy on the CPU target (CI) and on the GPU (marked ``gpu``), compiled to
sm_90 cubins everywhere, and the parts cujit does not support raise errors naming them.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from kernels import run_case
from kernels_types import TYPE_CASES

from cujit import cuda
from cujit.diagnostics import TypingError, UnsupportedError
from cujit.infer.numeric import arith_type, unify
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import (
    Array,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    typeof,
)

ELF_MAGIC = b"\x7fELF"
TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("case", TYPE_CASES, ids=[c.name for c in TYPE_CASES])
@pytest.mark.parametrize("where", ["host", "device"])
@pytest.mark.parametrize("target", TARGETS)
def test_type_kernel_matches_numpy(case, where, target):
    run_case(case, where, target, np.random.default_rng(7))


@pytest.mark.parametrize("case", TYPE_CASES, ids=[c.name for c in TYPE_CASES])
def test_type_kernel_compiles_to_sm90_cubin(case):
    args, *_ = case.setup(np.random.default_rng(0))
    result = compile_kernel(
        case.kernel.py_func, tuple(typeof(a) for a in args), Options(arch=(9, 0), verify=True)
    )
    assert ".target sm_90" in result.ptx
    assert result.cubin[:4] == ELF_MAGIC


def test_fp16_arithmetic_is_half_precision_in_ptx():
    case = next(c for c in TYPE_CASES if c.name == "fp16_axpy")
    args, *_ = case.setup(np.random.default_rng(0))
    ptx = compile_kernel(case.kernel.py_func, tuple(typeof(a) for a in args), stop_after="ptx").ptx
    assert ".f16" in ptx and "cvt.f32.f16" not in ptx


# -- typing rules -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (complex64, float32, complex64),
        (complex64, int16, complex64),
        (complex64, float64, complex128),
        (complex64, int32, complex128),
        (complex128, float32, complex128),
        (complex64, complex128, complex128),
        (float16, float16, float16),
        (float16, int8, float16),
        (float16, int16, float32),
        (float16, float32, float32),
        (float16, int64, float64),
        (complex64, float16, complex64),
    ],
)
def test_unification(a, b, expected):
    assert unify(a, b) == expected
    assert arith_type("+", a, b)[2] == expected


def test_typeof_complex_and_half():
    assert typeof(1 + 2j) == complex128
    assert typeof(np.complex64(1)) == complex64
    assert typeof(np.float16(1)) == float16
    assert typeof(np.zeros(3, np.complex64)) == Array(complex64, 1, "C")
    assert typeof(np.zeros(3, np.float16)) == Array(float16, 1, "C")


def _run_cpu(fn, *args):
    cuda.jit(fn, target="cpu")[1, 1](*args)


def test_complex_scalar_params_and_literals_cpu():
    def k(out, z, w):
        out[0] = z * w + 1j
        out[1] = complex(2, 3) + z.real - w.imag
        out[2] = np.complex64(z)  # complex128 -> complex64 -> complex128 on store

    out = np.zeros(3, np.complex128)
    _run_cpu(k, out, 1.5 - 0.5j, np.complex64(2 + 1j))
    z, w = 1.5 - 0.5j, 2 + 1j
    np.testing.assert_allclose(
        out, [z * w + 1j, complex(2, 3) + z.real - w.imag, complex(np.complex64(z))], rtol=1e-7
    )


def test_half_scalar_param_cpu():
    def k(out, h):
        out[0] = h + h
        out[1] = -h

    out = np.zeros(2, np.float16)
    _run_cpu(k, out, np.float16(1.25))
    np.testing.assert_array_equal(out, np.array([2.5, -1.25], np.float16))


def test_real_attributes_cpu():
    def k(out, x):
        out[0] = x.real
        out[1] = x.imag
        out[2] = x.conjugate()

    out = np.zeros(3)
    _run_cpu(k, out, 2.5)
    np.testing.assert_array_equal(out, [2.5, 0.0, 2.5])


# -- what raises ----------------------------------------------------------------------------


def _compile(fn, *types):
    return compile_kernel(fn, tuple(types), Options(), stop_after="typed")


def _order(out, z):
    out[0] = z < out[0]


def _floordiv(out, z):
    out[0] = z // z


def _to_float(out, z):
    out[0] = float(z)


def _htanh_approx(out, h):
    out[0] = cuda.fp16.htanh_approx(h)


def _complex_min(out, z):
    out[0] = min(z, z)


C1 = Array(complex128, 1, "C")


@pytest.mark.parametrize(
    "fn, types, exc, needle",
    [
        (_order, (C1, complex128), TypingError, "complex numbers are not ordered"),
        (_floordiv, (C1, complex128), TypingError, "complex numbers take + - * / only"),
        (
            _to_float,
            (Array(float64, 1, "C"), complex128),
            TypingError,
            "cannot convert complex128 to float64",
        ),
        (
            _htanh_approx,
            (Array(float16, 1, "C"), float16),
            UnsupportedError,
            "cuda.fp16.htanh_approx is not supported",
        ),
        (_complex_min, (C1, complex128), TypingError, "not ordered"),
    ],
)
def test_unsupported_raises(fn, types, exc, needle):
    with pytest.raises(exc, match=re.escape(needle)):
        _compile(fn, *types)
