"""The plain scheduler: a block's threads as a loop nest (kernels without barriers).

The kernel is ``alwaysinline``: once inlined, ``threadIdx.x`` is the inner loop's
counter and LLVM optimises the loop as a whole (vectorising it where it can).
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.targets.cpu.irloop import thread_nest


def run_threads(b: ll.IRBuilder, block: list[ll.Value], call) -> None:
    """Call the kernel for every thread of the block, z, y, x outermost first."""
    thread_nest(b, block, "tid", lambda x, y, z: call([x, y, z], []))
