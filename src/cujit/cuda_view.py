"""The CUDA compilation of a kernel that runs on the CPU target, for its inspection.

numba's inspection methods describe a kernel's CUDA code: ``inspect_llvm`` its NVVM IR,
``inspect_asm`` its PTX, ``inspect_sass`` the cubin's SASS.  A kernel on the CPU target
runs host code, but cujit compiles PTX and cubins without a GPU (libNVVM and nvJitLink),
so its inspection answers as on a GPU: a ``CudaView`` compiles the same function for the
same argument types and options with the CUDA target, for the compute capability the
CPU device reports (``CUJIT_ARCH`` when set), once per compute capability and on first
use only: launching a CPU-target kernel never pays for it.  The resource queries read
what ptxas allocates for that code (registers, local and constant memory).
"""

from __future__ import annotations

import dataclasses
import re
import threading

from cujit import config, forksafe
from cujit.options import Options

_USER_CONST = r"(\d+) bytes cmem\[3\]"


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
        self._resources: dict[tuple, dict[str, int]] = {}
        self._lock = forksafe.renewed(threading.Lock())

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

    def options(self, cc=None) -> Options:
        """The CUDA target's options the view compiles with for ``cc``."""
        arch = tuple(cc) if cc else default_arch()
        return dataclasses.replace(self._options, arch=arch)

    def resources(self, cc=None) -> dict[str, int]:
        """What ptxas allocates for the CUDA code (nvJitLink's ``-verbose`` report), under
        the driver's names: ``num_regs``, ``local_bytes`` (per thread: the stack frame
        and any local memory beyond it) and ``const_bytes`` (the module's user constant
        bank, ``cmem[3]``: ``cuda.const`` arrays, string constants)."""
        from cujit.report.resources import link_resources

        result = self.result(cc)
        arch = tuple(cc) if cc else default_arch()
        with self._lock:
            found = self._resources.get(arch)
            if found is None:
                used = link_resources(result.ptx, arch, result.symbol)
                found = {
                    "num_regs": used.registers or 0,
                    "local_bytes": (used.stack_frame or 0) + (used.local or 0),
                    # The module's line; ptxas and nvJitLink may both print it.
                    "const_bytes": max(map(int, re.findall(_USER_CONST, used.log)), default=0),
                }
                self._resources[arch] = found
        return found


__all__ = ["CudaView", "default_arch"]
