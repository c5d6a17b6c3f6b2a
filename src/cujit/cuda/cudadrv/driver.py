"""``cuda.cudadrv.driver``: cujit's stream, context and device classes and driver errors
by numba's names (``Stream``, ``Context``, ``Device``, ``CudaAPIError``)."""

from cujit.cuda.cudadrv.error import CudaAPIError, CudaDriverError, CudaSupportError
from cujit.runtime.context import Context, Device
from cujit.runtime.ipc import IpcHandle
from cujit.runtime.stream import Stream

__all__ = [
    "Context",
    "CudaAPIError",
    "CudaDriverError",
    "CudaSupportError",
    "Device",
    "IpcHandle",
    "Stream",
]
