"""PTX -> cubin through nvJitLink.

Why never hand PTX to the driver: libNVVM from PyPI may be newer than the
machine's driver and emit a PTX ISA the driver's JIT refuses
(CUDA_ERROR_UNSUPPORTED_PTX_VERSION).  A cubin built by a newer nvJitLink
still loads under CUDA's minor-version compatibility, so stage 7 always
ends in SASS for one exact ``sm_XY``.
"""

from __future__ import annotations

from cujit.diagnostics import CujitError
from cujit.ptx import libs


class LinkError(CujitError):
    """nvJitLink could not assemble or link; the message carries its error log."""

    def __init__(self, message: str, log: str):
        self.log = log
        super().__init__(f"{message}\n--- nvJitLink log ---\n{log.strip() or '(empty log)'}")


def link_cubin(
    ptx: str | bytes,
    arch: tuple[int, int],
    options: tuple[str, ...] = (),
    name: str = "cujit_module.ptx",
) -> bytes:
    """Assemble ``ptx`` with nvJitLink into a cubin (an ELF image) for ``sm_XY``."""
    jl = libs.nvjitlink_module()
    major, minor = arch
    opts = [f"-arch=sm_{major}{minor}", *options]
    data = ptx.encode() if isinstance(ptx, str) else bytes(ptx)
    handle = jl.create(len(opts), opts)
    try:
        try:
            jl.add_data(handle, jl.InputType.PTX, data, len(data), name)
            jl.complete(handle)
        except jl.nvJitLinkError as exc:
            raise LinkError(
                f"nvJitLink could not link '{name}' for sm_{major}{minor} ({exc})",
                _log(jl, handle),
            ) from None
        size = jl.get_linked_cubin_size(handle)
        cubin = bytearray(size)
        jl.get_linked_cubin(handle, cubin)
    finally:
        jl.destroy(handle)
    return bytes(cubin)


def _log(jl, handle: int) -> str:
    try:
        size = jl.get_error_log_size(handle)
        buf = bytearray(size)
        jl.get_error_log(handle, buf)
        return bytes(buf).rstrip(b"\0").decode(errors="replace")
    except Exception as exc:  # noqa: BLE001 - keep the original failure visible
        return f"(could not read the nvJitLink log: {exc})"
