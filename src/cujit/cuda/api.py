"""numba.cuda's ``api`` module: the host API (``cujit.cuda``'s names), and the
queries of what the current device supports among the narrow float types
(bfloat16, fp8)."""

from __future__ import annotations

from cujit.runtime.boundary import host_api


def _device():
    import importlib

    from cujit import config, cuda

    # the module cujit.cuda serves get_current_device from, for the target in force now
    table = cuda._CPU_NAMES if config.TARGET.get() == "cpu" else cuda._RUNTIME_NAMES
    return importlib.import_module(table["get_current_device"]).get_current_device()


@host_api("cuda.is_bfloat16_supported()")
def is_bfloat16_supported() -> bool:
    """Whether the current device computes in bfloat16 (compute capability 8.0 or more;
    the CPU target always does)."""
    return bool(_device().supports_bfloat16)


@host_api("cuda.is_fp8_supported()")
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
