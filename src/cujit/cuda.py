"""numba.cuda's namespace, served by cujit: change ``from numba import cuda`` to
``from cujit import cuda`` and kernels run unchanged.

Host-side functions (``to_device``, ``synchronize``...) load the CUDA driver on
first use; importing this module loads nothing heavy.
"""

from __future__ import annotations

from cujit import types  # noqa: F401  (cuda.types.int32, as in numba)
from cujit.device_api import (  # noqa: F401
    atomic, blockDim, blockIdx, grid, gridDim, gridsize, local, shared, syncthreads, threadIdx,
)
from cujit.dispatcher import compile_ptx, jit  # noqa: F401
from cujit.types.core import (  # noqa: F401
    b1, bool_, boolean, byte, double, f4, f8, float32, float64, float_, i1, i2, i4, i8, int8,
    int16, int32, int64, intp, u1, u2, u4, u8, uint8, uint16, uint32, uint64, uintp, void,
)

_RUNTIME_NAMES = {
    "to_device": "cujit.runtime.memory",
    "device_array": "cujit.runtime.memory",
    "device_array_like": "cujit.runtime.memory",
    "DeviceNDArray": "cujit.runtime.memory",
    "is_cuda_array": "cujit.runtime.memory",
    "synchronize": "cujit.runtime.context",
    "stream": "cujit.runtime.stream",
    "default_stream": "cujit.runtime.stream",
}


def is_available() -> bool:
    """True when a CUDA driver and at least one GPU are present."""
    from cujit.runtime import context

    return context.is_available()


def __getattr__(name: str):
    module = _RUNTIME_NAMES.get(name)
    if module is None:
        raise AttributeError(f"cujit.cuda has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this hook
    return value
