"""A kernel's resource use, from the linker, and its occupancy, from that and the
architecture's limits (no GPU needed).

nvJitLink with ``-verbose`` reports, per entry, what ptxas allocated: registers,
stack frame, spill stores and loads, static shared, constant bank 0 and local
memory.  Occupancy follows the CUDA occupancy calculator's rules: registers are
allocated per warp in units of 256, shared memory per block in units of 128 bytes
plus the 1 KiB each block reserves on sm_80 and later, and a block's count is
bounded by warps, registers, shared memory and the blocks-per-SM limit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from cujit.frozen import frozen


@frozen
class ArchLimits:
    """Per-SM limits of one compute capability (CUDA C Programming Guide, "Compute
    Capabilities", table of technical specifications)."""

    max_warps: int
    max_blocks: int
    registers: int = 65536
    max_threads_per_block: int = 1024
    max_regs_per_thread: int = 255
    reg_unit: int = 256  # registers are allocated per warp in multiples of this
    shared_per_sm: int = 0  # bytes usable by blocks (the carve-out's maximum)
    shared_unit: int = 128
    shared_reserved: int = 1024  # per block, sm_80 and later


ARCH_LIMITS = {
    (7, 0): ArchLimits(64, 32, shared_per_sm=96 * 1024, shared_reserved=0),
    (7, 5): ArchLimits(32, 16, shared_per_sm=64 * 1024, shared_reserved=0),
    (8, 0): ArchLimits(64, 32, shared_per_sm=164 * 1024),
    (8, 6): ArchLimits(48, 16, shared_per_sm=100 * 1024),
    (8, 9): ArchLimits(48, 24, shared_per_sm=100 * 1024),
    (9, 0): ArchLimits(64, 32, shared_per_sm=228 * 1024),
    (10, 0): ArchLimits(64, 32, shared_per_sm=228 * 1024),
    (12, 0): ArchLimits(48, 32, shared_per_sm=100 * 1024),
}
BLOCK_SIZES = (64, 128, 256, 512, 1024)


@dataclass
class Resources:
    """What the linker allocated for one entry (None: not reported)."""

    registers: int | None = None
    stack_frame: int | None = None  # bytes of local memory per thread for the stack
    spill_stores: int | None = None
    spill_loads: int | None = None
    shared: int | None = None  # static shared memory, bytes per block
    constant: int | None = None  # constant bank 0 (parameters and driver data), bytes
    local: int | None = None  # local memory beyond the stack frame, bytes per thread
    log: str = ""
    notes: list[str] = field(default_factory=list)


_PATTERNS = {
    "registers": r"[Uu]sed (\d+) registers",
    "stack_frame": r"(\d+) bytes stack frame",
    "spill_stores": r"(\d+) bytes spill stores",
    "spill_loads": r"(\d+) bytes spill loads",
    "shared": r"(\d+) bytes smem",
    "constant": r"(\d+) bytes cmem\[0\]",
    "local": r"(\d+) bytes lmem",
}


def parse_info_log(log: str, symbol: str) -> Resources:
    """The resources of entry ``symbol`` from nvJitLink's (ptxas') verbose info log."""
    res = Resources(log=log)
    part = _entry_part(log, symbol)
    for name, pat in _PATTERNS.items():
        m = re.search(pat, part)
        if m:
            setattr(res, name, int(m.group(1)))
    return res


def _entry_part(log: str, symbol: str) -> str:
    """The log's lines about ``symbol``: from its first mention to the next entry's."""
    lines = log.splitlines()
    start = next((i for i, ln in enumerate(lines) if symbol in ln), None)
    if start is None:
        return log
    out = []
    for ln in lines[start:]:
        if (
            out
            and ("Compiling entry function" in ln or "Function properties for" in ln)
            and symbol not in ln
        ):
            break
        out.append(ln)
    return "\n".join(out)


def link_resources(ptx: str, arch: tuple[int, int], symbol: str) -> Resources:
    """Link ``ptx`` again with ``-verbose`` and read the entry's resources from the log."""
    from cujit.ptx import libs

    jl = libs.nvjitlink_module()
    opts = [f"-arch=sm_{arch[0]}{arch[1]}", "-verbose"]
    data = ptx.encode()
    handle = jl.create(len(opts), opts)
    try:
        jl.add_data(handle, jl.InputType.PTX, data, len(data), "kernel.ptx")
        jl.complete(handle)
        size = jl.get_info_log_size(handle)
        buf = bytearray(size)
        jl.get_info_log(handle, buf)
    finally:
        jl.destroy(handle)
    return parse_info_log(bytes(buf).rstrip(b"\0").decode(errors="replace"), symbol)


@frozen
class Occupancy:
    block_size: int
    blocks_per_sm: int
    occupancy: float  # active warps / the SM's maximum
    limiter: str  # what bounds blocks_per_sm


def occupancy(
    res: Resources, arch: tuple[int, int], block_size: int, dynamic_shared: int = 0
) -> Occupancy:
    """Resident blocks per SM and occupancy at ``block_size`` threads per block."""
    lim = (
        ARCH_LIMITS.get(tuple(arch)) or ARCH_LIMITS[max(a for a in ARCH_LIMITS if a <= tuple(arch))]
    )
    warps = math.ceil(block_size / 32)
    if block_size > lim.max_threads_per_block:
        return Occupancy(block_size, 0, 0.0, "block size")
    bounds = {"warps": lim.max_warps // warps, "blocks": lim.max_blocks}
    regs = res.registers or 0
    if regs:
        per_warp = math.ceil(regs * 32 / lim.reg_unit) * lim.reg_unit
        bounds["registers"] = (lim.registers // per_warp) // warps
    shared = (res.shared or 0) + dynamic_shared
    if shared:
        per_block = math.ceil((shared + lim.shared_reserved) / lim.shared_unit) * lim.shared_unit
        bounds["shared memory"] = lim.shared_per_sm // per_block
    limiter = min(bounds, key=lambda k: (bounds[k], k != "blocks"))
    blocks = bounds[limiter]
    return Occupancy(block_size, blocks, blocks * warps / lim.max_warps, limiter)


def occupancy_table(res: Resources, arch: tuple[int, int]) -> list[Occupancy]:
    return [occupancy(res, arch, n) for n in BLOCK_SIZES]
