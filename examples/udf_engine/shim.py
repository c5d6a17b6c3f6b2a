"""``masked_fma(a, b, c)``: ``a * b + c`` of masked values through the C++ shim
``shim.cu`` (linked with ``cuda.declare_device``; GPUs only: the CPU target runs no
foreign CUDA code)."""

from __future__ import annotations

import os

from cujit import cuda, types
from cujit.extending import overload
from examples.udf_engine.masked import Masked, MaskedType

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim.cu")

_fma = cuda.declare_device("udf_engine_fma", "float64(float64, float64, float64)", link=SHIM)


def masked_fma(a, b, c):
    """Host version, for checking: ``a * b + c``, valid where all three are."""
    return Masked(a.value * b.value + c.value, a.valid and b.valid and c.valid)


@overload(masked_fma)
def _masked_fma(a, b, c):
    if all(isinstance(x, MaskedType) for x in (a, b, c)):
        return lambda a, b, c: Masked(_fma(a.value, b.value, c.value), a.valid & b.valid & c.valid)
    if not any(isinstance(x, MaskedType) for x in (a, b, c)):
        return None
    raise TypeError(f"masked_fma takes three masked values, not ({a}, {b}, {c})")


__all__ = ["SHIM", "masked_fma", "types"]
