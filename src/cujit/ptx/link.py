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


# A linked file's kind -> nvJitLink's input type name (``nvJitLinkInputType``).
INPUT_TYPES = {
    "ptx": "PTX",
    "ltoir": "LTOIR",
    "cubin": "CUBIN",
    "fatbin": "FATBIN",
    "o": "OBJECT",
    "a": "LIBRARY",
}


def link_cubin(
    ptx: str | bytes | None,
    arch: tuple[int, int],
    options: tuple[str, ...] = (),
    name: str = "cujit_module.ptx",
    inputs: tuple[tuple[str, bytes, str], ...] = (),
) -> bytes:
    """Assemble ``ptx`` with nvJitLink into a cubin (an ELF image) for ``sm_XY``,
    linked with ``inputs``: (kind, data, name) triples, kind a key of ``INPUT_TYPES``.
    When any input is LTO-IR, nvJitLink links with ``-lto``."""
    jl = libs.nvjitlink_module()
    major, minor, *variant = arch  # (9, 0, "a"): sm_90a
    opts = [f"-arch=sm_{major}{minor}{''.join(variant)}", *options]
    if any(kind == "ltoir" for kind, _, _ in inputs) and "-lto" not in opts:
        opts.append("-lto")
    every = list(inputs) if ptx is None else [("ptx", ptx, name), *inputs]
    handle = jl.create(len(opts), opts)
    try:
        current = name
        try:
            for kind, data, current in every:
                data = data.encode() if isinstance(data, str) else bytes(data)
                jl.add_data(
                    handle, getattr(jl.InputType, INPUT_TYPES[kind]), data, len(data), current
                )
            current = name if ptx is not None else every[0][2]
            jl.complete(handle)
        except jl.nvJitLinkError as exc:
            raise LinkError(
                f"nvJitLink could not link '{current}' for sm_{major}{minor} ({exc})",
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
