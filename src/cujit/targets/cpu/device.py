"""The CPU target's device objects: ``cuda.gpus``, ``get_current_device()``,
``current_context()``, ``list_devices()``, ``select_device()``, ``detect()``, ``close()``.

The CPU target is one device, number 0.  Its attributes are the limits its launches
enforce (``launch.py``: CUDA's block and grid limits, an sm_90 block's 227 KiB of
shared memory, warps of 32) and the compute capability whose features it runs (9.0);
``MULTIPROCESSOR_COUNT`` is the host's cores, and its memory the host's.  Nothing here
needs a GPU or a driver.
"""

from __future__ import annotations

import os
import platform
import uuid
from typing import Self

from cujit.runtime.context import Deallocations

COMPUTE_CAPABILITY = (9, 0)


def _attributes() -> dict[str, int]:
    from cujit.targets.cpu import launch

    bx, by, bz = launch.MAX_BLOCK
    gx, gy, gz = launch.MAX_GRID
    return {
        "MAX_THREADS_PER_BLOCK": launch.MAX_THREADS_PER_BLOCK,
        "MAX_BLOCK_DIM_X": bx,
        "MAX_BLOCK_DIM_Y": by,
        "MAX_BLOCK_DIM_Z": bz,
        "MAX_GRID_DIM_X": gx,
        "MAX_GRID_DIM_Y": gy,
        "MAX_GRID_DIM_Z": gz,
        "MAX_SHARED_MEMORY_PER_BLOCK": launch.MAX_SHARED_PER_BLOCK,
        "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": launch.MAX_SHARED_PER_BLOCK,
        "WARP_SIZE": 32,
        "MULTIPROCESSOR_COUNT": os.cpu_count() or 1,
        "COMPUTE_CAPABILITY_MAJOR": COMPUTE_CAPABILITY[0],
        "COMPUTE_CAPABILITY_MINOR": COMPUTE_CAPABILITY[1],
        "COOPERATIVE_LAUNCH": 1,
        "UNIFIED_ADDRESSING": 1,
        "MANAGED_MEMORY": 1,
        "CAN_MAP_HOST_MEMORY": 1,
        "CONCURRENT_MANAGED_ACCESS": 1,
        "TOTAL_CONSTANT_MEMORY": 64 * 1024,
    }


class CPUDevice:
    """The CPU target as numba's Device: ``dev.compute_capability``,
    ``dev.MAX_THREADS_PER_BLOCK``, ``with dev:``..."""

    id = 0
    name = f"cujit CPU target ({platform.machine() or 'host'})"
    compute_capability = COMPUTE_CAPABILITY
    supports_float16 = True
    supports_bfloat16 = True
    uuid = "CPU-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, platform.node() or "cujit"))

    def __getattr__(self, name: str) -> int:
        attrs = _attributes()
        if name in attrs:
            return attrs[name]
        lower = {k.lower(): v for k, v in attrs.items()}  # max_threads_per_block, warp_size
        if name in lower:
            return lower[name]
        raise AttributeError(f"the CPU target's device has no attribute {name!r}")

    def get_primary_context(self) -> CPUContext:
        return _CONTEXT

    def reset(self) -> None:
        """Nothing to reset: the CPU target's arrays are host memory."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __eq__(self, other) -> bool:
        return isinstance(other, CPUDevice)

    def __hash__(self) -> int:
        return hash("cujit-cpu-device")

    def __repr__(self) -> str:
        return (
            f"<CPU target device 0 '{self.name}' (cc {COMPUTE_CAPABILITY[0]}."
            f"{COMPUTE_CAPABILITY[1]})>"
        )


class CPUMemoryManager:
    """``ctx.memory_manager`` on the CPU target: numba's queries, over host memory."""

    interface_version = 1

    def __init__(self, ctx) -> None:
        self.context = ctx
        self.deallocations = Deallocations()

    def defer_cleanup(self):
        return self.deallocations.disable()

    def get_memory_info(self) -> tuple[int, int]:
        return self.context.get_memory_info()

    def reset(self) -> None:
        """Nothing is queued to free."""


class CPUContext:
    """The CPU target's context: ``ctx.device``, ``get_memory_info()``, ``reset()``..."""

    def __init__(self):
        self.device = _DEVICE
        self.memory_manager = CPUMemoryManager(self)
        self.deallocations = self.memory_manager.deallocations
        self.handle = None

    def defer_cleanup(self):
        """numba's ``defer_cleanup()``: nothing is queued on the CPU target (NumPy frees
        its memory when the last array goes), so the block holds nothing back."""
        return self.memory_manager.defer_cleanup()

    def get_memory_info(self) -> tuple[int, int]:
        """(free, total) bytes of host memory."""
        page = os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page

    def synchronize(self) -> None:
        """Every CPU-target launch and copy is complete when it returns."""

    def reset(self) -> None:
        """Nothing to reset: the CPU target's arrays are host memory."""

    def get_ipc_handle(self, memory):
        """CUDA IPC shares GPU memory; the CPU target's is this process's host memory."""
        from cujit.targets.cpu.interop import ipc_unavailable

        raise ipc_unavailable()

    def push(self) -> None:
        return None

    def pop(self) -> None:
        return None

    def __repr__(self) -> str:
        return "<CPU target context>"


_DEVICE = CPUDevice()
_CONTEXT = CPUContext()


class CPUDeviceList:
    """``cuda.gpus`` on the CPU target: the one device."""

    def __len__(self) -> int:
        return 1

    def __getitem__(self, i: int | slice) -> CPUDevice | list[CPUDevice]:
        if isinstance(i, slice):  # as numba's list of devices: a slice is a list
            return [_DEVICE][i]
        if not isinstance(i, int):
            raise TypeError(f"device indices are ints, not {type(i).__name__}")
        if i not in (0, -1):
            raise IndexError(f"there is no device {i}: the CPU target is one device")
        return _DEVICE

    def __iter__(self):
        return iter((_DEVICE,))

    @property
    def current(self) -> CPUDevice:
        return _DEVICE

    def __repr__(self) -> str:
        return "<1 device (the CPU target)>"


gpus = CPUDeviceList()


def get_current_device() -> CPUDevice:
    return _DEVICE


def list_devices() -> list[CPUDevice]:
    return [_DEVICE]


def defer_cleanup():
    """``cuda.defer_cleanup()`` on the CPU target (see ``CPUContext.defer_cleanup``)."""
    return _CONTEXT.defer_cleanup()


def current_context(devnum: int | None = None) -> CPUContext:
    if devnum not in (None, 0):
        raise IndexError(f"there is no device {devnum}: the CPU target is one device")
    return _CONTEXT


def select_device(ordinal: int) -> CPUDevice:
    return gpus[ordinal]


def detect() -> bool:
    """Print the devices as numba's ``cuda.detect()`` does; True (the CPU target runs)."""
    print("Found 1 CUDA devices")
    print(f"id 0    {_DEVICE.name!r:>40}                              [SUPPORTED]")
    print(f"{'Compute Capability':>40}: {COMPUTE_CAPABILITY[0]}.{COMPUTE_CAPABILITY[1]}")
    print(f"{'UUID':>40}: {_DEVICE.uuid}")
    print("Summary:\n\t1/1 devices are supported")
    return True


def close() -> None:
    """Nothing to release on the CPU target."""


__all__ = [
    "CPUContext",
    "CPUDevice",
    "close",
    "current_context",
    "detect",
    "get_current_device",
    "gpus",
    "list_devices",
    "select_device",
]
