"""``cuda.cudadrv.nvrtc``: the GPU architectures the installed toolkit compiles for."""

from __future__ import annotations


def get_supported_archs() -> list[tuple[int, int]]:
    """The (major, minor) compute capabilities NVRTC can target, lowest first."""
    from cujit.ptx import libs

    nvrtc = libs.nvrtc_module()
    err, archs = nvrtc.nvrtcGetSupportedArchs()
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtcGetSupportedArchs: {err.name}")
    return sorted((int(a) // 10, int(a) % 10) for a in archs)


def find_closest_arch(cc: tuple[int, int]) -> tuple[int, int]:
    """The highest supported architecture not above ``cc`` (code for it runs on ``cc``)."""
    cc = (int(cc[0]), int(cc[1]))
    archs = get_supported_archs()
    fitting = [a for a in archs if a <= cc]
    if not fitting:
        raise ValueError(
            f"compute capability {cc[0]}.{cc[1]} is below the lowest this toolkit supports "
            f"({archs[0][0]}.{archs[0][1]})"
        )
    return fitting[-1]
