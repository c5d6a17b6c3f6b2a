"""numba.cuda's ``fp8`` module: the fp8 types (``cujit.types.fp8``)."""

from cujit.types.fp8 import fp8_e4m3, fp8_e5m2, fp8_e8m0

__all__ = ["fp8_e4m3", "fp8_e5m2", "fp8_e8m0"]
