"""``cuda.cudadrv.devicearray`` (also ``cuda.devicearray``): cujit's device array class
and constructors by numba's names."""

from __future__ import annotations

import numpy as np

from cujit.runtime.ipc import IpcArrayHandle
from cujit.runtime.memory import DeviceArray, DeviceNDArray, device_array_like, to_device

DeviceNDArrayBase = DeviceArray

__all__ = [
    "DeviceNDArray",
    "DeviceNDArrayBase",
    "IpcArrayHandle",
    "auto_device",
    "from_array_like",
    "is_cuda_ndarray",
]


def is_cuda_ndarray(obj) -> bool:
    """Whether ``obj`` is a cujit device array."""
    return isinstance(obj, DeviceArray)


def from_array_like(ary, stream=0, gpu_data=None) -> DeviceArray:
    """An uninitialised device array shaped and laid out like ``ary`` (over ``gpu_data``,
    an allocation, when given)."""
    if gpu_data is None:
        return device_array_like(ary, stream=stream)
    return DeviceArray(ary.shape, ary.strides, ary.dtype, stream=stream, gpu_data=gpu_data)


def auto_device(obj, stream=0, copy: bool = True, user_explicit: bool = False):
    """``(device array, whether a copy was made)``: device and CUDA Array Interface arrays
    as they are; anything else (a NumPy array, a scalar, a sequence) copied to a new
    device array, which must then be contiguous (a strided host view is refused)."""
    if hasattr(obj, "__cuda_array_interface__"):
        from cujit.runtime.memory import as_device_array

        return as_device_array(obj), False
    host = np.asarray(obj)
    if not (host.flags.c_contiguous or host.flags.f_contiguous):
        raise ValueError("Array contains non-contiguous buffer")
    return to_device(host, stream=stream, copy=copy), True
