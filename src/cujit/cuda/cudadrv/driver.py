"""``cuda.cudadrv.driver``: cujit's stream, context and device classes and driver errors
by numba's names (``Stream``, ``Context``, ``Device``, ``CudaAPIError``), and numba's raw
copies between a host array and a device pointer (``device_to_host``, ``host_to_device``).

``Stream`` is the class of the streams ``cuda.stream()`` makes on the current target:
the GPU runtime's, or under ``CUJIT_TARGET=cpu`` the CPU target's."""

from cujit.cuda.cudadrv.error import CudaAPIError, CudaDriverError, CudaSupportError
from cujit.runtime.context import Context, Device
from cujit.runtime.ipc import IpcHandle

__all__ = [
    "Context",
    "CudaAPIError",
    "CudaDriverError",
    "CudaSupportError",
    "Device",
    "IpcHandle",
    "Stream",  # noqa: F822 - given by __getattr__, for the current target
    "device_pointer",
    "device_to_host",
    "host_to_device",
]


def __getattr__(name: str):
    if name == "Stream":
        from cujit import config

        if config.TARGET.get() == "cpu":
            from cujit.targets.cpu.streams import Stream
        else:
            from cujit.runtime.stream import Stream
        return Stream  # not cached: the current target's, each time
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def device_pointer(obj) -> int:
    """numba's ``driver.device_pointer``: the address of device memory ``obj`` (a device
    array, a ``gpu_data`` / IPC pointer, or an int address)."""
    if isinstance(obj, int):
        return obj
    for attr in ("device_pointer", "device_ptr"):
        value = getattr(obj, attr, None)
        if isinstance(value, int):
            return value
    ptr = getattr(obj, "device_ctypes_pointer", None)
    if ptr is not None:
        return int(ptr.value or 0)
    raise TypeError(f"expected device memory (a device array or pointer), got {obj!r}")


def _host_pointer(obj, nbytes: int, writing: bool) -> int:
    import numpy as np

    if isinstance(obj, int):
        return obj
    a = np.asarray(obj)
    if not a.flags.c_contiguous and not a.flags.f_contiguous:
        raise ValueError("raw copies need a contiguous host array")
    if writing and not a.flags.writeable:
        raise ValueError("cannot copy into a read-only host array")
    if nbytes > a.nbytes:
        raise ValueError(f"a copy of {nbytes} bytes does not fit a {a.nbytes}-byte host array")
    return a.ctypes.data


def _cpu_copy(dst: int, src: int, size: int) -> None:
    """On the CPU target device memory is host memory: both ends must be its own."""
    import ctypes

    from cujit.targets.cpu.interop import allocation_at

    device = src if allocation_at(src, size) is not None else dst
    if allocation_at(device, size) is None:
        raise ValueError("neither end of the copy is memory the CPU target allocated")
    ctypes.memmove(dst, src, size)


def device_to_host(dst, src, size: int, stream=0) -> None:
    """numba's ``driver.device_to_host``: copy ``size`` bytes of device memory ``src``
    into the host array (or address) ``dst``."""
    from cujit import config

    size = int(size)
    host, device = _host_pointer(dst, size, writing=True), device_pointer(src)
    if config.TARGET.get() == "cpu":
        _cpu_copy(host, device, size)
        return
    from cujit.runtime.memory import _dtoh

    _dtoh(host, device, size, stream)


def host_to_device(dst, src, size: int, stream=0) -> None:
    """numba's ``driver.host_to_device``: copy ``size`` bytes of the host array (or
    address) ``src`` into device memory ``dst``."""
    from cujit import config

    size = int(size)
    device, host = device_pointer(dst), _host_pointer(src, size, writing=False)
    if config.TARGET.get() == "cpu":
        _cpu_copy(device, host, size)
        return
    from cujit.runtime.memory import _htod

    _htod(device, host, size, stream)
