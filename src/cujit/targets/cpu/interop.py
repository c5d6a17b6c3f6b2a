"""The CUDA Array Interface on the CPU target: its device arrays' export, and the import
of such a dict (``cuda.as_cuda_array``, ``cuda.from_cuda_array_interface``, and a
kernel argument that is another object exposing one).

The CPU target's "device memory" is host memory, so its interface carries host
pointers, as numba's simulator's does (version 3: shape, strides ``None`` when
C-contiguous, typestr, ``data`` as (pointer, read-only), ``stream`` the handle of the
array's stream or ``None`` for the default stream).  A GPU library's array exposes the
same dict with a GPU pointer, which a host kernel must never touch: so every host
allocation the CPU target makes is recorded here (address range, weakly), and an
imported interface must point into one of them; any other pointer is refused with a
``TypeError`` that says why.

As in numba, importing an interface that names a stream synchronizes that stream (unless
numba's ``CUDA_ARRAY_INTERFACE_SYNC`` or cujit's variable is off): on the
CPU target its work is already done, but code that checks the call sees it made.  The
GPU runtime never takes these host pointers for device memory: the arrays carry
``__cujit_host_memory__``, and its launch copies them as host arrays.

CUDA IPC shares GPU memory between processes; the CPU target's device arrays are the
process's private host memory, so its IPC calls raise :func:`ipc_unavailable`'s error.
"""

from __future__ import annotations

import bisect
import threading
import weakref

import numpy as np

from cujit import forksafe, numba_config
from cujit.runtime.layout import contiguous_strides, is_contiguous

# The start addresses of live allocations (sorted), and for each its end and owner.  The
# lock is re-entrant: a collection during an update may run a finalizer (_forget) on the
# same thread, between two statements.
_starts: list[int] = []
_allocations: dict[int, tuple[int, weakref.ref]] = {}
_lock = forksafe.renewed(threading.RLock())


def register_allocation(buf: np.ndarray) -> None:
    """Record ``buf`` (a new array owning its memory) as CPU-target device memory."""
    if buf.nbytes == 0:
        return
    start = buf.ctypes.data
    with _lock:
        _allocations[start] = (start + buf.nbytes, weakref.ref(buf))
        bisect.insort(_starts, start)
    weakref.finalize(buf, _forget, start)


def _forget(start: int) -> None:
    with _lock:
        _allocations.pop(start, None)
        i = bisect.bisect_left(_starts, start)
        if i < len(_starts) and _starts[i] == start:
            del _starts[i]


def allocation_at(ptr: int, nbytes: int) -> tuple[np.ndarray, int] | None:
    """The live allocation holding bytes [ptr, ptr + nbytes), and ptr's offset in it."""
    with _lock:
        i = bisect.bisect_right(_starts, ptr) - 1
        if i < 0:
            return None
        start = _starts[i]
        end, ref = _allocations[start]
    owner = ref()
    if owner is None or ptr + nbytes > end:
        return None
    return owner, ptr - start


def host_address(obj) -> int | None:
    """The address of element 0 of the memory ``obj``'s CUDA Array Interface describes,
    when it is the CPU target's own (else None: GPU memory, or memory never allocated
    here)."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        return None
    try:
        view = _host_view(cai, obj)
    except (TypeError, NotImplementedError):
        return None
    return view.ctypes.data


def _stream_entry(stream) -> int | None:
    if stream is None or (isinstance(stream, int) and stream == 0):
        return None
    from cujit.targets.cpu.streams import stream_value

    return stream_value(stream) or None  # the default stream (0): no ordering needed


def array_interface(a: np.ndarray) -> dict:
    """The CUDA Array Interface (version 3) of a CPU-target device array."""
    c_order = is_contiguous(a.shape, a.strides, a.dtype.itemsize, "C")
    return {
        "shape": tuple(a.shape),
        "strides": None if c_order else tuple(a.strides),
        "data": (a.ctypes.data if a.size else 0, not a.flags.writeable),
        "typestr": a.dtype.str,
        "stream": _stream_entry(getattr(a, "stream", 0)),
        "version": 3,
    }


def _dtype(cai: dict, obj) -> np.dtype:
    dtype = np.dtype(cai["typestr"])
    descr = cai.get("descr")
    if dtype.kind == "V" and descr and any(name for name, *_ in descr):
        dtype = np.dtype(descr)  # a record's fields, when the producer lists them
    own = getattr(obj, "dtype", None)  # a record's typestr is only |V<n>: keep its fields
    if dtype.kind == "V" and isinstance(own, np.dtype) and own.itemsize == dtype.itemsize:
        dtype = own
    return dtype


def _host_view(cai: dict, obj) -> np.ndarray:
    """A NumPy array over the host memory a CAI dict describes."""
    from cujit.runtime.layout import byte_span
    from cujit.targets.cpu.memory import HostDeviceArray

    if cai.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported by the CUDA Array Interface")
    dtype = _dtype(cai, obj)
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    strides = tuple(map(int, strides)) if strides else contiguous_strides(shape, dtype.itemsize)
    ptr, readonly = cai["data"]
    lo, hi = byte_span(shape, strides, dtype.itemsize)
    if hi == lo:  # no elements: no memory to find
        return np.empty(shape, dtype).view(HostDeviceArray)
    found = allocation_at(int(ptr or 0) + lo, hi - lo)
    if found is None:
        what = "this" if obj is None else f"{type(obj).__name__}'s"
        raise TypeError(
            f"{what} __cuda_array_interface__ points at memory the CPU "
            "target did not allocate (a GPU array?): kernels on the CPU target run on "
            "host memory; copy the data to the host, or run on the GPU target"
        )
    owner, offset = found
    raw = owner.ravel(order="K").view(np.uint8)  # a view: the owner is contiguous
    view = np.ndarray(shape, dtype, buffer=raw, offset=offset - lo, strides=strides)
    view = view.view(HostDeviceArray)
    if readonly:
        view.flags.writeable = False
    return view


def _sync_producer(cai: dict, view: np.ndarray, sync: bool) -> None:
    """Give ``view`` the stream the interface names; synchronize it as numba does (the
    CPU target's streams have nothing to wait for; the call is made all the same)."""
    from cujit.targets.cpu.streams import external_stream

    handle = cai.get("stream") if cai.get("version", 0) >= 3 else None
    if handle is None:
        return
    if handle == 0:
        raise ValueError(
            "__cuda_array_interface__ has stream 0, which CAI v3 disallows "
            "(1 names the legacy default stream, 2 the per-thread one)"
        )
    view.stream = external_stream(int(handle))
    if sync and numba_config.array_interface_sync():
        view.stream.synchronize()


def as_cuda_array(obj, sync: bool = True) -> np.ndarray:
    """``cuda.as_cuda_array(obj)`` on the CPU target: a device array viewing the memory
    of ``obj``'s CUDA Array Interface, no copy."""
    from cujit.targets.cpu.memory import HostDeviceArray

    if isinstance(obj, HostDeviceArray):
        return obj
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError(f"{type(obj).__name__} does not expose __cuda_array_interface__")
    view = _host_view(cai, obj)
    view.cujit_producer = obj  # the producer lives as long as the view
    _sync_producer(cai, view, sync)
    return view


def from_cuda_array_interface(desc: dict, owner=None, sync: bool = True) -> np.ndarray:
    """``cuda.from_cuda_array_interface(desc)`` on the CPU target (``owner`` is kept
    alive by the array)."""
    view = _host_view(desc, owner)
    view.cujit_producer = owner
    _sync_producer(desc, view, sync)
    return view


def is_cuda_array(obj) -> bool:
    """Whether ``obj`` exposes a CUDA Array Interface (a device array of this target, or
    another object describing memory through one)."""
    return getattr(obj, "__cuda_array_interface__", None) is not None


def ipc_unavailable() -> TypeError:
    return TypeError(
        "CUDA IPC shares GPU memory between processes; the CPU target's device arrays "
        "are this process's host memory, which it cannot share: run on the GPU target, "
        "or send the array's contents (copy_to_host) to the other process"
    )


def open_ipc_array(handle, shape, dtype, strides=None, offset: int = 0):
    """``cuda.open_ipc_array`` on the CPU target: there is no GPU memory to open."""
    raise ipc_unavailable()
