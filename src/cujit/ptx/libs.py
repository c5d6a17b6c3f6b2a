"""Finding and loading the CUDA toolchain libraries stage 7 needs.

libNVVM, nvJitLink and libdevice come either from NVIDIA's pip wheels
(``nvidia-nvvm``, ``nvidia-nvjitlink``) or from a CUDA toolkit install.
``cuda.pathfinder`` knows both layouts; when it fails (an older pathfinder,
a toolkit outside its search) we load the library ourselves from
``$CUDA_HOME``/``$CUDA_PATH``/``/usr/local/cuda``.  Loading it with
``RTLD_GLOBAL`` first is enough: ``cuda.bindings`` asks pathfinder again,
and pathfinder's first step is "already loaded in this process".

Nothing here runs at import: ``import cujit`` must stay cheap, and a machine
without the toolchain must still be able to import the package.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from cujit.diagnostics import CujitError

# Library name (as cuda.pathfinder spells it) -> (dir under a CUDA root, sonames).
_TOOLKIT_LAYOUT = {
    "nvvm": (("nvvm/lib64", "nvvm/lib"), ("libnvvm.so.4", "libnvvm.so")),
    "nvJitLink": (
        ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"),
        ("libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"),
    ),
    "nvrtc": (
        ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"),
        ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"),
    ),
}
_WHEELS = {"nvvm": "nvidia-nvvm", "nvJitLink": "nvidia-nvjitlink", "nvrtc": "nvidia-cuda-nvrtc"}

_loaded: dict[str, str] = {}  # libname -> absolute path of the loaded library
_libdevice: bytes | None = None
_libdevice_path: str | None = None


class ToolchainNotFoundError(CujitError):
    """libNVVM, nvJitLink or libdevice could not be found."""


def cuda_roots() -> list[Path]:
    """Candidate CUDA toolkit roots, most specific first."""
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    roots.append("/usr/local/cuda")
    return [Path(r) for r in roots if r]


def load_library(libname: str) -> str:
    """Load ``libname`` ('nvvm', 'nvJitLink' or 'nvrtc') once per process; return its path."""
    path = _loaded.get(libname)
    if path is not None:
        return path
    tried: list[str] = []
    try:
        path = _pathfinder_load(libname)
    except Exception as exc:  # noqa: BLE001 - pathfinder absent, too old, or nothing found
        tried.append(f"cuda.pathfinder: {exc}")
        path = _load_from_toolkit(libname, tried)
    _loaded[libname] = path
    return path


def _pathfinder_load(libname: str) -> str:
    from cuda.pathfinder import load_nvidia_dynamic_lib

    return load_nvidia_dynamic_lib(libname).abs_path


def _pathfinder_bitcode(name: str) -> str | None:
    from cuda.pathfinder import find_bitcode_lib

    return find_bitcode_lib(name)


def _load_from_toolkit(libname: str, tried: list[str]) -> str:
    subdirs, sonames = _TOOLKIT_LAYOUT[libname]
    for root in cuda_roots():
        for sub in subdirs:
            for so in sonames:
                cand = root / sub / so
                if not cand.exists():
                    continue
                try:
                    ctypes.CDLL(str(cand), mode=os.RTLD_GLOBAL)
                except OSError as exc:
                    tried.append(f"{cand}: {exc}")
                    continue
                return str(cand)
        tried.append(f"nothing under {root}")
    raise ToolchainNotFoundError(
        f"cannot load {libname}: install the pip wheel '{_WHEELS[libname]}' or set CUDA_HOME "
        "to a CUDA toolkit.\n  tried: " + "\n  tried: ".join(tried)
    )


def nvvm_module():
    """``cuda.bindings.nvvm`` with libNVVM loaded."""
    load_library("nvvm")
    from cuda.bindings import nvvm

    return nvvm


def nvjitlink_module():
    """``cuda.bindings.nvjitlink`` with nvJitLink loaded."""
    load_library("nvJitLink")
    from cuda.bindings import nvjitlink

    return nvjitlink


# cuda.pathfinder's names of the header sets a linked CUDA source may include: the
# runtime's (cuda_runtime.h, cuda_fp16.h, cuda_bf16.h...), cuRAND's device API and CCCL.
_HEADER_SETS = ("cudart", "curand", "cccl")
_include_dirs: tuple[str, ...] | None = None


def cuda_include_dirs() -> tuple[str, ...]:
    """The CUDA header directories found (once per process), in ``_HEADER_SETS`` order:
    cuda.pathfinder's answers (the NVIDIA wheels, then a toolkit install), else
    ``include`` under the toolkit roots of ``cuda_roots``."""
    global _include_dirs
    if _include_dirs is None:
        found = dict.fromkeys(_pathfinder_headers())
        for root in cuda_roots():
            if (root / "include" / "cuda_runtime.h").exists():
                found.setdefault(str(root / "include"))
        _include_dirs = tuple(found)
    return _include_dirs


def _pathfinder_headers() -> list[str]:
    try:
        from cuda.pathfinder import locate_nvidia_header_directory
    except ImportError:  # an older cuda.pathfinder: the toolkit roots alone
        return []
    dirs = []
    for name in _HEADER_SETS:
        try:
            located = locate_nvidia_header_directory(name)
        except Exception:  # noqa: BLE001 - a set pathfinder cannot look for here
            continue
        if located is not None:
            dirs.append(located.abs_path)
    return dirs


def nvrtc_module():
    """``cuda.bindings.nvrtc`` with NVRTC loaded (CUDA C++ sources linked into kernels)."""
    load_library("nvrtc")
    from cuda.bindings import nvrtc

    return nvrtc


def libdevice_path() -> str:
    """Where libdevice.10.bc is: pathfinder, then beside libNVVM, then CUDA roots."""
    global _libdevice_path
    if _libdevice_path is not None:
        return _libdevice_path
    candidates: list[Path] = []
    try:
        found = _pathfinder_bitcode("device")
        if found:
            candidates.append(Path(found))
    except Exception:  # noqa: BLE001, S110 - an older pathfinder, or nothing found
        pass
    # libnvvm lives in <root>/nvvm/lib64 (toolkit) or <root>/lib (cu13 wheel);
    # libdevice in <root>/nvvm/libdevice in both.  Try the path as loaded, then
    # with symlinks resolved (/usr/local/cuda -> cuda-13.0).
    nvvm_lib = Path(load_library("nvvm"))
    for nvvm_dir in dict.fromkeys((nvvm_lib.parent, nvvm_lib.resolve().parent)):
        for up in (nvvm_dir.parent, nvvm_dir.parent.parent):
            candidates.append(up / "libdevice" / "libdevice.10.bc")
            candidates.append(up / "nvvm" / "libdevice" / "libdevice.10.bc")
    candidates += [r / "nvvm" / "libdevice" / "libdevice.10.bc" for r in cuda_roots()]
    for cand in candidates:
        if cand.is_file():
            _libdevice_path = str(cand)
            return _libdevice_path
    raise ToolchainNotFoundError(
        "cannot find libdevice.10.bc; looked at:\n  " + "\n  ".join(map(str, candidates))
    )


def libdevice_bytes() -> bytes:
    """The libdevice bitcode, read once per process."""
    global _libdevice
    if _libdevice is None:
        _libdevice = Path(libdevice_path()).read_bytes()
    return _libdevice
