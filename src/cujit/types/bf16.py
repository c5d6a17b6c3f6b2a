"""bfloat16: the type, and its rounding on the host.

bfloat16 is float32's upper half: a sign, float32's 8 exponent bits and 7 fraction
bits.  cujit computes with it as numba-cuda and CUDA do: an operation widens its
operands to float32 (exactly), computes there and rounds the result back to bfloat16,
to nearest with ties to even.  For ``+ - * /`` and square roots this gives the
correctly rounded bfloat16 result, because float32 has more than twice bfloat16's
precision (the double rounding is innocuous).

In a kernel a bfloat16 is its 16 bits (``i16`` in LLVM IR: libNVVM takes no
``bfloat`` type); ``cujit.codegen.bf16`` lowers its operations.  On the host a
bfloat16 scalar or array uses ml_dtypes' NumPy dtype, imported only when one is needed.
"""

from __future__ import annotations

import math
import struct

from cujit.types.core import Scalar, bfloat16  # noqa: F401 -- the type lives with its rules

QUIET_NAN_BITS = 0x7FC0


def is_bfloat16(t: object) -> bool:
    """Whether ``t`` is cujit's bfloat16 type."""
    return isinstance(t, Scalar) and t.name == "bfloat16"


def numpy_dtype():
    """ml_dtypes' bfloat16 dtype (NumPy has none of its own)."""
    try:
        import ml_dtypes
    except ImportError as e:  # pragma: no cover - ml_dtypes is in cujit's [bf16] extra
        raise TypeError(
            "bfloat16 arrays and scalars on the host need the ml_dtypes package "
            "(pip install ml_dtypes)"
        ) from e
    import numpy as np

    return np.dtype(ml_dtypes.bfloat16)


def f32_bits(x: float) -> int:
    """The bits of ``x`` rounded to float32 (Python floats are float64)."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def round_f32_bits(bits: int, mode: str = "rn") -> int:
    """bfloat16 bits of the float32 with ``bits``, rounded by ``mode``: 'rn' (nearest,
    ties to even), 'rz' (toward zero), 'ru' (toward +inf), 'rd' (toward -inf)."""
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return QUIET_NAN_BITS | ((bits >> 16) & 0x8000)
    negative = bool(bits & 0x80000000)
    low = bits & 0xFFFF
    if mode == "rn":
        bits += 0x7FFF + ((bits >> 16) & 1)
    elif (mode == "ru" and not negative) or (mode == "rd" and negative):
        bits += 0xFFFF if low else 0
    return (bits >> 16) & 0xFFFF


def to_bits(x: float, mode: str = "rn") -> int:
    """The bfloat16 bits of the float ``x``, rounded once (float32 by round-to-odd
    first, as the kernels' conversion from float64)."""
    if math.isnan(x):
        return QUIET_NAN_BITS | (0x8000 if math.copysign(1.0, x) < 0 else 0)
    try:
        b = f32_bits(x)
    except OverflowError:  # beyond float32's range: its largest finite, made odd below
        b = 0x7F7FFFFF | (0x80000000 if x < 0 else 0)
    near = struct.unpack("<f", struct.pack("<I", b))[0]
    if near != x:  # inexact: toward zero, last bit set
        b = (b - (abs(near) > abs(x))) | 1
    return round_f32_bits(b, mode)


def value_bits(value) -> int:
    """The bits a bfloat16 kernel argument travels as (a Python number, a NumPy or
    ml_dtypes scalar)."""
    return to_bits(float(value))


def from_bits(bits: int) -> float:
    """The value of bfloat16 ``bits`` (exact)."""
    return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]


def round_value(x: float) -> float:
    """``x`` rounded to the nearest bfloat16 (NaN stays NaN)."""
    if math.isnan(x):
        return x
    return from_bits(to_bits(x))
