"""``cuda.cudadrv.devicearray`` (also ``cuda.devicearray``): cujit's device array class
and constructors by numba's names."""

from __future__ import annotations

import numpy as np

from cujit.runtime.ipc import IpcArrayHandle
from cujit.runtime.memory import DeviceArray, DeviceNDArray

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
    """Whether ``obj`` is a cujit device array (of either target)."""
    if isinstance(obj, DeviceArray):
        return True
    from cujit.targets.cpu.memory import HostDeviceArray

    return isinstance(obj, HostDeviceArray)


def from_array_like(ary, stream=0, gpu_data=None) -> DeviceArray:
    """An uninitialised device array shaped and laid out like ``ary`` (over ``gpu_data``,
    an allocation, when given)."""
    if gpu_data is None:
        from cujit import cuda  # the current target's device arrays

        return cuda.device_array_like(ary, stream=stream)
    return DeviceArray(ary.shape, ary.strides, ary.dtype, stream=stream, gpu_data=gpu_data)


def auto_device(obj, stream=0, copy: bool = True, user_explicit: bool = False):
    """``(device array, whether a copy was made)``: device and CUDA Array Interface arrays
    as they are; anything else (a NumPy array, a scalar, a sequence) copied to a new
    device array, which must then be contiguous (a strided host view is refused)."""
    from cujit import cuda  # the current target's device arrays

    if is_cuda_ndarray(obj):
        return obj, False
    if cuda.is_cuda_array(obj):
        return cuda.as_cuda_array(obj), False
    host = np.asarray(obj)
    if not (host.flags.c_contiguous or host.flags.f_contiguous):
        raise ValueError("Array contains non-contiguous buffer")
    return cuda.to_device(host, stream=stream, copy=copy), True
