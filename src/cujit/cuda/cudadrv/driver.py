"""``cuda.cudadrv.driver``: cujit's stream, context and device classes and driver errors
by numba's names (``Stream``, ``Context``, ``Device``, ``CudaAPIError``).

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
]


def __getattr__(name: str):
    if name == "Stream":
        from cujit import config

        if config.TARGET.get() == "cpu":
            from cujit.targets.cpu.streams import Stream
        else:
            from cujit.runtime.stream import Stream
        globals()["Stream"] = Stream  # the target is chosen once per process
        return Stream
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
