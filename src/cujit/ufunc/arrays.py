"""The array operations cujit's ufuncs need, on the CUDA target or the CPU target.

On the CUDA target a device array is anything with the CUDA Array Interface or a DLPack
producer on a CUDA device (viewed as a ``DeviceArray``, no copy); on the CPU target it is the CPU
target's host-memory device
array.  Broadcast operands become strided views (stride 0 along broadcast axes).
"""

from __future__ import annotations

import numpy as np


class Arrays:
    """Allocation, copies and views for one target ('cuda' or 'cpu')."""

    def __init__(self, target: str):
        self.target = target
        if target == "cpu":
            from cujit.targets.cpu import memory
        else:
            from cujit.runtime import memory
        self._memory = memory

    def is_device(self, value) -> bool:
        if self.target == "cpu":  # also another object's CAI over the CPU target's memory
            from cujit.targets.cpu.interop import host_address

            return isinstance(value, self._memory.HostDeviceArray) or (
                not isinstance(value, np.ndarray) and host_address(value) is not None
            )
        if hasattr(value, "__cuda_array_interface__"):
            return not getattr(value, "__cujit_host_memory__", False)  # the CPU target's
        dl_device = getattr(value, "__dlpack_device__", None)
        return dl_device is not None and dl_device()[0] in _DLPACK_CUDA

    def as_device(self, value, stream=0):
        """A device operand as this target's device array, without a copy."""
        if self.target == "cpu":
            from cujit.targets.cpu.interop import as_cuda_array

            return as_cuda_array(value)
        if hasattr(value, "__cuda_array_interface__"):
            return self._memory.as_device_array(value)
        from cujit.runtime import interop

        return interop.from_dlpack(value, stream=stream)

    def operand(self, value, stream=0):
        """A call operand as the ufunc takes it: a device array (another library's viewed
        as this target's, no copy), a scalar, or a host array."""
        if self.is_device(value):
            return value if hasattr(value, "shape") else self.as_device(value, stream)
        if isinstance(value, (bool, int, float, complex, np.generic)):
            return value
        return np.asarray(value)

    def to_device(self, host: np.ndarray, stream=0):
        return self._memory.to_device(np.require(host, requirements="C"), stream=stream)

    def empty(self, shape: tuple[int, ...], dtype, stream=0):
        return self._memory.device_array(shape, dtype, stream=stream)

    def to_host(self, dev, stream=0) -> np.ndarray:
        if self.target == "cpu":
            return np.asarray(dev).view(np.ndarray).copy()
        return dev.copy_to_host(stream=stream)

    def copy_into_host(self, dev, host: np.ndarray, stream=0) -> None:
        if self.target == "cpu":
            host[...] = np.asarray(dev)
        else:
            dev.copy_to_host(host, stream=stream)

    def view(self, arr, shape: tuple[int, ...], strides: tuple[int, ...], writeable: bool = False):
        """``arr``'s memory seen with ``shape`` and byte ``strides`` (no copy); an
        output's view (``writeable``) never repeats an element (stride 0 on extent 1)."""
        if tuple(arr.shape) == tuple(shape) and tuple(arr.strides) == tuple(strides):
            return arr
        if self.target == "cpu":
            return np.lib.stride_tricks.as_strided(
                arr, shape, strides, subok=True, writeable=writeable
            )
        return arr._derive(tuple(shape), tuple(strides), arr.device_ptr)

    def flat(self, arr):
        """A C-contiguous array as one dimension."""
        if arr.ndim == 1:
            return arr
        return arr.reshape(arr.size)

    def synchronize(self, stream) -> None:
        if self.target == "cpu":
            return
        if stream:
            stream.synchronize()
        else:
            from cujit.runtime import context

            context.synchronize()


# DLPack device types of GPU memory: CUDA, CUDA host (pinned), CUDA managed.
_DLPACK_CUDA = (2, 3, 13)

_BY_TARGET: dict[str, Arrays] = {}


def arrays_for(target: str) -> Arrays:
    """The (shared) Arrays of ``target``."""
    found = _BY_TARGET.get(target)
    if found is None:
        found = _BY_TARGET[target] = Arrays(target)
    return found
