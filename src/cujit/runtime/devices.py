"""Several GPUs: ``cuda.gpus``, ``with cuda.gpus[i]:`` and the device checks of a launch.

``cuda.gpus`` is a list-like of :class:`GPU` handles, one per device.  A GPU
used as a context manager makes its device current for the calling thread
inside the block and restores the previous one on leaving; ``select_device``
(in ``context``) changes it for good.  Device arrays remember the device they
live on (``DeviceArray.device_id``); :func:`check_devices` and the
``device_id`` argument of ``prepare_args`` refuse arrays of another device
before the launch, rather than letting the kernel fault on a foreign pointer.
"""

from __future__ import annotations

import threading
from typing import Self

from cujit.diagnostics import LaunchError, NoGPUError
from cujit.runtime import boundary, context

_tls = threading.local()  # the stack of contexts to restore, per thread


class GPU:
    """One device as ``cuda.gpus[i]``: its attributes, and a context manager."""

    def __init__(self, ordinal: int):
        self.id = ordinal

    def __getattr__(self, name: str):
        # name, compute_capability, ... come from the Device (read on first use).
        return getattr(context.device_info(self.id), name)

    def __enter__(self) -> Self:
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        stack.append(getattr(context._tls, "ctx", None))
        context._bind(self.id)
        return self

    def __exit__(self, *exc) -> None:
        prev = _tls.stack.pop()
        if prev is not None:
            prev.make_current()
        else:  # the thread had no context before: the next use binds the selected device
            del context._tls.ctx

    def __eq__(self, other) -> bool:
        return isinstance(other, GPU) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("GPU", self.id))

    def __repr__(self) -> str:
        return f"<GPU {self.id}>"


class GPUList:
    """``cuda.gpus``: ``len(cuda.gpus)``, ``cuda.gpus[i]`` (a slice gives a list),
    iteration, ``cuda.gpus.current``."""

    def __len__(self) -> int:
        # No driver or no device: an empty list, so `len(cuda.gpus) >= 2` tests stay simple.
        try:
            return context.device_count()
        except NoGPUError:
            return 0

    def __getitem__(self, i: int | slice) -> GPU | list[GPU]:
        n = len(self)
        if isinstance(i, slice):  # numba's gpus is a list: a slice is a list of GPUs
            return [GPU(k) for k in range(n)[i]]
        if not isinstance(i, int):
            raise TypeError(f"GPU indices are ints, not {type(i).__name__}")
        if not -n <= i < n:
            found = f"there is no GPU {i}: this machine has {n}"
            raise IndexError(found if n else f"{found}\n{boundary.CPU_HINT}")
        return GPU(i % n)

    def __iter__(self):
        return (GPU(i) for i in range(len(self)))

    @property
    @boundary.host_api("cuda.gpus.current")
    def current(self) -> GPU:
        return GPU(context.current_device_id())

    def __repr__(self) -> str:
        return f"<{len(self)} GPUs>"


gpus = GPUList()


def list_devices() -> list[GPU]:
    """``cuda.list_devices()``: every GPU."""
    return list(gpus)


def get_current_device():
    """``cuda.get_current_device()``: the calling thread's :class:`~context.Device`."""
    return context.get_device()


def detect() -> bool:
    """``cuda.detect()``: print each GPU as numba does; True if there is a supported one."""
    from cujit.runtime.driver import get_driver

    try:
        get_driver()
        devices = list_devices()
    except NoGPUError as e:
        print(f"CUDA is not available: {str(e).splitlines()[0]}\n{boundary.CPU_HINT}")
        return False
    print(f"Found {len(devices)} CUDA devices")
    for gpu in devices:
        major, minor = gpu.compute_capability
        print(f"id {gpu.id}    {gpu.name!r:>40}                              [SUPPORTED]")
        print(f"{'Compute Capability':>40}: {major}.{minor}")
        print(f"{'PCI Device ID':>40}: {gpu.PCI_DEVICE_ID}")
        print(f"{'PCI Bus ID':>40}: {gpu.PCI_BUS_ID}")
        print(f"{'UUID':>40}: {gpu.uuid}")
    print(f"Summary:\n\t{len(devices)}/{len(devices)} devices are supported")
    return bool(devices)


def arg_name(index: int, names=None) -> str:
    """How launch errors name an argument: ``argument 1 ('out')``."""
    if names is not None and index < len(names):
        return f"argument {index} ({names[index]!r})"
    return f"argument {index}"


def device_error(index: int, array_device: int, current: int, names=None) -> LaunchError:
    return LaunchError(
        f"{arg_name(index, names)} is an array on GPU {array_device}, but the kernel is "
        f"launched on GPU {current}: copy it across (cuda.to_device(a.copy_to_host())) "
        f"or launch inside 'with cuda.gpus[{array_device}]:'"
    )


def check_devices(args, device_id: int | None = None, names=None) -> None:
    """Raise a LaunchError naming the first array argument not on ``device_id``.

    ``device_id`` defaults to the current device.  Arrays whose device is
    unknown (``device_id`` None) and non-array arguments pass.  ``prepare_args``
    makes the same check inline when given ``device_id``; this helper is for
    callers that launch through other paths.
    """
    if device_id is None:
        device_id = context.current_device_id()
    for i, a in enumerate(args):
        for d in _array_devices(a):
            if d is not None and d != device_id:
                raise device_error(i, d, device_id, names)


def _array_devices(a):
    if isinstance(a, tuple):
        for item in a:
            yield from _array_devices(item)
    elif hasattr(a, "__cuda_memory__"):
        yield a.device_id
