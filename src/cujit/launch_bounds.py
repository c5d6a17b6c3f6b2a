"""``jit(launch_bounds=...)`` at launch: a block larger than the kernel's bound is refused.

The bound is compiled into the kernel (PTX ``.maxntid``), so the driver refuses such a
launch with ``CUDA_ERROR_INVALID_VALUE``; cujit checks it before launching, on both
targets, and raises ``LaunchBoundsError`` naming the kernel and both sizes.  The error is
a ``CudaDriverError`` (numba's ``CudaAPIError``) and, where cuda-core is installed, an
instance of cuda-core's ``CUDAError``, the class numba-cuda's launches raise.
"""

from __future__ import annotations

from cujit.runtime.driver import CudaDriverError


def _cuda_core_error() -> tuple[type, ...]:
    try:
        from cuda.core._utils.cuda_utils import CUDAError
    except ImportError:  # an older or newer cuda-core: cujit's own class alone
        return ()
    return (CUDAError,)


class LaunchBoundsError(CudaDriverError, *_cuda_core_error()):
    """A launch of more threads per block than the kernel's ``launch_bounds``."""


def check_block(kernel: str, block, max_threads: int) -> None:
    """Refuse ``block`` (an int or a 1-3 tuple) above ``max_threads`` threads."""
    dims = block if isinstance(block, tuple) else (block,)
    threads = 1
    for d in dims:
        threads *= int(d)
    if threads > max_threads:
        raise LaunchBoundsError(
            "cuLaunchKernel",
            1,
            "CUDA_ERROR_INVALID_VALUE",
            f"kernel {kernel!r} was launched with {threads} threads per block, more than "
            f"its launch_bounds allow ({max_threads}): use blocks of at most {max_threads} "
            "threads, or raise the bound",
        )
