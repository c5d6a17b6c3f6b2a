"""numba-cuda's ``_internal.cuda_fp8``: the fp8 types, the conversions on fp8 storage
bytes (``cvt_float_to_fp8``...) and their enums (``saturation_t``,
``fp8_interpretation_t``); see ``cujit.fp8``."""

from cujit.fp8 import FUNCTIONS as _FUNCTIONS
from cujit.fp8 import bfloat16_raw, fp8_interpretation_t, saturation_t
from cujit.types.fp8 import fp8_e4m3, fp8_e5m2, fp8_e8m0

globals().update(_FUNCTIONS)

__all__ = [
    "bfloat16_raw",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_e8m0",
    "fp8_interpretation_t",
    "saturation_t",
    *_FUNCTIONS,
]
