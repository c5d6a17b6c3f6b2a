"""The CUDA target: NVVM IR for libNVVM, as a :class:`cujit.targets.Target`.

    from cujit.targets.cuda import CUDA_TARGET

Its tables are ``intrinsics.INTRINSICS`` and ``libdevice.LIBDEVICE``.  A kernel is
marked by ``!nvvm.annotations`` and the module carries ``!nvvmir.version``
(NVVM IR spec, "Metadata" / "Versioning").
"""

from __future__ import annotations

import dataclasses
import functools

from llvmlite import ir as ll

from cujit.targets import Target
from cujit.targets.cuda.half import HALF_LOWERINGS
from cujit.targets.cuda.intrinsics import INTRINSICS
from cujit.targets.cuda.libdevice import FAST_LIBDEVICE, FAST_TANH, LIBDEVICE

TRIPLE = "nvptx64-nvidia-cuda"
# The data layout the NVVM IR spec prescribes for 64-bit NVPTX ("Data Layout").
DATA_LAYOUT = (
    "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128"
    "-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
)
GLOBAL_ADDRSPACE = 1
SHARED_ADDRSPACE = 3  # NVVM IR spec, "Address Spaces": 1 global, 3 shared, 4 constant, 5 local
# NVVM IR version 2.0 (the typed-pointer LLVM 7 dialect) and debug-info version 3.1;
# libNVVM 12.x and 13.x accept it (libNVVM 13.5 reports 2.0 / 3.2 as its own).
NVVM_IR_VERSION = (2, 0, 3, 1)


def annotate_kernel(module: ll.Module, fn: ll.Function) -> None:
    """Mark ``fn`` as a kernel entry point and stamp the NVVM IR version."""
    i32 = ll.IntType(32)
    module.add_named_metadata(
        "nvvm.annotations", [fn, ll.MetaDataString(module, "kernel"), ll.Constant(i32, 1)]
    )
    stamp_version(module)


def stamp_version(module: ll.Module) -> None:
    """The NVVM IR version every module of a libNVVM program carries."""
    if "nvvmir.version" not in module.namedmetadata:
        i32 = ll.IntType(32)
        module.add_named_metadata("nvvmir.version", [ll.Constant(i32, v) for v in NVVM_IR_VERSION])


CUDA_TARGET = Target(
    name="cuda",
    triple=TRIPLE,
    data_layout=DATA_LAYOUT,
    intrinsics=INTRINSICS,
    math=LIBDEVICE,
    generic_addrspace=0,
    global_addrspace=GLOBAL_ADDRSPACE,
    shared_addrspace=SHARED_ADDRSPACE,
    kernel_metadata=annotate_kernel,
    callee_module=stamp_version,  # libNVVM links a device function's own module
    half=HALF_LOWERINGS,
)


@functools.cache
def cuda_target(arch: tuple = (9, 0), fastmath: bool = False) -> Target:
    """The CUDA target for compute capability ``arch``: ``CUDA_TARGET`` itself unless
    ``fastmath``, whose math table takes the fast variants (``libdevice.FAST_LIBDEVICE``,
    and the hardware tanh from sm_75)."""
    if not fastmath:
        return CUDA_TARGET
    fast = dict(FAST_LIBDEVICE)
    if tuple(arch[:2]) >= (7, 5):
        fast.update(FAST_TANH)
    return dataclasses.replace(CUDA_TARGET, math={**LIBDEVICE, **fast}, fastmath=True)


__all__ = [
    "CUDA_TARGET",
    "DATA_LAYOUT",
    "NVVM_IR_VERSION",
    "TRIPLE",
    "annotate_kernel",
    "cuda_target",
]
