"""numba.cuda's namespace, served by cujit: change ``from numba import cuda`` to
``from cujit import cuda`` and kernels run unchanged.

Host-side functions (``to_device``, ``synchronize``...) load the CUDA driver on
first use; importing this module loads nothing heavy.
"""

from __future__ import annotations

from cujit import types  # noqa: F401  (cuda.types.int32, as in numba)
from cujit.arghints import In, InOut, Out  # noqa: F401
from cujit.device_api import (  # noqa: F401
    activemask,
    all_sync,
    any_sync,
    atomic,
    ballot_sync,
    blockDim,
    blockIdx,
    brev,
    cbrt,
    cg,
    clz,
    const,
    cp_async,
    cp_async_commit_group,
    cp_async_wait_all,
    cp_async_wait_group,
    eq_sync,
    ffs,
    fma,
    fp16,
    grid,
    gridDim,
    gridsize,
    laneid,
    lanemask_lt,
    ldca,
    ldcg,
    ldcs,
    ldcv,
    ldlu,
    ldmatrix,
    literal_unroll,
    local,
    match_all_sync,
    match_any_sync,
    mma,
    nanosleep,
    pack_bf16x2,
    pack_f16x2,
    popc,
    selp,
    shared,
    shfl_down_sync,
    shfl_sync,
    shfl_up_sync,
    shfl_xor_sync,
    stcg,
    stcs,
    stmatrix,
    stwb,
    stwt,
    syncthreads,
    syncthreads_and,
    syncthreads_count,
    syncthreads_or,
    syncwarp,
    threadfence,
    threadfence_block,
    threadfence_system,
    threadIdx,
    to_tf32,
    unpack_bf16x2,
    unpack_f16x2,
    warpsize,
)
from cujit.dispatcher import jit  # noqa: F401
from cujit.types.core import (  # noqa: F401
    b1,
    bfloat16,
    bool_,
    boolean,
    byte,
    c8,
    c16,
    complex64,
    complex128,
    double,
    f2,
    f4,
    f8,
    float16,
    float32,
    float64,
    float_,
    i1,
    i2,
    i4,
    i8,
    int8,
    int16,
    int32,
    int64,
    intp,
    u1,
    u2,
    u4,
    u8,
    uint8,
    uint16,
    uint32,
    uint64,
    uintp,
    void,
)

_RUNTIME_NAMES = {
    "to_device": "cujit.runtime.memory",
    "device_array": "cujit.runtime.memory",
    "device_array_like": "cujit.runtime.memory",
    "DeviceNDArray": "cujit.runtime.memory",
    "is_cuda_array": "cujit.runtime.memory",
    "synchronize": "cujit.runtime.context",
    "stream": "cujit.runtime.stream",
    "default_stream": "cujit.runtime.stream",
    "legacy_default_stream": "cujit.runtime.stream",
    "per_thread_default_stream": "cujit.runtime.stream",
    "external_stream": "cujit.runtime.stream",
    "as_cuda_array": "cujit.runtime.interop",
    "from_cuda_array_interface": "cujit.runtime.interop",
    "open_ipc_array": "cujit.runtime.ipc",
    "from_dlpack": "cujit.runtime.interop",
    "pinned_array": "cujit.runtime.host",
    "pinned_array_like": "cujit.runtime.host",
    "pinned": "cujit.runtime.host",
    "mapped_array": "cujit.runtime.mapped",
    "mapped_array_like": "cujit.runtime.mapped",
    "managed_array": "cujit.runtime.mapped",
    "event": "cujit.runtime.event",
    "event_elapsed_time": "cujit.runtime.event",
    "profile_start": "cujit.runtime.profiling",
    "profile_stop": "cujit.runtime.profiling",
    "profiling": "cujit.runtime.profiling",
    "graph": "cujit.runtime.graph",
    "gpus": "cujit.runtime.devices",
    "list_devices": "cujit.runtime.devices",
    "get_current_device": "cujit.runtime.devices",
    "select_device": "cujit.runtime.context",
    "current_context": "cujit.runtime.context",
    "defer_cleanup": "cujit.runtime.context",
    "close": "cujit.runtime.context",
    "detect": "cujit.runtime.devices",
    "is_bfloat16_supported": "cujit.cuda.api",
    "is_fp8_supported": "cujit.cuda.api",
    "vectorize": "cujit.ufunc",
    "guvectorize": "cujit.ufunc",
    "reduce": "cujit.ufunc",
    "Reduce": "cujit.ufunc",
}

# The compiler's entry points and the foreign-code helpers, which few programs use:
# imported on first use too, and listed by ``dir(cuda)`` as the names above are not.
_LIBRARY_NAMES = {
    **dict.fromkeys(
        "compile compile_all compile_for_current_device compile_ptx "
        "compile_ptx_for_current_device".split(),
        "cujit.compile_api",
    ),
    "declare_device": "cujit.foreign",
    **dict.fromkeys(
        "LTOIR Archive Cubin CUSource Fatbin LinkableCode Object PTXSource".split(),
        "cujit.linking",
    ),
}


def is_available() -> bool:
    """True when a CUDA driver and at least one GPU are present."""
    from cujit.runtime import context

    return context.is_available()


# Under CUJIT_TARGET=cpu these come from the CPU target: device arrays in host memory.
_CPU_NAMES = {
    name: "cujit.targets.cpu.memory"
    for name in (
        "to_device",
        "device_array",
        "device_array_like",
        "synchronize",
        "mapped_array",
        "mapped_array_like",
        "managed_array",
    )
}
_CPU_NAMES.update(
    {
        name: "cujit.targets.cpu.interop"
        for name in (
            "as_cuda_array",
            "from_cuda_array_interface",
            "is_cuda_array",
            "open_ipc_array",
        )
    }
)
_CPU_NAMES.update(
    {
        name: "cujit.targets.cpu.streams"
        for name in (
            "stream",
            "default_stream",
            "legacy_default_stream",
            "per_thread_default_stream",
            "external_stream",
            "event",
            "event_elapsed_time",
            "pinned_array",
            "pinned_array_like",
            "pinned",
            "profile_start",
            "profile_stop",
            "profiling",
        )
    }
)
_CPU_NAMES.update(
    {
        name: "cujit.targets.cpu.device"
        for name in (
            "gpus",
            "list_devices",
            "get_current_device",
            "current_context",
            "defer_cleanup",
            "select_device",
            "detect",
            "close",
        )
    }
)


class NotSupportedError(AttributeError):
    """A numba.cuda name that cujit does not provide yet (``docs/numba-api.md``)."""


# numba.cuda names cujit does not provide yet: asking for one, on the host or in a
# kernel, says so and what it is, instead of a bare "no attribute".
NOT_SUPPORTED: dict[str, str] = {}


# numba.cuda's submodules that cujit has: cuda.devicearray, cuda.devices and cuda.driver
# are numba's aliases of cuda.cudadrv's modules.
_SUBMODULES = {
    "random": "cujit.cuda.random",
    "libdevice": "cujit.cuda.libdevice",
    "cudadrv": "cujit.cuda.cudadrv",
    "devicearray": "cujit.cuda.cudadrv.devicearray",
    "devices": "cujit.cuda.cudadrv.devices",
    "driver": "cujit.cuda.cudadrv.driver",
    "bf16": "cujit.cuda.bf16",
    "fp8": "cujit.cuda.fp8",
    "wmma": "cujit.cuda.wmma",  # 16x16x16 tiles on tensor cores
    # numba's config (numba.cuda.config is numba.cuda.core.config) and typing context.
    "config": "cujit.numba_config",
    "target": "cujit.cuda.target",
}


def __dir__() -> list[str]:
    return sorted({*globals(), *_LIBRARY_NAMES})


def __getattr__(name: str):
    # The host API first: ``cuda.to_device`` runs before the driver starts, so its
    # lookup must not import more than its module (the vector types' 40 classes).
    from cujit import config

    module = (
        (_CPU_NAMES if config.TARGET.get() == "cpu" else {}).get(name)
        or _RUNTIME_NAMES.get(name)
        or _LIBRARY_NAMES.get(name)
    )
    if module is not None:
        import importlib

        value = getattr(importlib.import_module(module), name)
        if module.startswith("cujit.runtime."):  # without a GPU: a short error naming the call
            from cujit.runtime.boundary import wrap

            value = wrap(module, name, value)
        globals()[name] = value  # later lookups skip this hook
        return value
    if name in _SUBMODULES:  # imported on first use
        import importlib

        value = importlib.import_module(_SUBMODULES[name])
        globals()[name] = value
        return value
    if name.startswith("__"):  # a protocol probe (``__cuda_array_interface__``...): no
        raise AttributeError(f"cujit.cuda has no attribute {name!r}")
    from cujit import vector_types

    if name in vector_types.NAMES:  # cuda.float4, cuda.int32x2...
        return vector_types.NAMES[name]
    if name in NOT_SUPPORTED:
        raise NotSupportedError(
            f"numba.cuda's {name!r} ({NOT_SUPPORTED[name]}) is not "
            "supported by cujit yet; see docs/numba-api.md"
        )
    raise AttributeError(f"cujit.cuda has no attribute {name!r}")
