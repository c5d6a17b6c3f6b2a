"""``cuda.cudadrv.error``: the errors cujit's CUDA runtime raises, by numba's names."""

from cujit.runtime.driver import CudaDriverError, NoGPUError

CudaAPIError = CudaDriverError  # numba's name for a failed driver call
CudaSupportError = NoGPUError  # numba's name for "no usable CUDA driver or GPU"

__all__ = ["CudaAPIError", "CudaDriverError", "CudaSupportError"]
