"""The occupancy calculator: the block size that keeps a kernel's SMs fullest.

``kernel.forall(n)`` sizes its blocks with it, as numba's does, through the
driver's ``cuOccupancyMaxPotentialBlockSize`` ("CUDA Driver API", Occupancy):
given the kernel's registers and shared memory, the largest block size that
reaches the highest number of resident warps per multiprocessor.
"""

from __future__ import annotations

from cujit.runtime.driver import call


def max_potential_block_size(
    function, dynamic_shared_bytes: int = 0, block_size_limit: int = 0
) -> tuple[int, int]:
    """``(min_grid_size, block_size)`` for a loaded ``runtime.module.Function``.

    ``dynamic_shared_bytes`` is the per-block dynamic shared memory the launch
    will ask for (the same for every block size); ``block_size_limit`` 0 means
    the device's and the kernel's own limit.  ``min_grid_size`` is the fewest
    blocks that fill the device at that block size.
    """
    # No block-size -> shared-size callback: the dynamic size does not vary.
    min_grid, block = call(
        "cuOccupancyMaxPotentialBlockSize",
        function.handle,
        None,
        int(dynamic_shared_bytes),
        int(block_size_limit),
    )
    return int(min_grid), int(block)


def max_cooperative_blocks(function, threads_per_block: int, dynamic_shared_bytes: int = 0) -> int:
    """The most blocks a cooperative launch of ``function`` may have (all resident at
    once): the blocks of ``threads_per_block`` threads one multiprocessor holds, times
    the multiprocessors (``cuLaunchCooperativeKernel``'s own limit)."""
    per_sm = call(
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        function.handle,
        int(threads_per_block),
        int(dynamic_shared_bytes),
    )
    return int(per_sm) * function.device.multiprocessor_count
