"""``cuda.cudadrv.runtime``: the CUDA toolkit version cujit compiles with."""

from __future__ import annotations


def get_version() -> tuple[int, int]:
    """(major, minor) of the CUDA toolkit whose compilers cujit uses (NVRTC's version,
    which ships with the same toolkit wheels as libNVVM and nvJitLink)."""
    from cujit.ptx import libs

    nvrtc = libs.nvrtc_module()
    err, major, minor = nvrtc.nvrtcVersion()
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtcVersion: {err.name}")
    return int(major), int(minor)
