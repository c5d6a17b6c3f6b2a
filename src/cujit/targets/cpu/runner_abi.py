"""The runner's entry ABI: the launch descriptor and per-worker record that the host
(``launch.py``) fills and the compiled schedulers read, and the spacing of blocks'
buffers when a whole grid runs at once."""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.lltypes import I32, I64
from cujit.targets.cpu.intrinsics import I8P

I8PP = ll.PointerType(I8P)
# grid x y z, block x y z, dynamic shared bytes, block count, blocks per claim, next block
LAUNCH = ll.LiteralStructType([I32] * 6 + [I64] * 4)
LAUNCH_NEXT = 9
# static shared buffer, dynamic shared buffer, and for coroutines: handle slots (one
# per thread), frame slots, bytes per frame slot, frame size the kernel reports, and
# for grid sync: one "parked" byte per thread of the grid; for the warp scheduler
# (warp.py): the exchange buffers (state, mask, val, snap, result) and the record of a
# block that could not make progress (1 + its linear number, or 0)
WORKER = ll.LiteralStructType([I8P, I8P, I8PP, I8P, I64, I64, I8P, *[I8P] * 5, I64])
WORKER_FRAME_BYTES = 5
WORKER_XCHG = 7
WORKER_STUCK = 12
BLOCK_ALIGN = 64  # bytes between blocks' shared buffers in a grid-sync run: a multiple


def block_stride(nbytes: int) -> int:
    """Bytes between two blocks' slices of a shared buffer of ``nbytes`` per block."""
    return -(-nbytes // BLOCK_ALIGN) * BLOCK_ALIGN


def warp_slots(nthreads: int) -> int:
    """Exchange-buffer entries per block: whole warps, so a lane may read any lane of its
    warp's slots (the last warp of a block may be partial)."""
    return -(-nthreads // 32) * 32


def run_symbol(kernel_name: str) -> str:
    return f"{kernel_name}__cpu_run"
