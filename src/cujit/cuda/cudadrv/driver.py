"""``cuda.cudadrv.driver``: cujit's stream, context and device classes and driver errors
by numba's names (``Stream``, ``Context``, ``Device``, ``CudaAPIError``), and numba's raw
copies between a host array and a device pointer (``device_to_host``, ``host_to_device``),
and numba's ``driver`` object (``driver.get_device()``...) and ``_have_nvjitlink()``.

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
    "_have_nvjitlink",
    "device_pointer",
    "device_to_host",
    "driver",
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


class Driver:
    """numba's ``driver`` object, over the current target: which devices there are and
    the CUDA driver's version.  On the CPU target (``CUJIT_TARGET=cpu``) its one device
    is the CPU target's and its version that of the toolkit cujit compiles with (the
    features the CPU target runs).  numba's raw driver functions (``driver.cuMemAlloc``)
    are not here: cuda.bindings has them."""

    @property
    def is_available(self) -> bool:
        """Whether the current target has a device: the CPU target always, else a GPU
        (``cuda.is_available()`` says whether there is a GPU, whatever the target)."""
        from cujit import config
        from cujit.runtime import context

        return config.TARGET.get() == "cpu" or context.is_available()

    def get_device(self, devnum: int = 0):
        """Device ``devnum``: its attributes by numba's names (``MAX_THREADS_PER_BLOCK``,
        ``compute_capability``, ``name``...)."""
        count = self.get_device_count()
        if not 0 <= devnum < count:
            raise CudaSupportError(f"no device {devnum}: this machine has {count}")
        return _target_gpus()[devnum]

    def get_device_count(self) -> int:
        return len(_target_gpus())

    def list_devices(self) -> list:
        return list(_target_gpus())

    def get_active_context(self):
        """The calling thread's context, or None where it has none."""
        from cujit import config

        if config.TARGET.get() == "cpu":
            from cujit.cuda.cudadrv.devices import get_context

            return get_context()
        from cujit.runtime import context

        return getattr(context._tls, "ctx", None)

    def get_version(self) -> tuple[int, int]:
        """(major, minor) of the CUDA driver (on the CPU target: of the toolkit)."""
        from cujit import config

        if config.TARGET.get() == "cpu":
            from cujit.cuda.cudadrv.runtime import get_version

            return get_version()
        from cujit.runtime import driver_version

        return driver_version()

    def __getattr__(self, name: str):
        if name.startswith("cu"):
            raise AttributeError(
                f"cujit's driver object has no raw driver function {name!r}: "
                f"call cuda.bindings.driver.{name} instead"
            )
        raise AttributeError(f"'Driver' object has no attribute {name!r}")

    def __repr__(self) -> str:
        return "<cujit CUDA driver>"


def _target_gpus():
    """The current target's device list, read afresh (``cuda.gpus`` keeps the one it first
    served)."""
    from cujit import config

    if config.TARGET.get() == "cpu":
        from cujit.targets.cpu.device import gpus
    else:
        from cujit.runtime.devices import gpus
    return gpus


driver = Driver()


def _have_nvjitlink() -> bool:
    """numba's: whether nvJitLink loads (cujit links every kernel with it)."""
    from cujit.ptx import libs

    try:
        libs.nvjitlink_module()
    except Exception:  # noqa: BLE001 -- any failure to load it means "no"
        return False
    return True


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
