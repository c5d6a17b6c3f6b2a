"""The fp8 API kernels call (numba-cuda's ``_internal.cuda_fp8``): the conversion
functions on fp8 storage bytes, their enums, and the bfloat16 "raw" value.

The types themselves are ``cujit.types.fp8``; ``cujit.infer.fp8_calls`` types the
calls.  The conversions take their saturation, interpretation and rounding mode as
compile-time constants (the enum members below, and ``cuda.bindings.runtime.
cudaRoundMode``).
"""

from __future__ import annotations

from collections import namedtuple
from enum import IntEnum

from cujit.device_api import ALL, DeviceOnly


class saturation_t(IntEnum):  # noqa: N801 -- CUDA's name (__nv_saturation_t)
    NOSAT = 0
    SATFINITE = 1


class fp8_interpretation_t(IntEnum):  # noqa: N801 -- CUDA's name (__nv_fp8_interpretation_t)
    E4M3 = 0
    E5M2 = 1


# CUDA's __nv_bfloat16_raw: a bfloat16's bits as the field ``x`` (a uint16).
bfloat16_raw = namedtuple("bfloat16_raw", ["x"])

# cudaRoundMode's values (cuda.bindings.runtime): the rounding of the e8m0 conversions.
ROUND_MODES = {0: "rn", 1: "rz", 2: "rp", 3: "rz"}  # an e8m0 is never negative: -inf is rz

# name -> (what the first argument converts from, the target: "fp8" or "e8m0")
CONVERSIONS = {
    "cvt_float_to_fp8": ("float32", "fp8"),
    "cvt_double_to_fp8": ("float64", "fp8"),
    "cvt_bfloat16raw_to_fp8": ("raw", "fp8"),
    "cvt_float_to_e8m0": ("float32", "e8m0"),
    "cvt_double_to_e8m0": ("float64", "e8m0"),
    "cvt_bfloat16raw_to_e8m0": ("raw", "e8m0"),
}

FUNCTIONS: dict[str, DeviceOnly] = {
    name: DeviceOnly(f"fp8.{name}", f"fp8.{name}: fp8 conversion")
    for name in (*CONVERSIONS, "cvt_e8m0_to_bf16raw")
}
for _f in FUNCTIONS.values():
    ALL[_f.key] = _f  # placeholders pickle by key
