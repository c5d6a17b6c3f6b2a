"""bfloat16 conversions (``cuda.bf16``, ``bfloat16(x)``) against NumPy references.

The references round float32 bit patterns to bfloat16 with NumPy integer arithmetic
(nearest-even), or check the directed roundings by their defining property (the
result is on the right side of x, and the next bfloat16 toward x is past it).  The
same kernels run on the CPU target here and on the GPU where one is present.
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import bf16

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def jit(fn, target):
    return cuda.jit(target="cpu")(fn) if target == "cpu" else cuda.jit(fn)


def rne_bits(x32: np.ndarray) -> np.ndarray:
    """bfloat16 bits of float32 ``x32``, nearest-even (NaN: any NaN pattern)."""
    u = x32.view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)


def bits_value(bits: np.ndarray) -> np.ndarray:
    """float64 value of bfloat16 ``bits`` (exact)."""
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def poisoned(n, dtype):
    return np.full(n, 0xAB if np.dtype(dtype).kind in "iu" else np.nan, dtype)


def from_f32_rn(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = bf16.bfloat16_as_uint16(bf16.float32_to_bfloat16(x[i]))


def from_f32_modes(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = bf16.bfloat16_as_uint16(bf16.float32_to_bfloat16_rz(x[i]))
        out[i, 1] = bf16.bfloat16_as_uint16(bf16.float32_to_bfloat16_ru(x[i]))
        out[i, 2] = bf16.bfloat16_as_uint16(bf16.float32_to_bfloat16_rd(x[i]))
        out[i, 3] = bf16.bfloat16_as_uint16(bf16.float32_to_bfloat16_rn(x[i]))


def to_f32(out, bits):
    i = cuda.grid(1)
    if i < bits.size:
        out[i] = bf16.bfloat16_to_float32(bf16.uint16_as_bfloat16(bits[i]))


def from_f64(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = bf16.bfloat16_as_uint16(bf16.float64_to_bfloat16(x[i]))


def from_int(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = bf16.bfloat16_as_uint16(bf16.int64_to_bfloat16_rn(x[i]))
        out[i, 1] = bf16.bfloat16_as_uint16(bf16.int64_to_bfloat16_rz(x[i]))
        out[i, 2] = bf16.bfloat16_as_uint16(bf16.int64_to_bfloat16_ru(x[i]))
        out[i, 3] = bf16.bfloat16_as_uint16(bf16.int64_to_bfloat16_rd(x[i]))


def to_int(out, bits):
    i = cuda.grid(1)
    if i < bits.size:
        a = bf16.uint16_as_bfloat16(bits[i])
        out[i, 0] = bf16.bfloat16_to_int32_rn(a)
        out[i, 1] = bf16.bfloat16_to_int32_rz(a)
        out[i, 2] = bf16.bfloat16_to_int32_rd(a)
        out[i, 3] = bf16.bfloat16_to_int32_ru(a)
        out[i, 4] = bf16.bfloat16_to_int64_rd(a)
        out[i, 5] = bf16.bfloat16_to_int16_ru(a)
        out[i, 6] = bf16.bfloat16_to_int8_rz(a)
        out[i, 7] = bf16.bfloat16_to_uint8_rz(a)


def launch(kernel, out, *args):
    n = args[0].shape[0]
    kernel[(n + 127) // 128, 128](out, *args)
    return out


def f32_samples() -> np.ndarray:
    rng = np.random.default_rng(11)
    random_bits = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    # exact ties below and above even and odd kept parts, and values near the top
    ties = np.array([0x3F808000, 0x3F818000, 0xBF808000, 0x3F80FFFF, 0x3F807FFF], np.uint32)
    edges = np.array([0x7F7FFFFF, 0x7F7F8000, 0x00000001, 0x80000000, 0x7F800000], np.uint32)
    x = np.concatenate([random_bits, ties, edges]).view(np.float32)
    return x[~np.isnan(x)]


@pytest.mark.parametrize("target", TARGETS)
def test_float32_to_bfloat16_rounds_to_nearest_even(target):
    x = f32_samples()
    out = launch(jit(from_f32_rn, target), poisoned(x.size, np.uint16), x)
    np.testing.assert_array_equal(out, rne_bits(x))


@pytest.mark.parametrize("target", TARGETS)
def test_nan_becomes_a_quiet_nan_of_its_sign(target):
    x = np.array([0x7F800001, 0xFFC00000, 0x7FFFFFFF], np.uint32).view(np.float32)
    out = launch(jit(from_f32_rn, target), poisoned(3, np.uint16), x)
    np.testing.assert_array_equal(out, [0x7FC0, 0xFFC0, 0x7FC0])


@pytest.mark.parametrize("target", TARGETS)
def test_directed_roundings_bracket_the_value(target):
    x = f32_samples()
    x = x[np.isfinite(x)]
    out = launch(jit(from_f32_modes, target), np.zeros((x.size, 4), np.uint16), x)
    rz, ru, rd, rn = (bits_value(out[:, k]) for k in range(4))
    exact = x.astype(np.float64)
    assert np.all(np.abs(rz) <= np.abs(exact)) and np.all(rd <= exact) and np.all(ru >= exact)
    # the next pattern (one more in magnitude: the bits are sign and magnitude) is past x
    rz_next = bits_value(out[:, 0] + np.uint16(1))
    inexact = rz != exact
    assert np.all(np.abs(rz_next[inexact]) > np.abs(exact[inexact]))
    assert np.all((ru == rz) | (ru == rz_next)) and np.all((rd == rz) | (rd == rz_next))
    np.testing.assert_array_equal(out[:, 3], rne_bits(x))


@pytest.mark.parametrize("target", TARGETS)
def test_bfloat16_to_float32_is_exact_for_every_pattern(target):
    bits = np.arange(2**16, dtype=np.uint16)
    out = launch(jit(to_f32, target), poisoned(bits.size, np.float32), bits)
    want = (bits.astype(np.uint32) << 16).view(np.float32)
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(out[finite].view(np.uint32), want[finite].view(np.uint32))
    assert np.isnan(out[~finite]).all()


@pytest.mark.parametrize("target", TARGETS)
def test_float64_rounds_once(target):
    # 1 + 2**-8 + 2**-30 lies just above a bfloat16 tie: rounding to float32 first
    # (to nearest) would land on the tie and round down to 1.0.
    x = np.array([1 + 2.0**-8 + 2.0**-30, -(1 + 2.0**-8 + 2.0**-30), 1 + 2.0**-8, 3.14159])
    out = launch(jit(from_f64, target), poisoned(x.size, np.uint16), x)
    np.testing.assert_array_equal(bits_value(out), [1 + 2.0**-7, -(1 + 2.0**-7), 1.0, 3.140625])


def from_f64_constants(out):
    out[0] = bf16.bfloat16_as_uint16(cuda.bfloat16(1 + 2.0**-8 + 2.0**-30))
    out[1] = bf16.bfloat16_as_uint16(cuda.bfloat16(-3.0e39))
    out[2] = bf16.bfloat16_as_uint16(cuda.bfloat16(3.14159) * cuda.bfloat16(2.0))
    out[3] = bf16.bfloat16_as_uint16(cuda.bfloat16(1.0) + cuda.bfloat16(2.0**-8))  # a tie


@pytest.mark.parametrize("target", TARGETS)
def test_constants_round_as_the_conversion_does(target):
    out = poisoned(4, np.uint16)
    jit(from_f64_constants, target)[1, 1](out)
    np.testing.assert_array_equal(out, [0x3F81, 0xFF80, rne_bits(np.float32(6.28125)), 0x3F80])


@pytest.mark.parametrize("target", TARGETS)
def test_from_int64_by_mode(target):
    x = np.array([789, -789, 257, 259, 2**40 + 2**33, -(2**31) - 1, 3, 0], np.int64)
    out = launch(jit(from_int, target), np.zeros((x.size, 4), np.uint16), x)
    rn, rz, ru, rd = (bits_value(out[:, k]) for k in range(4))
    # 789 = 0b1100010101: bfloat16 keeps 8 significant bits, 788 and 792 bracket it
    np.testing.assert_array_equal(rn[:2], [788.0, -788.0])
    np.testing.assert_array_equal(ru[:2], [792.0, -788.0])
    np.testing.assert_array_equal(rd[:2], [788.0, -792.0])
    np.testing.assert_array_equal(rz[:2], [788.0, -788.0])
    # 257 is a tie between 256 and 258: to even (256); 259 is a tie 258/260: 260
    np.testing.assert_array_equal(rn[2:4], [256.0, 260.0])
    exact = x.astype(np.float64)
    assert np.all(rd <= exact) and np.all(ru >= exact) and np.all(np.abs(rz) <= np.abs(exact))
    np.testing.assert_array_equal(rn[-2:], [3.0, 0.0])


@pytest.mark.parametrize("target", TARGETS)
def test_to_int_by_mode(target):
    values = np.array([1.5, 2.5, -1.5, -2.5, 3.0, 100.75, -0.75, 40000.0, -300.0], np.float32)
    bits = rne_bits(values)
    v = bits_value(bits)
    out = launch(jit(to_int, target), np.full((v.size, 8), 77, np.int64), bits)
    np.testing.assert_array_equal(out[:, 0], np.rint(v))
    np.testing.assert_array_equal(out[:, 1], np.trunc(v))
    np.testing.assert_array_equal(out[:, 2], np.floor(v))
    np.testing.assert_array_equal(out[:, 3], np.ceil(v))
    np.testing.assert_array_equal(out[:, 4], np.floor(v))
    # the narrow types saturate (CUDA's conversions do)
    np.testing.assert_array_equal(out[:, 5], np.clip(np.ceil(v), -(2**15), 2**15 - 1))
    np.testing.assert_array_equal(out[:, 6], np.clip(np.trunc(v), -128, 127))
    np.testing.assert_array_equal(out[:, 7], np.clip(np.trunc(v), 0, 255))


def cast_kernel(out, x):
    i = cuda.grid(1)
    if i < x.size:
        a = cuda.bfloat16(x[i])
        out[i, 0] = cuda.float32(a)
        out[i, 1] = cuda.int32(a)
        out[i, 2] = cuda.float64(a)
        out[i, 3] = cuda.float32(cuda.float16(a))
        out[i, 4] = cuda.float32(cuda.bfloat16(cuda.float16(x[i])))


@pytest.mark.parametrize("target", TARGETS)
def test_constructor_and_casts(target):
    x = np.array([3.14159, -2.71828, 100.7, 0.001, 7.77], np.float64)
    out = launch(jit(cast_kernel, target), np.full((x.size, 5), np.nan), x)
    b = bits_value(rne_bits(x.astype(np.float32)))
    np.testing.assert_array_equal(out[:, 0], b)
    np.testing.assert_array_equal(out[:, 1], np.trunc(b))
    np.testing.assert_array_equal(out[:, 2], b)
    np.testing.assert_array_equal(out[:, 3], b.astype(np.float16).astype(np.float64))
    via_half = bits_value(rne_bits(x.astype(np.float16).astype(np.float32)))
    np.testing.assert_array_equal(out[:, 4], via_half)


def test_host_rounding_matches_the_reference():
    from cujit.types import bf16 as host

    x = f32_samples()[:500]
    got = np.array([host.to_bits(float(v)) for v in x], np.uint16)
    np.testing.assert_array_equal(got, rne_bits(x))
    assert host.from_bits(0x4049) == 3.140625 and host.to_bits(float("nan")) == 0x7FC0
