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

Other libraries' arrays come in through ``interop`` (CUDA Array Interface,
DLPack) and go out through ``DeviceArray.__cuda_array_interface__`` /
``__dlpack__`` (``dlpack``); ``event``, ``graph``, ``host`` (pinned memory)
and ``devices`` (``gpus``, device checks) complete numba.cuda's host API.

The submodules ``event``, ``graph``, ``launch`` and ``stream`` keep those
names here; the functions of the same names are ``event.event``,
``graph.graph``, ``launch.launch`` and ``stream.stream``.
"""

# The submodules, not the functions of the same names.
from cujit.runtime import event, graph, launch, stream
from cujit.runtime.args import Writeback, check_writable, finish_writebacks, prepare_args
from cujit.runtime.context import (
    Context,
    Device,
    compute_capability_or,
    current_device_id,
    device_count,
    device_info,
    get_context,
    get_device,
    select_device,
    synchronize,
)
from cujit.runtime.devices import GPU, check_devices, get_current_device, gpus, list_devices
from cujit.runtime.driver import CudaDriverError, check, driver_version, is_available
from cujit.runtime.event import Event, event_elapsed_time, order_after
from cujit.runtime.graph import Graph
from cujit.runtime.host import is_pinned, pinned, pinned_array, pinned_array_like
from cujit.runtime.interop import as_cuda_array, from_dlpack, import_for_launch, is_foreign_array
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
from cujit.runtime.stream import (
    Stream,
    default_stream,
    external_stream,
    legacy_default_stream,
    per_thread_default_stream,
)

__all__ = [
    "GPU",
    "Context",
    "CudaDriverError",
    "Device",
    "DeviceArray",
    "DeviceBuffer",
    "DeviceNDArray",
    "Event",
    "Function",
    "Graph",
    "Module",
    "ParamPacker",
    "Stream",
    "Writeback",
    "as_cuda_array",
    "as_device_array",
    "check",
    "check_config",
    "check_devices",
    "check_writable",
    "compute_capability_or",
    "cubin_arch",
    "current_device_id",
    "default_stream",
    "device_array",
    "device_array_like",
    "device_count",
    "device_info",
    "driver_version",
    "event",
    "event_elapsed_time",
    "external_stream",
    "finish_writebacks",
    "from_dlpack",
    "get_context",
    "get_current_device",
    "get_device",
    "get_packer",
    "gpus",
    "graph",
    "import_for_launch",
    "is_available",
    "is_cuda_array",
    "is_foreign_array",
    "is_pinned",
    "launch",
    "launch_with_args",
    "legacy_default_stream",
    "list_devices",
    "load_cubin",
    "load_module",
    "normalize_dims",
    "order_after",
    "per_thread_default_stream",
    "pinned",
    "pinned_array",
    "pinned_array_like",
    "prepare_args",
    "select_device",
    "stream",
    "synchronize",
    "to_device",
]
