"""The fp8 types (numba-cuda's ``_internal.cuda_fp8``) against references.

In range, e4m3 and e5m2 round to nearest even as ml_dtypes' float8_e4m3fn and
float8_e5m2 do; beyond it the constructors saturate (SATFINITE) and the NOSAT
conversions give infinity (e5m2) or NaN (e4m3), as CUDA documents.  e8m0 codes are
powers of two, 2**(code - 127).  Decoding every code is checked against the formats'
definitions, written here from their bit layouts.
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda._internal import cuda_fp8 as fp8
from cujit.fp8 import fp8_interpretation_t, saturation_t

ml_dtypes = pytest.importorskip("ml_dtypes")

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def jit(fn, target):
    return cuda.jit(target="cpu")(fn) if target == "cpu" else cuda.jit(fn)


def decode_reference(code: int, e_bits: int, m_bits: int, bias: int, has_inf: bool) -> float:
    sign = -1.0 if code & 0x80 else 1.0
    e = (code >> m_bits) & ((1 << e_bits) - 1)
    m = code & ((1 << m_bits) - 1)
    if has_inf and e == (1 << e_bits) - 1:
        return sign * np.inf if m == 0 else np.nan
    if not has_inf and (code & 0x7F) == 0x7F:
        return np.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / 2**m_bits) * 2.0 ** (e - bias)


def encode(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cuda.float32(fp8.fp8_e4m3(x[i]))
        out[i, 1] = cuda.float32(fp8.fp8_e5m2(x[i]))
        out[i, 2] = cuda.float32(fp8.fp8_e4m3(cuda.float64(x[i])))


@pytest.mark.parametrize("target", TARGETS)
def test_in_range_rounding_matches_ml_dtypes(target):
    rng = np.random.default_rng(8)
    x = np.concatenate(
        [
            rng.uniform(-400, 400, 500),
            rng.uniform(-0.02, 0.02, 300),  # e4m3's subnormals (below 2**-6)
            [0.0, -0.0, 1.0, 1.0625, 1.1875, 2**-9, 3 * 2**-10, 2**-10],  # ties, smallest
        ]
    ).astype(np.float32)
    out = np.full((x.size, 3), np.nan, np.float32)
    jit(encode, target)[(x.size + 127) // 128, 128](out, x)
    want_e4m3 = x.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    want_e5m2 = x.astype(ml_dtypes.float8_e5m2).astype(np.float32)
    np.testing.assert_array_equal(out[:, 0], want_e4m3)
    np.testing.assert_array_equal(out[:, 1], want_e5m2)
    np.testing.assert_array_equal(out[:, 2], want_e4m3)


def saturate(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cuda.float32(fp8.fp8_e4m3(x[i]))
        out[i, 1] = cuda.float32(fp8.fp8_e5m2(x[i]))
        out[i, 2] = cuda.float32(fp8.fp8_e8m0(x[i]))


@pytest.mark.parametrize("target", TARGETS)
def test_constructors_saturate_and_keep_nan(target):
    x = np.array([1e20, -1e20, np.inf, 500.0, 70000.0, np.nan, 3.0, 0.3], np.float32)
    out = np.zeros((x.size, 3), np.float32)
    jit(saturate, target)[1, 32](out, x)
    np.testing.assert_array_equal(out[:5, 0], [448, -448, 448, 448, 448])
    np.testing.assert_array_equal(out[:5, 1], [57344, -57344, 57344, 512, 57344])  # 500: in range
    assert np.isnan(out[5]).all()
    # e8m0 rounds upward to a power of two and saturates at 2**127
    np.testing.assert_array_equal(out[[0, 2, 6, 7], 2], [2.0**67, 2.0**127, 4.0, 0.5])
    np.testing.assert_array_equal(out[6:, :2], [[3.0, 3.0], [0.3125, 0.3125]])


def codes(out, x):
    i = cuda.grid(1)
    if i < x.size:
        nosat, satf = saturation_t.NOSAT, saturation_t.SATFINITE
        e4, e5 = fp8_interpretation_t.E4M3, fp8_interpretation_t.E5M2
        out[i, 0] = fp8.cvt_float_to_fp8(x[i], nosat, e5)
        out[i, 1] = fp8.cvt_float_to_fp8(x[i], satf, e5)
        out[i, 2] = fp8.cvt_float_to_fp8(x[i], nosat, e4)
        out[i, 3] = fp8.cvt_float_to_fp8(x[i], satf, e4)
        out[i, 4] = fp8.cvt_float_to_e8m0(x[i], nosat, 1)  # cudaRoundZero
        out[i, 5] = fp8.cvt_float_to_e8m0(x[i], satf, 2)  # cudaRoundPosInf
        out[i, 6] = fp8.cvt_bfloat16raw_to_fp8(fp8.cvt_e8m0_to_bf16raw(130), nosat, e4)


@pytest.mark.parametrize("target", TARGETS)
def test_cvt_codes(target):
    x = np.array([1e20, -3.0, 1.5, 2.0**-8, np.nan], np.float32)
    out = np.zeros((x.size, 7), np.uint8)
    jit(codes, target)[1, 32](out, x)
    # 1e20: NOSAT -> inf / NaN, SATFINITE -> largest finite; e8m0 of 1e20 ~ 2**66.4
    np.testing.assert_array_equal(out[0, :6], [0x7C, 0x7B, 0x7F, 0x7E, 127 + 66, 127 + 67])
    # -3.0 = -1.5 * 2**1: e5m2 sign|exp 16|mant 2, e4m3 sign|exp 8|mant 4
    np.testing.assert_array_equal(out[1, :4], [0xC2, 0xC2, 0xC4, 0xC4])
    np.testing.assert_array_equal(out[2, 4:6], [127, 128])  # 1.5: down to 1, up to 2
    np.testing.assert_array_equal(out[3, :4], [0x1C, 0x1C, 0x02, 0x02])  # e4m3: 2 * 2**-9
    np.testing.assert_array_equal(out[4, [0, 2, 4, 5]], [0x7F, 0x7F, 0xFF, 0xFF])
    np.testing.assert_array_equal(out[:, 6], 0x50)  # 2**3 in e4m3: exp 10, mant 0


def decode(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cuda.float64(fp8.fp8_e4m3(x[i]))
        out[i, 1] = cuda.float64(fp8.fp8_e5m2(x[i]))
        out[i, 2] = cuda.float64(cuda.float16(fp8.fp8_e5m2(x[i])))
        out[i, 3] = cuda.float64(cuda.int32(fp8.fp8_e4m3(x[i])))


@pytest.mark.parametrize("target", TARGETS)
def test_every_finite_code_round_trips(target):
    e4 = [decode_reference(c, 4, 3, 7, False) for c in range(256)]
    e5 = [decode_reference(c, 5, 2, 15, True) for c in range(256)]
    x = np.array([v for v in e4 if np.isfinite(v)], np.float64)
    y = np.array([v for v in e5 if np.isfinite(v)], np.float64)
    n = max(x.size, y.size)
    xs = np.resize(x, n).astype(np.float32)
    out = np.full((n, 4), np.nan)
    jit(decode, target)[(n + 127) // 128, 128](out, xs)
    np.testing.assert_array_equal(out[:, 0], xs)  # every e4m3 value is its own rounding
    np.testing.assert_array_equal(out[:, 3], np.trunc(xs))
    ys = np.resize(y, n).astype(np.float32)
    jit(decode, target)[(n + 127) // 128, 128](out, ys)
    np.testing.assert_array_equal(out[:, 1], ys)
    np.testing.assert_array_equal(out[:, 2], ys)


def test_fp8_types_are_numba_cudas_names(monkeypatch):
    assert {"fp8_e4m3", "fp8_e5m2", "fp8_e8m0", "cvt_float_to_fp8"} <= set(dir(fp8))
    assert fp8.fp8_e4m3.__name__ == "fp8_e4m3" and cuda.fp8.fp8_e5m2 is fp8.fp8_e5m2
    from cujit.cuda import api

    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    assert api.is_fp8_supported() is True


@pytest.mark.gpu
def test_is_fp8_supported_follows_the_compute_capability(monkeypatch):
    from cujit.cuda import api

    monkeypatch.setenv("CUJIT_TARGET", "cuda")
    assert api.is_fp8_supported() is (tuple(cuda.gpus[0].compute_capability) >= (8, 9))
