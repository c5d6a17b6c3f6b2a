"""cujit: a just-in-time compiler from Python functions to CUDA kernels.

``from cujit import cuda`` gives numba.cuda's API; the type objects
(``float32``, ``int64``...) are importable from here as from numba.
"""

from cujit.types.core import (  # noqa: F401
    b1, bool_, boolean, byte, double, f4, f8, float32, float64, float_, i1, i2, i4, i8,
    int8, int16, int32, int64, intp, u1, u2, u4, u8, uint8, uint16, uint32, uint64, uintp,
    void,
)

__version__ = "0.1.0"


def __getattr__(name):
    # ``cuda`` is imported on first use so that ``import cujit`` stays light.
    if name == "cuda":
        import importlib

        return importlib.import_module("cujit.cuda")
    raise AttributeError(f"module 'cujit' has no attribute {name!r}")
