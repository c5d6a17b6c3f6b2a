"""numba.cuda's ``api`` module: the host API (``cujit.cuda``'s names), and the
queries of what the current device supports among the narrow float types
(bfloat16, fp8)."""

from __future__ import annotations


def _device():
    from cujit import config

    if config.TARGET.get() == "cpu":
        from cujit.targets.cpu.device import get_current_device
    else:
        from cujit.runtime.devices import get_current_device
    return get_current_device()


def is_bfloat16_supported() -> bool:
    """Whether the current device computes in bfloat16 (compute capability 8.0 or more;
    the CPU target always does)."""
    return bool(_device().supports_bfloat16)


def is_fp8_supported() -> bool:
    """Whether the current device has the fp8 types (compute capability 8.9 or more,
    as numba-cuda says; the CPU target always does)."""
    from cujit import config

    if config.TARGET.get() == "cpu":
        return True
    return tuple(_device().compute_capability) >= (8, 9)


def __getattr__(name: str):
    from cujit import cuda

    return getattr(cuda, name)
