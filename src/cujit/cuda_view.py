"""The CUDA compilation of a kernel that runs on the CPU target, for its inspection.

numba's inspection methods describe a kernel's CUDA code: ``inspect_llvm`` its NVVM IR,
``inspect_asm`` its PTX, ``inspect_sass`` the cubin's SASS.  A kernel on the CPU target
runs host code, but cujit compiles PTX and cubins without a GPU (libNVVM and nvJitLink),
so its inspection answers as on a GPU: a ``CudaView`` compiles the same function for the
same argument types and options with the CUDA target, for the compute capability the
CPU device reports (``CUJIT_ARCH`` when set), once per compute capability and on first
use only: launching a CPU-target kernel never pays for it.
"""

from __future__ import annotations

import dataclasses
import threading

from cujit import config
from cujit.options import Options


def default_arch() -> tuple[int, int]:
    """The compute capability a CPU-target kernel's CUDA code is shown for."""
    from cujit.targets.cpu.device import COMPUTE_CAPABILITY

    arch = config.ARCH.get()
    return tuple(arch) if arch else COMPUTE_CAPABILITY


class CudaView:
    """The CUDA compile of one CPU-target specialisation (``Specialization.cuda_view``)."""

    def __init__(self, pyfunc, arg_types: tuple, options: Options) -> None:
        self._pyfunc = pyfunc
        self._arg_types = tuple(arg_types)
        # The CUDA target's own defaults where the CPU target has its own: bounds checks
        # (None: the target's default) stay as the user gave them.
        self._options = dataclasses.replace(options, target="cuda", coarsen=0)
        self._results: dict[tuple, object] = {}
        self._lock = threading.Lock()

    def result(self, cc=None):
        """The ``pipeline.CompileResult`` (every stage, to the cubin) for ``cc`` (a
        ``(major, minor)`` pair; default: ``default_arch()``)."""
        arch = tuple(cc) if cc else default_arch()
        with self._lock:  # one compile per architecture, whichever thread asks first
            found = self._results.get(arch)
            if found is None:
                from cujit.pipeline import compile_kernel

                options = dataclasses.replace(self._options, arch=arch)
                found = compile_kernel(self._pyfunc, self._arg_types, options)
                self._results[arch] = found
        return found


__all__ = ["CudaView", "default_arch"]
