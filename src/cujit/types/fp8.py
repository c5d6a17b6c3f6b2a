"""The fp8 types of numba-cuda's ``cuda.fp8`` (CUDA's ``__nv_fp8_e5m2``, ``__nv_fp8_e4m3``,
``__nv_fp8_e8m0``): storage types that convert to and from every number type.

A value is its byte (``i8`` in LLVM IR).  ``FORMATS`` gives each one's layout:
e5m2 is IEEE-like (infinities, NaNs), e4m3 has no infinity (S.1111.111 is its NaN,
448 its largest value), e8m0 is an unsigned power of two 2**(code - 127) (0xFF is NaN).
Conversions into them round as CUDA's constructors do: e5m2 and e4m3 to nearest even,
saturating to the largest finite value; e8m0 upward, saturating (``codegen/fp8.py``).
They have no arithmetic: an operator on one computes in float32.
"""

from __future__ import annotations

from cujit.frozen import frozen
from cujit.types.core import Scalar, Type


@frozen
class Format:
    """An fp8 layout: exponent and mantissa bits, the exponent bias, and its codes."""

    exponent: int
    mantissa: int
    bias: int
    max_finite: int  # the largest finite code (no sign)
    nan: int  # the NaN code
    infinity: int | None  # the +inf code, where there is one


FORMATS = {
    "fp8_e5m2": Format(5, 2, 15, 0x7B, 0x7F, 0x7C),
    "fp8_e4m3": Format(4, 3, 7, 0x7E, 0x7F, None),
    "fp8_e8m0": Format(8, 0, 127, 0xFE, 0xFF, None),
}


@frozen(repr=False)
class FP8(Scalar):
    """An fp8 type (a Scalar of kind 'f' and 8 bits that only converts)."""

    __hash__ = Type._cached_hash

    @property
    def __name__(self) -> str:  # numba-cuda's fp8 types are classes; tests print the name
        return self.name

    @property
    def format(self) -> Format:
        return FORMATS[self.name]

    @property
    def dtype(self):
        raise TypeError(f"{self.name} has no NumPy dtype: pass its bytes as uint8")


fp8_e5m2 = FP8("fp8_e5m2", "f", 8)
fp8_e4m3 = FP8("fp8_e4m3", "f", 8)
fp8_e8m0 = FP8("fp8_e8m0", "f", 8)


def is_fp8(t: object) -> bool:
    return isinstance(t, FP8)
