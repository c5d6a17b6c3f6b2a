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
    every = list(inputs) if ptx is None else [("ptx", ptx, name), *inputs]
    lto = any(kind == "ltoir" for kind, _, _ in every)
    return _link(every, arch, (*options, *(("-lto",) if lto else ())), "cubin")


def link_lto_ptx(
    inputs: tuple[tuple[str, bytes, str], ...],
    arch: tuple[int, int],
    options: tuple[str, ...] = (),
) -> str:
    """Link LTO-IR ``inputs`` (kind, data, name) with link-time optimisation and return
    the optimised PTX nvJitLink makes of the whole program (``-lto -ptx``): what
    numba's ``inspect_lto_ptx`` shows."""
    ptx = _link(list(inputs), arch, (*options, "-lto", "-ptx"), "ptx")
    return ptx.rstrip(b"\0").decode(errors="replace")


def _link(every: list, arch, options: tuple[str, ...], output: str) -> bytes:
    """nvJitLink over ``every`` (kind, data, name) for ``arch``: the linked cubin, or
    with ``output`` "ptx" the linked PTX (as bytes)."""
    jl = libs.nvjitlink_module()
    major, minor, *variant = arch  # (9, 0, "a"): sm_90a
    opts = list(dict.fromkeys([f"-arch=sm_{major}{minor}{''.join(variant)}", *options]))
    handle = jl.create(len(opts), opts)
    try:
        current = every[0][2] if every else "<nothing>"
        try:
            for kind, data, current in every:
                data = data.encode() if isinstance(data, str) else bytes(data)
                jl.add_data(
                    handle, getattr(jl.InputType, INPUT_TYPES[kind]), data, len(data), current
                )
            current = every[0][2]
            jl.complete(handle)
        except jl.nvJitLinkError as exc:
            raise LinkError(
                f"nvJitLink could not link '{current}' for sm_{major}{minor} ({exc})",
                _log(jl, handle),
            ) from None
        if output == "ptx":
            out = bytearray(jl.get_linked_ptx_size(handle))
            jl.get_linked_ptx(handle, out)
        else:
            out = bytearray(jl.get_linked_cubin_size(handle))
            jl.get_linked_cubin(handle, out)
    finally:
        jl.destroy(handle)
    return bytes(out)


def _log(jl, handle: int) -> str:
    try:
        size = jl.get_error_log_size(handle)
        buf = bytearray(size)
        jl.get_error_log(handle, buf)
        return bytes(buf).rstrip(b"\0").decode(errors="replace")
    except Exception as exc:  # noqa: BLE001 - keep the original failure visible
        return f"(could not read the nvJitLink log: {exc})"
