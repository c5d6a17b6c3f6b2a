"""CUDA IPC: device memory shared with another process (numba's IPC API).

    ipch = cuda.current_context().get_ipc_handle(darr.gpu_data)   # or darr.get_ipc_handle()
    # ...pickled to another process on the same machine...
    with cuda.open_ipc_array(ipch.handle.reserved, shape=n, dtype=np.intp) as d:
        d.copy_to_host()

A handle names a whole ``cuMemAlloc`` allocation (``cuIpcGetMemHandle`` takes the
allocation's base address), so a view into one carries its byte offset from that base
(found with ``cuMemGetAddressRange``).  Opening maps the allocation into the opening
process (``cuIpcOpenMemHandle``); closing unmaps it.  A handle cannot be opened in the
process that made it (the driver refuses), as in numba.
"""

from __future__ import annotations

import ctypes
from dataclasses import field

import numpy as np

from cujit.frozen import frozen
from cujit.runtime.driver import _import_bindings, call
from cujit.runtime.layout import contiguous_strides

HANDLE_BYTES = 64  # CU_IPC_HANDLE_SIZE


@frozen
class DevicePointer:
    """``DeviceArray.gpu_data``: where an array's memory starts, its size, and the object
    keeping it alive (compared by address and size only)."""

    device_pointer: int
    size: int
    owner: object = field(default=None, compare=False, repr=False)


@frozen
class IpcMemHandle:
    """The driver's 64-byte handle, as bytes (numba's ``handle.reserved``)."""

    reserved: bytes

    def to_driver(self):
        cu = _import_bindings().CUipcMemHandle()
        ctypes.memmove(cu.getPtr(), self.reserved, HANDLE_BYTES)
        return cu


class IpcHandle:
    """An exportable handle to device memory: pickles to its bytes, size and offset."""

    def __init__(self, base, handle: IpcMemHandle, size: int, offset: int = 0) -> None:
        self.base = base  # the exporting side's memory (None once unpickled)
        self.handle = handle
        self.size = size
        self.offset = offset
        self._opened: int | None = None

    def __reduce__(self):
        return (IpcHandle, (None, self.handle, self.size, self.offset))

    def open(self, context=None) -> DevicePointer:
        """Map the memory into this process; the pointer is valid until ``close()``."""
        if self._opened is not None:
            raise ValueError("IpcHandle is already opened")
        from cujit.runtime.context import get_context

        (context or get_context()).make_current()
        flags = _import_bindings().CUipcMem_flags.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
        self._opened = int(call("cuIpcOpenMemHandle", self.handle.to_driver(), flags))
        return DevicePointer(self._opened + self.offset, self.size, self)

    def open_staged(self, context=None) -> DevicePointer:
        """numba's name for opening on another device: the driver maps the allocation
        with peer access enabled lazily, so this is ``open``."""
        return self.open(context)

    def open_array(self, context, shape, dtype, strides=None):
        """``open()`` viewed as a DeviceArray (C order unless ``strides`` are given)."""
        from cujit.runtime.memory import DeviceArray

        ptr = self.open(context)
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
        dtype = np.dtype(dtype)
        strides = tuple(strides) if strides else contiguous_strides(shape, dtype.itemsize)
        return DeviceArray._view(shape, strides, dtype, ptr.device_pointer, self)

    def close(self) -> None:
        if self._opened is not None:
            call("cuIpcCloseMemHandle", self._opened)
            self._opened = None


class IpcArrayHandle:
    """``DeviceArray.get_ipc_handle()``: an IpcHandle with the array's layout; ``with h as
    d:`` opens it as a DeviceArray ``d`` and closes it on leaving."""

    def __init__(self, ipc_handle: IpcHandle, shape, strides, dtype) -> None:
        self.ipc_handle = ipc_handle
        self.shape, self.strides, self.dtype = tuple(shape), tuple(strides), np.dtype(dtype)

    def open(self):
        return self.ipc_handle.open_array(None, self.shape, self.dtype, self.strides)

    def close(self) -> None:
        self.ipc_handle.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()


def get_ipc_handle(memory) -> IpcHandle:
    """An IpcHandle for ``memory`` (a ``gpu_data`` pointer, or an int address)."""
    from cujit.runtime.context import get_context

    get_context()
    ptr = int(getattr(memory, "device_pointer", memory))
    size = int(getattr(memory, "size", 0))
    base, _ = call("cuMemGetAddressRange", ptr)
    handle = call("cuIpcGetMemHandle", int(base))
    raw = ctypes.string_at(handle.getPtr(), HANDLE_BYTES)
    return IpcHandle(memory, IpcMemHandle(raw), size, ptr - int(base))


class _OpenedArray:
    def __init__(self, handle: IpcHandle, shape, dtype, strides, offset: int) -> None:
        self.handle, self.layout, self.offset = handle, (shape, dtype, strides), offset

    def __enter__(self):
        shape, dtype, strides = self.layout
        arr = self.handle.open_array(None, shape, dtype, strides)
        if self.offset:
            arr = arr._view(
                arr.shape, arr.strides, arr.dtype, arr.device_ptr + self.offset, self.handle
            )
        return arr

    def __exit__(self, *exc) -> None:
        self.handle.close()


def open_ipc_array(handle, shape, dtype, strides=None, offset: int = 0) -> _OpenedArray:
    """``cuda.open_ipc_array``: ``with`` it, a DeviceArray over another process's memory
    named by ``handle`` (the 64 handle bytes, or an IpcMemHandle)."""
    raw = handle.reserved if isinstance(handle, IpcMemHandle) else bytes(handle)
    if len(raw) != HANDLE_BYTES:
        raise ValueError(f"an IPC handle is {HANDLE_BYTES} bytes, not {len(raw)}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return _OpenedArray(IpcHandle(None, IpcMemHandle(raw), size), shape, dtype, strides, offset)
