"""Stage 7: LLVM IR -> PTX (libNVVM) -> cubin (nvJitLink).

    ptx = compile_ptx(llvm_ir_text, (9, 0))
    cubin = link_cubin(ptx, (9, 0))

The toolchain libraries load on first use, not at import.
"""

from __future__ import annotations

from cujit.ptx.libs import ToolchainNotFoundError, libdevice_path
from cujit.ptx.link import LinkError, link_cubin, link_lto_ptx
from cujit.ptx.nvvm import DEFAULT_OPTIONS, NVVMError, NVVMOptions, compile_ptx

__all__ = [
    "DEFAULT_OPTIONS",
    "LinkError",
    "NVVMError",
    "NVVMOptions",
    "ToolchainNotFoundError",
    "compile_ptx",
    "libdevice_path",
    "link_cubin",
    "link_lto_ptx",
    "toolchain_versions",
]

_versions: dict | None = None


def toolchain_versions() -> dict:
    """Versions that decide what stage 7 produces: part of the cache key and ``explain``.

    ``libnvvm`` and ``nvjitlink`` are (major, minor); ``nvvm_ir`` is libNVVM's
    (major, minor, debug major, debug minor) IR version; the paths say which
    install was picked.
    """
    global _versions
    if _versions is None:
        from cujit.ptx import libs

        nvvm = libs.nvvm_module()
        jl = libs.nvjitlink_module()
        _versions = {
            "libnvvm": tuple(nvvm.version()),
            "nvvm_ir": tuple(nvvm.ir_version()),
            "nvjitlink": tuple(jl.version()),
            "libnvvm_path": libs.load_library("nvvm"),
            "nvjitlink_path": libs.load_library("nvJitLink"),
        }
    return dict(_versions)
