"""Kernel launch: parameter packing and ``cuLaunchKernel``.

``cuLaunchKernel`` takes ``void **kernelParams``: one pointer per kernel
parameter, each to memory holding that parameter's value.  A
:class:`ParamPacker` is built once per parameter-kind list (``cujit.abi``):
a ``struct.Struct`` writes all values into one preallocated buffer, and a
ctypes array of pointers into that buffer is the ``void **`` whose address
goes to the driver.  A launch with unchanged types then costs one
``pack_into``, one dict lookup for the already-checked launch shape, and the
driver call: the cost model is CuPy's RawKernel, not numba's per-launch
ctypes objects.
"""

from __future__ import annotations

import ctypes
import operator
import struct
import threading

from cujit.abi import kept_per_argument
from cujit.diagnostics import LaunchError
from cujit.runtime import pycode
from cujit.runtime.args import finish_writebacks, make_flattener, prepare_args, value_code
from cujit.runtime.driver import CudaDriverError, raise_error
from cujit.runtime.memory import DeviceArray
from cujit.runtime.stream import as_cu_stream
from cujit.types.core import Array, Scalar

# struct codes for the parameter kinds of cujit.abi; pointers are 64-bit.
_CODES = {
    "int8": "b",
    "int16": "h",
    "int32": "i",
    "int64": "q",
    "uint8": "B",
    "uint16": "H",
    "uint32": "I",
    "uint64": "Q",
    "float16": "e",
    "bfloat16": "H",  # its bits (cujit.types.bf16.value_bits)
    "float32": "f",
    "float64": "d",
    "ptr": "Q",
}
_packers: dict[tuple[str, ...], ParamPacker] = {}


class ParamPacker:
    """Packs one signature's flat parameter values into a reusable ``void **`` block.

    Each parameter sits at an offset aligned to its size (as the C ABI would
    place it), so every pointer in the array is naturally aligned.
    """

    __slots__ = (
        "address",
        "buffer",
        "kinds",
        "lock",
        "offsets",
        "pointers",
        "size",
        "struct",
        "view",
    )

    def __init__(self, kinds):
        self.kinds = tuple(kinds)
        fmt, offsets, off = ["<"], [], 0
        for kind in self.kinds:
            try:
                code = _CODES[kind]
            except KeyError:
                raise LaunchError(f"unknown kernel parameter kind {kind!r}") from None
            size = struct.calcsize(code)
            pad = -off % size
            if pad:
                fmt.append(f"{pad}x")
            offsets.append(off + pad)
            off += pad + size
            fmt.append(code)
        self.offsets = tuple(offsets)
        self.size = off
        self.struct = struct.Struct("".join(fmt))
        # uint64 words: the block itself is 8-byte aligned.
        self.buffer = (ctypes.c_uint64 * max((off + 7) // 8, 1))()
        # pack_into a byte memoryview is faster than into the ctypes array itself.
        self.view = memoryview(self.buffer).cast("B")
        base = ctypes.addressof(self.buffer)
        self.pointers = (ctypes.c_void_p * max(len(offsets), 1))(*[base + o for o in offsets])
        self.address = ctypes.addressof(self.pointers) if offsets else 0
        # The buffer is shared: pack + launch must not interleave across threads.
        # cuLaunchKernel copies the values, so it is free again once the call returns.
        self.lock = threading.Lock()

    def pack(self, values) -> int:
        """Write ``values`` into the buffer; return the ``void **`` address."""
        try:
            self.struct.pack_into(self.view, 0, *values)
        except struct.error as exc:
            try:  # an int given as its bit pattern (0xFFFFFFFF for an int32), as numba takes it
                self.struct.pack_into(self.view, 0, *map(as_bits, self.kinds, values))
            except (struct.error, TypeError):
                raise LaunchError(self._explain(values, exc)) from None
        return self.address

    def packed_bytes(self) -> bytes:
        """The parameter block as the driver will read it (for tests and debugging)."""
        return bytes(self.buffer)[: self.size]

    def _explain(self, values, exc) -> str:
        values = list(values)
        if len(values) != len(self.kinds):
            return (
                f"kernel expects {len(self.kinds)} parameter values, got {len(values)} "
                "(internal argument flattening mismatch)"
            )
        for i, (kind, v) in enumerate(zip(self.kinds, values, strict=True)):
            try:
                struct.pack("<" + _CODES[kind], as_bits(kind, v))
            except struct.error as e:
                return f"kernel parameter {i} of kind {kind} cannot hold {v!r}: {e}"
        return f"cannot pack kernel parameters: {exc}"


def as_bits(kind: str, value):
    """An int ``value`` for an integer parameter of ``kind`` as the parameter's bits
    read back in its type: numba passes ints through ctypes, which keeps the low bits,
    so 0xFFFFFFFF reaches an int32 as -1 and -1 a uint8 as 255.  A value needing more
    bits than the parameter has is left alone (packing it fails: refused, not cut)."""
    code = _CODES.get(kind, "")
    if code not in "bhiqBHIQ" or not isinstance(value, int):
        return value
    bits = 8 * struct.calcsize(code)
    if not -(1 << (bits - 1)) <= value < (1 << bits):
        return value
    value &= (1 << bits) - 1
    return value - (1 << bits) if code.islower() and value >> (bits - 1) else value


def get_packer(kinds) -> ParamPacker:
    """The shared packer for a parameter-kind list (built on first use)."""
    key = tuple(kinds)
    p = _packers.get(key)
    if p is None:
        p = _packers[key] = ParamPacker(key)
    return p


def normalize_dims(dims, what: str) -> tuple[int, int, int]:
    """An int or 1-3 sequence of positive ints -> (x, y, z), padding with 1."""
    try:
        items = (
            (operator.index(dims),)
            if not hasattr(dims, "__len__")
            else tuple(operator.index(d) for d in dims)
        )
    except TypeError:
        raise LaunchError(
            f"{what} dimensions must be an int or a tuple of up to three ints, got {dims!r}"
        ) from None
    if not 1 <= len(items) <= 3:
        raise LaunchError(f"{what} must have 1 to 3 dimensions, got {dims!r}")
    for axis, n in zip("xyz", items, strict=False):  # items has 1 to 3 extents
        if n <= 0:
            raise LaunchError(f"{what} dimension {axis} must be positive, got {n} in {dims!r}")
    return items + (1,) * (3 - len(items))


def check_config(function, grid, block, shared_bytes: int):
    """Validate a launch shape against the device and the kernel; return 3-tuples."""
    g = normalize_dims(grid, "grid")
    b = normalize_dims(block, "block")
    dev = function.device
    for axis, n, lim in zip("xyz", b, dev.max_block_dim, strict=True):
        if n > lim:
            raise LaunchError(f"block dimension {axis} is {n}, above the device limit of {lim}")
    for axis, n, lim in zip("xyz", g, dev.max_grid_dim, strict=True):
        if n > lim:
            raise LaunchError(f"grid dimension {axis} is {n}, above the device limit of {lim}")
    threads = b[0] * b[1] * b[2]
    if threads > dev.max_threads_per_block:
        raise LaunchError(
            f"block {b[0]}x{b[1]}x{b[2]} has {threads} threads, above the "
            f"device limit of {dev.max_threads_per_block} per block"
        )
    if threads > function.max_threads_per_block:
        raise LaunchError(
            f"kernel '{function.name}' can run at most {function.max_threads_per_block} "
            f"threads per block (it uses {function.num_regs} registers per thread); the block "
            f"{b[0]}x{b[1]}x{b[2]} has {threads}"
        )
    shared_bytes = operator.index(shared_bytes)
    if shared_bytes < 0:
        raise LaunchError(f"dynamic shared memory size must be >= 0, got {shared_bytes}")
    limit = dev.max_shared_memory_per_block_optin - function.static_shared_bytes
    if shared_bytes > limit:
        raise LaunchError(
            f"kernel '{function.name}' asks for {shared_bytes} bytes of dynamic shared memory; "
            f"the device allows {dev.max_shared_memory_per_block_optin} per block and the "
            f"kernel already uses {function.static_shared_bytes} statically"
        )
    function.ensure_dynamic_shared(shared_bytes)
    if getattr(function, "cooperative", False):  # it syncs the grid
        _check_cooperative(function, g, threads, shared_bytes)
    return g, b


def _check_cooperative(function, g, threads: int, shared_bytes: int) -> None:
    from cujit.runtime.occupancy import max_cooperative_blocks

    blocks = g[0] * g[1] * g[2]
    most = max_cooperative_blocks(function, threads, shared_bytes)
    if blocks > most:
        raise LaunchError(
            f"kernel '{function.name}' syncs the grid (cuda.cg.this_grid().sync()), so all its "
            f"blocks must be resident at once: a grid of {blocks} blocks exceeds the maximum "
            f"of {most} blocks of {threads} threads on this device; see "
            "kernel.max_cooperative_grid_blocks(blockdim)"
        )


def launch(function, grid, block, stream, shared_bytes: int, params, values) -> None:
    """Launch ``function`` (a :class:`cujit.runtime.module.Function`).

    ``params`` is a :class:`ParamPacker` (fastest: keep it with the compiled
    kernel) or the list of ``cujit.abi.param_kinds``; ``values`` the flat
    parameter values in that order (see :func:`cujit.runtime.args.prepare_args`).
    ``stream`` is 0/None, a cujit Stream or a CUstream.
    """
    packer = params if params.__class__ is ParamPacker else get_packer(params)
    try:
        dims = function.checked.get((grid, block, shared_bytes))
    except TypeError:  # unhashable (lists): check every time
        dims = check_config(function, grid, block, shared_bytes)
    if dims is None:
        dims = check_config(function, grid, block, shared_bytes)
        if len(function.checked) < 4096:
            function.checked[(grid, block, shared_bytes)] = dims
    (gx, gy, gz), (bx, by, bz) = dims
    cu = _cu_stream(stream)
    lock = packer.lock
    lock.acquire()  # explicit acquire/release: half the cost of ``with`` here
    try:
        try:
            packer.struct.pack_into(packer.view, 0, *values)
        except struct.error:
            # An int given as its bit pattern (0xFFFFFFFF for an int32), as numba takes
            # it, or a LaunchError saying which parameter cannot hold its value.
            packer.pack(values)
        (err,) = function.cu_launch(
            function.handle, gx, gy, gz, bx, by, bz, shared_bytes, cu, packer.address, 0
        )
    finally:
        lock.release()
    if err:
        launch_failed(function, err)


def launch_failed(function, err) -> None:
    """Raise the CudaDriverError of a failed launch; where the driver says no more than
    CUDA_ERROR_INVALID_VALUE and the kernel's threads each take a large local-memory
    frame (cuda.local.array, spills), the message says so: that frame is the usual
    cause, and the driver names neither."""
    try:
        raise_error(_call_name(function), err)
    except CudaDriverError as exc:
        local = _local_bytes(function) if exc.name == "CUDA_ERROR_INVALID_VALUE" else 0
        if local < LARGE_LOCAL_FRAME:
            raise
        raise CudaDriverError(
            exc.call,
            exc.code,
            exc.name,
            f"{exc.description}; kernel {function.name!r} takes {local} bytes of local "
            "memory per thread (its cuda.local.array arrays and spills), near or past the "
            "512 KiB a thread may have",
        ) from None


LARGE_LOCAL_FRAME = 64 * 1024


def _local_bytes(function) -> int:
    from cuda.bindings import driver as drv

    attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
    try:
        err, value = drv.cuFuncGetAttribute(attr, function.handle)
    except Exception:  # a stand-in function or handle: nothing to add
        return 0
    return int(value) if not err else 0


def _call_name(function) -> str:
    return "cuLaunchCooperativeKernel" if function.cooperative else "cuLaunchKernel"


_DEFAULT_STREAM = [None]  # CUstream(0), cached here to spare launches a call


def make_launcher(
    function,
    grid,
    block,
    stream,
    shared_bytes: int,
    packer,
    arg_types,
    sample_args,
    device_id: int,
    context,
    typeof,
    code_cache=None,
    kept=None,
):
    """A launcher for one launch configuration of one kernel on one device, or None.

    ``launcher(args)`` launches and returns True when ``args`` are of the kinds
    ``sample_args`` had (the same classes; device arrays of the same interned type,
    writeable, on ``device_id``) and ``context`` is the calling thread's; otherwise it
    returns False, does nothing, and the caller takes the general path
    (``prepare_args`` and :func:`launch`), which also explains every error.  Its code
    is generated as straight-line Python with the function handle and the parameter
    block bound in, once per kind of arguments (kept in ``code_cache``, a dict the
    caller owns); each launch configuration binds its checked shape and stream to it.

    ``typeof`` types a device array that has not been typed yet (the caller's
    ``fast_typeof``, which caches the interned type on the array).  None where no
    such shortcut applies: host, foreign or nested arguments (they need copies,
    stream ordering or flattening each time).  ``kept`` is the kernel's mask of the
    parameters it takes (``cujit.abi``): the launcher packs only those.
    """
    kinds = []
    for t, a in zip(arg_types, sample_args, strict=True):
        if t.__class__ is Array:
            if (
                a.__class__ is not DeviceArray
                or a.cujit_type is None
                or a.readonly
                or a.device_id not in (device_id, None)
            ):
                return None  # no launcher: these take the general path every time
            kinds.append(a.cujit_type)
        elif t.__class__ is Scalar and t.kind not in "Mm":  # a datetime's class has no unit
            kinds.append(a.__class__)
        else:
            return None
    # By identity: the caller's cache lives no longer than its loaded functions, and
    # contexts live as long as the process.
    key = (id(function), tuple(kinds), device_id, id(context))
    bind = code_cache.get(key) if code_cache is not None else None
    if bind is None:
        bind = _generate(function, packer, arg_types, kinds, device_id, context, typeof, kept)
        if code_cache is not None and len(code_cache) < 64:
            code_cache[key] = bind
    dims = function.checked.get((grid, block, shared_bytes))
    if dims is None:
        dims = check_config(function, grid, block, shared_bytes)
    (gx, gy, gz), (bx, by, bz) = dims
    return bind(gx, gy, gz, bx, by, bz, int(shared_bytes), _cu_stream(stream))


def _generate(function, packer, arg_types, kinds, device_id: int, context, typeof, kept):
    """``bind(gx, gy, gz, bx, by, bz, shared_bytes, cu) -> launcher`` for ``make_launcher``."""
    from cujit.runtime import context as rt_context

    names = [f"a{i}" for i in range(len(arg_types))]
    env = {
        "DeviceArray": DeviceArray,
        "tls": rt_context._tls,
        "CTX": context,
        "pack_into": packer.struct.pack_into,
        "view": packer.view,
        "lock": packer.lock,
        "cu_launch": function.cu_launch,
        "handle": function.handle,
        "address": packer.address,
        "struct_error": struct.error,
        "launch_failed": launch_failed,
        "function": function,
        "typed": typeof,
    }
    guards, parts = [], []
    masks = kept_per_argument(arg_types, kept)
    for i, (name, t, kind) in enumerate(zip(names, arg_types, kinds, strict=True)):
        if t.__class__ is Array:
            env[f"T{i}"] = kind
            # A new array has no cujit_type yet: typing it is the general path's work,
            # done here by the same function (``typed``).
            guards.append(
                f"{name}.__class__ is not DeviceArray or "
                f"({name}.cujit_type or typed({name})) is not T{i}"
                f" or {name}.readonly or ({name}.device_id != {device_id} and "
                f"{name}.device_id is not None)"
            )
        else:
            env[f"C{i}"] = kind
            guards.append(f"{name}.__class__ is not C{i}")
        parts.append(value_code(name, t, masks[i]))
    parts = [p for p in parts if p]
    if names:
        unpack = (
            f"        try:\n            {', '.join(names)}, = args\n"
            "        except ValueError:\n            return False\n"
        )
    else:
        unpack = "        if args:\n            return False\n"
    guard = " or\n                ".join(guards + ["getattr(tls, 'ctx', None) is not CTX"])
    src = (
        "def bind(gx, gy, gz, bx, by, bz, shared_bytes, cu):\n"
        "    def launcher(args):\n"
        + unpack
        + f"        if ({guard}):\n            return False\n"
        + "        lock.acquire()\n"
        + "        try:\n"
        + f"            pack_into(view, 0, {', '.join(parts)})\n"
        + "            err, = cu_launch(handle, gx, gy, gz, bx, by, bz, shared_bytes, cu, "
        + "address, 0)\n"
        + "        except struct_error:\n            return False\n"
        + "        finally:\n            lock.release()\n"
        + "        if err:\n            launch_failed(function, err)\n"
        + "        return True\n"
        + "    return launcher\n"
    )
    exec(pycode.code(src, "<cujit launcher>"), env)  # noqa: S102
    return env["bind"]


def _cu_stream(stream):
    if stream is None or (stream.__class__ is int and stream == 0):
        cu = _DEFAULT_STREAM[0]
        if cu is None:
            cu = _DEFAULT_STREAM[0] = as_cu_stream(0)
        return cu
    return as_cu_stream(stream)


def launch_with_args(
    function, grid, block, stream, shared_bytes: int, params, arg_types, args
) -> None:
    """prepare_args + launch + finish_writebacks: one call of a kernel on Python values."""
    values, writebacks = prepare_args(arg_types, args, stream)
    launch(function, grid, block, stream, shared_bytes, params, values)
    finish_writebacks(writebacks, stream)


__all__ = [
    "ParamPacker",
    "check_config",
    "finish_writebacks",
    "get_packer",
    "launch",
    "launch_with_args",
    "make_flattener",
    "make_launcher",
    "normalize_dims",
    "prepare_args",
]
