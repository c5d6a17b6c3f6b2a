"""The CUDA driver side of cujit: devices, memory, modules, streams, launch.

It imports nothing from the compiler: the one shared contract is the kernel
parameter layout in ``cujit.abi``.  ``cuda.bindings.driver`` is imported on
first use, so importing this package needs no GPU.

    from cujit.runtime import launch, load_module

    fn = load_module(cubin).get_function("saxpy")
    packer = launch.get_packer(kinds)              # once per specialisation
    values, writebacks = launch.prepare_args(arg_types, args, stream)
    launch.launch(fn, grid, block, stream, shared_bytes, packer, values)
    launch.finish_writebacks(writebacks, stream)

The submodules ``launch`` and ``stream`` keep those names here; the functions
of the same names are ``launch.launch`` and ``stream.stream``.
"""

# The submodules, not the functions of the same names.
from cujit.runtime import launch, stream
from cujit.runtime.args import Writeback, finish_writebacks, prepare_args
from cujit.runtime.context import (
    Context,
    Device,
    compute_capability_or,
    current_device_id,
    device_count,
    get_context,
    get_device,
    select_device,
    synchronize,
)
from cujit.runtime.driver import CudaDriverError, check, driver_version, is_available
from cujit.runtime.launch import (
    ParamPacker,
    check_config,
    get_packer,
    launch_with_args,
    normalize_dims,
)
from cujit.runtime.memory import (
    DeviceArray,
    DeviceBuffer,
    DeviceNDArray,
    as_device_array,
    device_array,
    device_array_like,
    is_cuda_array,
    to_device,
)
from cujit.runtime.module import Function, Module, cubin_arch, load_cubin, load_module
from cujit.runtime.stream import Stream, default_stream

__all__ = [
    "Context",
    "CudaDriverError",
    "Device",
    "DeviceArray",
    "DeviceBuffer",
    "DeviceNDArray",
    "Function",
    "Module",
    "ParamPacker",
    "Stream",
    "Writeback",
    "as_device_array",
    "check",
    "check_config",
    "compute_capability_or",
    "cubin_arch",
    "current_device_id",
    "default_stream",
    "device_array",
    "device_array_like",
    "device_count",
    "driver_version",
    "finish_writebacks",
    "get_context",
    "get_device",
    "get_packer",
    "is_available",
    "is_cuda_array",
    "launch",
    "launch_with_args",
    "load_cubin",
    "load_module",
    "normalize_dims",
    "prepare_args",
    "select_device",
    "stream",
    "synchronize",
    "to_device",
]
