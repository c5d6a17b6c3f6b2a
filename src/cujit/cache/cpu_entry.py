"""The CPU target's cache entries: a kernel's host object code and its launch metadata.

A miss compiles every stage; MCJIT hands over the object code it made from the optimised
module (``engine.JitModule.object``), and the entry keeps it with what a launch and the
host inspection need::

    sections  object          the ELF object MCJIT loaded (machine code for this host)
              host_llvm       the kernel's LLVM IR with the runner, before optimisation
              optimized_llvm  the optimised module (inspect_asm(target="cpu") reads it)
    header    target "cpu", host (engine.host_identity), cpu (reload.kernel_state),
              record (abi.LaunchRecord without its error sites), sites (those, as data)

A hit loads the object into a fresh MCJIT engine (``reload.rebuild``): no stage runs.
Object code made for another CPU is a crash, not an error, so the key covers the host's
identity (CPU name and features, data layout, llvmlite's and LLVM's versions) and a hit
checks it again against the header: an entry that names another host, or lacks a
field, is refused with a warning and the kernel compiled again.
"""

from __future__ import annotations

import builtins
import sys
import time

from cujit.abi import ErrorSite, LaunchRecord
from cujit.diagnostics import Loc

SECTIONS = ("object", "host_llvm", "optimized_llvm")


def host_identity() -> str:
    from cujit.targets.cpu.engine import host_identity as identity

    return identity()


def sections_of(result) -> dict[str, bytes] | None:
    """The sections of ``result`` (a CPU compile), or None where MCJIT gave no object."""
    kernel = result.outputs["native"]
    code = getattr(kernel.jit, "object", None)
    if not code:
        return None
    return {
        "object": code,
        "host_llvm": kernel.llvm_ir.encode(),
        "optimized_llvm": kernel.jit.llvm_ir.encode(),
    }


def header_of(result) -> dict:
    """The CPU part of an entry's header (``compile_cached`` adds the common fields)."""
    from cujit.targets.cpu.reload import kernel_state

    record = result.record
    plain = LaunchRecord(record.symbol, record.passed, record.written, record.cooperative)
    return {
        "target": "cpu",
        "host": host_identity(),
        "cpu": kernel_state(result.outputs["native"]),
        "record": plain.to_json(),
        "sites": [_site_json(code, site) for code, site in sorted(record.debug_sites.items())],
    }


def refusal(entry, arg_types) -> str | None:
    """Why ``entry`` (whole, of this key) cannot be loaded here, or None if it can."""
    from cujit.targets.cpu.reload import valid_state

    header, sections = entry.header, entry.sections
    if header.get("target") != "cpu":
        return "it is not a CPU-target entry"
    host = header.get("host")
    if host != host_identity():
        return f"it was made for another host or LLVM ({host!r}; this one is {host_identity()!r})"
    if not all(isinstance(sections.get(s), bytes) for s in SECTIONS) or not sections["object"]:
        return "it lacks a section"
    if not valid_state(header.get("cpu")) or _sites(header.get("sites")) is None:
        return "its launch metadata is incomplete"
    try:
        sections["host_llvm"].decode()
        sections["optimized_llvm"].decode()
    except UnicodeDecodeError:
        return "its LLVM IR is not text"
    return None


def hit(name: str, entry, arg_types, start: float):
    """The ``CompileResult`` of a CPU hit: the kernel loaded from the entry's object code
    (ValueError where the object does not load: the caller compiles again)."""
    from cujit.pipeline import CompileResult
    from cujit.targets.cpu.reload import rebuild

    header, sections = entry.header, entry.sections
    sites = _sites(header["sites"])
    base = LaunchRecord.from_json(header["record"])
    record = LaunchRecord(base.symbol, base.passed, base.written, base.cooperative, sites)
    texts = (sections["host_llvm"].decode(), sections["optimized_llvm"].decode())
    try:
        kernel = rebuild(
            header["cpu"], tuple(arg_types), sections["object"], texts, record.written, sites
        )
    except (ValueError, RuntimeError, LookupError, AssertionError, OSError) as exc:
        raise ValueError(f"its object code does not load ({exc})") from None
    from cujit.cache import add_stored_outputs

    outputs = {"native": kernel}
    add_stored_outputs(header, outputs)
    return CompileResult(name, outputs, {"cache": time.perf_counter() - start}, record)


def _site_json(code: int, site: ErrorSite) -> list:
    loc, exc = site.loc, site.exc
    return [
        code,
        [loc.file, loc.line, loc.col, loc.end_col] if loc is not None else None,
        [exc.__module__, exc.__qualname__],
        site.message,
        site.bounds,
    ]


def _sites(data) -> dict[int, ErrorSite] | None:
    """The error sites an entry's header keeps, or None where one is not well formed or
    names an exception class this process does not have."""
    if not isinstance(data, list):
        return None
    out: dict[int, ErrorSite] = {}
    try:
        for code, loc, (module, qualname), message, bounds in data:
            exc = _exception_class(module, qualname)
            if exc is None or not isinstance(code, int) or not isinstance(message, str):
                return None
            where = Loc(str(loc[0]), int(loc[1]), int(loc[2]), loc[3]) if loc else None
            out[code] = ErrorSite(where, exc, message, bool(bounds))
    except (TypeError, ValueError, IndexError):
        return None
    return out


def _exception_class(module: str, qualname: str):
    """The exception class ``module.qualname`` names, if this process has it loaded
    (never imported for the purpose: an entry's header is data, not a program)."""
    owner = builtins if module == "builtins" else sys.modules.get(module)
    found = owner
    for part in str(qualname).split("."):
        found = getattr(found, part, None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return None
