"""Devices and their primary contexts.

cujit uses each device's *primary* context (the one the CUDA runtime, CuPy
and PyTorch share), so device pointers pass freely between them.  The CUDA
driver keeps a current context per OS thread: :func:`get_context` binds the
selected device's context to the calling thread on first use there, then
costs one attribute lookup.
"""

from __future__ import annotations

import threading

from cujit import startup
from cujit.diagnostics import NoGPUError
from cujit.runtime.driver import call, get_driver, is_available  # noqa: F401 (re-export)

_tls = threading.local()
_contexts: dict[int, Context] = {}
_devices: dict[int, Device] = {}
_selected = 0
_lock = threading.Lock()


class Device:
    """One CUDA device and the attributes cujit's launch checks and codegen need.

    Read once at context creation: attributes never change while a process runs.
    """

    def __init__(self, ordinal: int):
        drv = get_driver()
        self.id = ordinal
        self.handle = call("cuDeviceGet", ordinal)
        name = call("cuDeviceGetName", 256, self.handle)
        self.name = name.split(b"\0", 1)[0].decode(errors="replace")
        A = drv.CUdevice_attribute

        def attr(which: str) -> int:
            return call(
                "cuDeviceGetAttribute", getattr(A, "CU_DEVICE_ATTRIBUTE_" + which), self.handle
            )

        self.compute_capability = (
            attr("COMPUTE_CAPABILITY_MAJOR"),
            attr("COMPUTE_CAPABILITY_MINOR"),
        )
        # Hooks may use the architecture while the context is created (cujit.startup).
        startup.run_arch_known(self.compute_capability)
        self.max_threads_per_block = attr("MAX_THREADS_PER_BLOCK")
        self.max_block_dim = (
            attr("MAX_BLOCK_DIM_X"),
            attr("MAX_BLOCK_DIM_Y"),
            attr("MAX_BLOCK_DIM_Z"),
        )
        self.max_grid_dim = (attr("MAX_GRID_DIM_X"), attr("MAX_GRID_DIM_Y"), attr("MAX_GRID_DIM_Z"))
        self.max_shared_memory_per_block = attr("MAX_SHARED_MEMORY_PER_BLOCK")
        # Above 48 KiB of dynamic shared memory a kernel must opt in (cuFuncSetAttribute).
        self.max_shared_memory_per_block_optin = attr("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
        self.multiprocessor_count = attr("MULTIPROCESSOR_COUNT")
        self.warp_size = attr("WARP_SIZE")

    def __getattr__(self, name: str) -> int:
        # numba's spelling of the driver's attributes: dev.MAX_THREADS_PER_BLOCK, WARP_SIZE...
        which = getattr(get_driver().CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + name, None)
        if not name.isupper() or which is None:
            raise AttributeError(f"CUDA devices have no attribute {name!r}")
        value = call("cuDeviceGetAttribute", which, self.handle)
        setattr(self, name, value)  # attributes never change while a process runs
        return value

    @property
    def supports_float16(self) -> bool:
        return self.compute_capability >= (5, 3)

    @property
    def supports_bfloat16(self) -> bool:
        return self.compute_capability >= (8, 0)

    @property
    def uuid(self) -> str:
        """``GPU-xxxxxxxx-xxxx-...``, as nvidia-smi prints it."""
        raw = bytes(call("cuDeviceGetUuid", self.handle).bytes)[:16].hex()
        return f"GPU-{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"

    def get_primary_context(self) -> Context:
        return _bind(self.id)

    def __repr__(self) -> str:
        major, minor = self.compute_capability
        return f"<CUDA device {self.id} '{self.name}' cc {major}.{minor}>"


class Context:
    """A device's primary context, retained for the life of the process."""

    def __init__(self, device: Device):
        self.device = device
        self.handle = call("cuDevicePrimaryCtxRetain", device.handle)
        self._memory_manager = None  # made with the first allocation (memory_manager)

    def make_current(self) -> None:
        call("cuCtxSetCurrent", self.handle)
        _tls.ctx = self

    def synchronize(self) -> None:
        """Wait for all work in this context; launch errors surface here."""
        call("cuCtxSynchronize")

    def get_memory_info(self) -> tuple[int, int]:
        """(free, total) bytes of the device's memory."""
        self.make_current()
        free, total = call("cuMemGetInfo")
        return int(free), int(total)

    def reset(self) -> None:
        """Wait for the context's work and make the frees still queued (numba's
        ``reset``); cujit keeps the primary context for the process's life."""
        self.synchronize()
        if self._memory_manager is not None:
            self._memory_manager.reset()

    @property
    def memory_manager(self):
        """numba's memory manager: the context's deferred frees
        (``cujit.runtime.deallocs``)."""
        if self._memory_manager is None:
            from cujit.runtime.deallocs import MemoryManager

            with _lock:
                if self._memory_manager is None:
                    total = call("cuDeviceTotalMem", self.device.handle)
                    self._memory_manager = MemoryManager(self, int(total))
        return self._memory_manager

    @property
    def deallocations(self):
        """numba's pending-deallocation list (``memory_manager.deallocations``)."""
        return self.memory_manager.deallocations

    def defer_cleanup(self):
        """numba's ``defer_cleanup()``: no queued free happens inside the block."""
        return self.memory_manager.defer_cleanup()

    def get_ipc_handle(self, memory):
        """An IPC handle another process can open (``memory``: a ``gpu_data``); see
        ``cujit.runtime.ipc``."""
        from cujit.runtime import ipc

        self.make_current()
        return ipc.get_ipc_handle(memory)

    def push(self) -> None:
        self.make_current()

    def pop(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"<Context of {self.device!r}>"


class Deallocations:
    """The CPU target's pending-deallocation list: empty, since NumPy frees its memory at
    once (the GPU's list is ``cujit.runtime.deallocs``)."""

    def clear(self) -> None:
        return None

    def __len__(self) -> int:
        return 0

    def disable(self):
        import contextlib

        return contextlib.nullcontext()


def get_context() -> Context:
    """The calling thread's context (the selected device's), created on first use."""
    try:
        return _tls.ctx
    except AttributeError:
        return _bind(_selected)


def device_info(ordinal: int) -> Device:
    """Device ``ordinal``'s attributes, read once, without touching any context."""
    dev = _devices.get(ordinal)
    if dev is None:
        with _lock:
            dev = _devices.get(ordinal)
            if dev is None:
                dev = _devices[ordinal] = Device(ordinal)
    return dev


def _bind(ordinal: int) -> Context:
    ctx = _contexts.get(ordinal)
    if ctx is None:
        device = device_info(ordinal)
        with _lock:
            ctx = _contexts.get(ordinal)
            if ctx is None:
                ctx = _contexts[ordinal] = Context(device)
    ctx.make_current()
    return ctx


def select_device(ordinal: int) -> Device:
    """Make device ``ordinal`` current for this thread and the default for new ones."""
    global _selected
    count = device_count()
    if not 0 <= ordinal < count:
        raise ValueError(f"there is no CUDA device {ordinal}: this machine has {count}")
    _selected = ordinal
    return _bind(ordinal).device


def get_device() -> Device:
    """The current thread's device."""
    return get_context().device


def current_device_id() -> int:
    """The ordinal of the calling thread's device (NoGPUError without one)."""
    return get_context().device.id


def compute_capability_or(default: tuple[int, int]) -> tuple[int, int]:
    """The current device's compute capability, or ``default`` on a machine without a GPU.

    Compiling needs no GPU: the dispatcher targets the device when there is one.
    """
    try:
        return get_context().device.compute_capability
    except NoGPUError:
        return tuple(default)


def current_context(devnum: int | None = None) -> Context:
    """``cuda.current_context()``: the calling thread's context (or device ``devnum``'s,
    made current)."""
    return get_context() if devnum is None else _bind(devnum)


def defer_cleanup():
    """``cuda.defer_cleanup()``: a context manager inside which the current context's
    queued frees wait (``cujit.runtime.deallocs``)."""
    return get_context().defer_cleanup()


def close() -> None:
    """``cuda.close()``: finish the work and unbind the calling thread's context; the next
    use binds the selected device's again (primary contexts stay for the process)."""
    ctx = getattr(_tls, "ctx", None)
    if ctx is not None:
        ctx.synchronize()
        del _tls.ctx


def device_count() -> int:
    return call("cuDeviceGetCount")


def synchronize() -> None:
    """``cuda.synchronize()``: wait for all work on the current device."""
    get_context().synchronize()
