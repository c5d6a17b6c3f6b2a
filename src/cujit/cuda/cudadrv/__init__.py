"""numba's ``cuda.cudadrv`` namespace, with cujit's own objects: ``driver`` (streams,
contexts, devices, driver errors, raw copies), ``devicearray`` (device arrays and their
constructors), ``devices`` (contexts by device), ``runtime`` and ``nvrtc`` (toolkit
versions and architectures) and ``error``.  The names are numba's so that code reaching
through ``cuda.cudadrv`` runs; what they do is cujit's (``cujit.runtime``)."""

from cujit.cuda.cudadrv import devicearray, devices, driver, error, nvrtc, runtime  # noqa: F401
