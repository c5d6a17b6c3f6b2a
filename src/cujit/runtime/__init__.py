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

# The package's names, each imported from its submodule at first use (PEP 562): the
# host API's first call (``cuda.to_device``) runs before the driver starts, on a fresh
# process's critical path, and loads ``memory`` and what it needs, not the launch
# path, interop, graphs or pinned memory (the compiler's warm-up loads the launch path
# beside the driver's start).  Any submodule is an attribute too (imported on first
# use); ``event``, ``graph``, ``launch`` and ``stream``, listed in ``__all__``, are the
# submodules, not the functions of the same names.
_SUBMODULES = ("event", "graph", "launch", "stream")
# submodule -> the names the package takes from it
_NAMES = {
    "args": "Writeback check_writable finish_writebacks prepare_args",
    "context": (
        "Context Device compute_capability_or current_device_id device_count "
        "device_info get_context get_device select_device synchronize"
    ),
    "devices": "GPU check_devices get_current_device gpus list_devices",
    "driver": "CudaDriverError check driver_version is_available",
    "event": "Event event_elapsed_time order_after",
    "graph": "Graph",
    "host": "is_pinned pinned pinned_array pinned_array_like",
    "interop": "as_cuda_array from_dlpack import_for_launch is_foreign_array",
    "launch": "ParamPacker check_config get_packer launch_with_args normalize_dims",
    "memory": (
        "DeviceArray DeviceBuffer DeviceNDArray as_device_array device_array "
        "device_array_like is_cuda_array to_device"
    ),
    "module": "Function Module cubin_arch load_cubin load_module",
    "stream": (
        "Stream default_stream external_stream legacy_default_stream per_thread_default_stream"
    ),
}
_WHERE = {name: module for module, names in _NAMES.items() for name in names.split()}


def __getattr__(name: str):
    import importlib
    import importlib.util

    module = _WHERE.get(name)
    if module is None:  # a submodule (``cujit.runtime.args``, as the package held them all)
        if name.startswith("_") or importlib.util.find_spec(f"cujit.runtime.{name}") is None:
            raise AttributeError(f"module 'cujit.runtime' has no attribute {name!r}")
        module = name
    found = importlib.import_module(f"cujit.runtime.{module}")
    value = found if module == name else getattr(found, name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES, *_WHERE})


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
