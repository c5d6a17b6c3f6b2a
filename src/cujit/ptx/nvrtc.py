"""CUDA C/C++ source -> PTX or LTO-IR through NVRTC (the ``nvidia-cuda-nvrtc`` wheel,
``cuda.bindings.nvrtc``): the foreign code a kernel links (``cujit.linking``).

Functions a kernel calls through ``cuda.declare_device`` are ``extern "C"`` device
functions (or named by their mangled C++ name).  The source is compiled as
relocatable device code (``-rdc=true``) so its functions stay visible to the linker.
It sees the CUDA toolkit's headers (``cuda_fp16.h``, ``curand_kernel.h``, CCCL's
``cuda/std/...``) where ``cuda.pathfinder`` finds them (the NVIDIA wheels or a toolkit
install: ``libs.cuda_include_dirs``), then the caller's ``include`` directories.
"""

from __future__ import annotations

from cujit.diagnostics import CujitError
from cujit.ptx import libs


class NVRTCError(CujitError):
    """NVRTC could not compile a CUDA C/C++ source; the message names it and carries the log."""

    def __init__(self, message: str, log: str):
        self.log = log
        super().__init__(f"{message}\n--- NVRTC log ---\n{log.strip() or '(empty log)'}")


def _check(nvrtc, result, what: str) -> None:
    err = result[0] if isinstance(result, tuple) else result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"{what}: {err.name}")


def compile_cuda(
    source: str | bytes,
    name: str,
    arch: tuple[int, int],
    ltoir: bool = False,
    options: tuple[str, ...] = (),
    include: tuple[str, ...] = (),
) -> bytes:
    """Compile one CUDA C/C++ translation unit ``name`` for ``sm_XY``: PTX text (as bytes)
    or, with ``ltoir``, LTO-IR for nvJitLink's link-time optimisation.  ``include``:
    directories searched for ``#include`` after the toolkit's headers."""
    nvrtc = libs.nvrtc_module()
    src = source.encode() if isinstance(source, str) else bytes(source)
    major, minor = arch[:2]
    dirs = (*libs.cuda_include_dirs(), *include)
    opts = [f"-arch=compute_{major}{minor}", "-rdc=true", "-default-device"]
    opts += [f"-I{d}" for d in dirs]
    opts += options
    if ltoir:
        opts.append("-dlto")
    err, prog = nvrtc.nvrtcCreateProgram(src, name.encode(), 0, [], [])
    _check(nvrtc, err, "nvrtcCreateProgram")
    try:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise NVRTCError(
                f"NVRTC could not compile '{name}' for sm_{major}{minor} "
                f"({err.name}; options {' '.join(opts)})",
                _log(nvrtc, prog),
            )
        size_fn, get_fn = (
            (nvrtc.nvrtcGetLTOIRSize, nvrtc.nvrtcGetLTOIR)
            if ltoir
            else (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX)
        )
        err, size = size_fn(prog)
        _check(nvrtc, err, "nvrtcGet*Size")
        buf = b" " * size
        (err,) = get_fn(prog, buf)
        _check(nvrtc, err, "nvrtcGet*")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return buf if ltoir else buf.rstrip(b"\0")


def _log(nvrtc, prog) -> str:
    try:
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        buf = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, buf)
        return buf.rstrip(b"\0").decode(errors="replace")
    except Exception as exc:  # noqa: BLE001 - keep the compile failure visible
        return f"(could not read the NVRTC log: {exc})"
