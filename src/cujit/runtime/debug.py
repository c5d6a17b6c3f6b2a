"""Debug-mode kernels: turn the error record a failed check left into a Python exception.

A kernel compiled with ``jit(debug=True)`` reports its first failing bounds
check, ``assert`` or ``raise`` in a device global (layout: ``cujit.abi``'s
``DEBUG_*``).  After each launch of such a kernel the dispatcher calls
:func:`check_module`, which waits for the launch, reads the record, zeroes it for
the next launch and, if a code was set, raises::

    IndexError: In function 'scale', file /home/me/scale.py, line 12, tid=[0, 0, 2]
    ctaid=[0, 0, 2]: index 10 is out of bounds for axis 0 with size 10
        out[i] = 2 * x[i]

(numba's message: its first line on one line; the thread and block are listed z, y, x,
as numba lists them, and the source line follows).

The kernel returned instead of trapping, so the context stays usable: the next
launch runs normally.  ``sites`` (code -> ``abi.ErrorSite``) comes with the
compiled kernel; this module imports nothing from the compiler.
"""

from __future__ import annotations

import ctypes
import linecache

from cujit.abi import (
    DEBUG_AXIS,
    DEBUG_BLOCK,
    DEBUG_CODE,
    DEBUG_INDEX,
    DEBUG_RECORD_SYMBOL,
    DEBUG_RECORD_WORDS,
    DEBUG_SIZE,
    DEBUG_THREAD,
    ErrorSite,
)
from cujit.diagnostics import KernelFailure

RECORD_BYTES = 8 * DEBUG_RECORD_WORDS


def check_module(module, sites: dict[int, ErrorSite], kernel: str, stream=0) -> None:
    """After a launch on the GPU: raise what the kernel reported, if anything.

    Synchronises ``stream`` first (debug mode trades asynchrony for reports that
    point at the launch that failed).
    """
    from cujit.runtime.driver import call
    from cujit.runtime.stream import as_cu_stream

    handle = getattr(module, "_debug_record", None)
    if handle is None:
        dptr, size = call("cuModuleGetGlobal", module.handle, DEBUG_RECORD_SYMBOL.encode())
        if size != RECORD_BYTES:
            raise AssertionError(f"debug record of {size} bytes, expected {RECORD_BYTES}")
        handle = module._debug_record = dptr
    call("cuStreamSynchronize", as_cu_stream(stream))
    words = (ctypes.c_int64 * DEBUG_RECORD_WORDS)()
    call("cuMemcpyDtoH", ctypes.addressof(words), handle, RECORD_BYTES)
    if words[DEBUG_CODE] == 0:
        return
    call("cuMemsetD8", handle, 0, RECORD_BYTES)  # ready for the next launch
    raise_failure(list(words), sites, kernel)


def check_host(address: int, sites: dict[int, ErrorSite], kernel: str) -> None:
    """After a launch on the CPU target: the record is host memory at ``address``."""
    words = (ctypes.c_int64 * DEBUG_RECORD_WORDS).from_address(address)
    if words[DEBUG_CODE] == 0:
        return
    values = list(words)
    ctypes.memset(address, 0, RECORD_BYTES)
    raise_failure(values, sites, kernel)


def where(kernel: str, site: ErrorSite, thread: tuple, block: tuple) -> str:
    """numba's prefix of a kernel's exception: the function, file and line, and the
    failing thread and block, each listed z, y, x as numba lists them."""
    tid = list(reversed(thread))
    ctaid = list(reversed(block))
    return (
        f"In function {kernel!r}, file {site.loc.file}, line {site.loc.line}, "
        f"tid={tid} ctaid={ctaid}"
    )


def raise_failure(words: list[int], sites: dict[int, ErrorSite], kernel: str) -> None:
    """Raise the exception the record ``words`` describes; ``exc.kernel_failure`` says
    where (a ``cujit.diagnostics.KernelFailure``)."""
    site = sites.get(words[DEBUG_CODE])
    if site is None:
        raise RuntimeError(
            f"kernel {kernel!r} reported error code {words[DEBUG_CODE]}, "
            "which its compiled form does not know (a bug in cujit)"
        )
    thread = tuple(words[DEBUG_THREAD : DEBUG_THREAD + 3])
    block = tuple(words[DEBUG_BLOCK : DEBUG_BLOCK + 3])
    message = site.message
    if site.bounds:
        message = message.format(
            index=words[DEBUG_INDEX], axis=words[DEBUG_AXIS], size=words[DEBUG_SIZE]
        )
    text = f"{where(kernel, site, thread, block)}: {message}"
    source = linecache.getline(site.loc.file, site.loc.line).strip()
    if source:
        text += f"\n    {source}"
    try:
        exc = site.exc(text)
    except Exception:  # noqa: BLE001 - a class whose constructor wants other arguments
        exc = RuntimeError(f"{site.exc.__name__}: {text}")
    exc.kernel_failure = KernelFailure(kernel, site.loc, thread, block)
    raise exc


__all__ = ["check_host", "check_module", "raise_failure"]
