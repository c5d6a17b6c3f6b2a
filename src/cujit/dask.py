"""cujit kernels over Dask arrays and in Dask tasks (``pip install cujit[dask]``).

    import cujit.dask as cd
    out = cd.map_blocks(scale, x, args=(2.0,))              # scale(x_chunk, 2.0, out_chunk)
    out = cd.map_overlap(blur, x, depth=1, boundary="reflect")

Kernels take their input chunks, then ``args``, then the output chunk, and write
it; the launch configuration comes from the chunk's shape (``launch_config``).
Dask does the rest: ``dask.array.map_blocks`` and ``map_overlap`` build the graph,
the overlap, the boundary and the trimming.  The output has the first input's
chunks and array type: NumPy chunks give NumPy chunks (on the CUDA target each
chunk goes to the worker's GPU and back), CuPy chunks give CuPy chunks that never
leave the GPU.

Kernels travel to workers by pickling (``Kernel.__reduce__``): by name when
defined at module level, by value otherwise, and a worker rebuilds and compiles
each kernel once (``cujit.tokens``), not once per task.  With ``CUJIT_CACHE=1``
the workers of one machine share the on-disk cache, so they compile each kernel
once between them.  ``dask_setup`` makes this module a worker preload
(``--preload cujit.dask``): it registers how a cujit device array crosses the
network (its values, copied to the host; a worker receiving it puts it on its own
GPU, a client gets a NumPy array) and can select the worker's GPU.  Each worker
of dask-cuda's ``LocalCUDACluster`` sees its own GPU as device 0 through
``CUDA_VISIBLE_DEVICES``, which the CUDA driver applies.
"""

from __future__ import annotations

import functools
import math

import dask.array as da
import numpy as np
from dask.array.utils import meta_from_array

__all__ = [
    "dask_setup",
    "launch_config",
    "map_blocks",
    "map_overlap",
    "run_block",
    "to_cupy",
    "to_host",
]

# Threads per block for a chunk of 1, 2 or 3 dimensions; the x dimension covers the
# first axis, as ``cuda.grid(n)`` returns it first.
BLOCKS = {1: (256,), 2: (16, 16), 3: (8, 8, 4)}


def launch_config(
    shape: tuple[int, ...], block: tuple[int, ...] | None = None
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(grid, block)`` covering an array of ``shape`` (1 to 3 dimensions) one thread
    per element: ``block`` (default ``BLOCKS``) and enough blocks in each dimension."""
    if not 1 <= len(shape) <= 3:
        raise ValueError(
            f"a chunk of {len(shape)} dimensions: cujit.dask launches over "
            "1 to 3 (reshape the array, or launch the kernel yourself)"
        )
    block = tuple(block or BLOCKS[len(shape)])
    if len(block) != len(shape):
        raise ValueError(f"block {block} for a chunk of shape {shape}")
    grid = tuple(max(1, math.ceil(n / b)) for n, b in zip(shape, block, strict=True))
    return grid, block


def run_block(kernel, *chunks, dtype=None, args=(), block=None):
    """Launch ``kernel(*chunks, *args, out)`` over a new ``out`` shaped as ``chunks[0]``
    (of ``dtype``, default its dtype) and return ``out``: what one task of
    ``map_blocks``/``map_overlap`` runs on a worker."""
    first = chunks[0]
    dtype = np.dtype(first.dtype if dtype is None else dtype)
    grid, blk = launch_config(first.shape, block)
    if kernel.target == "cuda" and not hasattr(first, "__cuda_array_interface__"):
        return _through_device(kernel, chunks, dtype, args, grid, blk)
    if hasattr(first, "__cuda_array_interface__"):  # CuPy: the output is CuPy too
        out = np.empty_like(first, dtype=dtype, shape=first.shape)
    else:  # the CPU target runs on the host's memory as it is
        chunks = tuple(np.ascontiguousarray(c) for c in chunks)
        out = np.empty(first.shape, dtype)
    kernel[grid, blk](*chunks, *args, out)
    return out


def _through_device(kernel, chunks, dtype, args, grid, block) -> np.ndarray:
    """NumPy chunks on the CUDA target: copy in, launch, copy the output back."""
    from cujit.runtime import memory
    from cujit.runtime.stream import stream as new_stream

    stream = new_stream()
    inputs = [memory.to_device(np.ascontiguousarray(c), stream=stream) for c in chunks]
    out = memory.device_array(chunks[0].shape, dtype, stream=stream)
    kernel[grid, block, stream](*inputs, *args, out)
    host = out.copy_to_host(stream=stream)
    stream.synchronize()
    return host


def _partial(kernel, dtype, args, block):
    return functools.partial(run_block, kernel, dtype=dtype, args=tuple(args), block=block)


def _meta(first, dtype):
    return meta_from_array(first, ndim=first.ndim, dtype=dtype)


def map_blocks(kernel, *arrays, dtype=None, args=(), block=None, **kwargs) -> da.Array:
    """``dask.array.map_blocks`` launching ``kernel`` over each block (``run_block``).

    ``arrays`` are Dask arrays (or anything ``da.asarray`` takes); blocks of several
    arrays pair up as ``map_blocks`` pairs them (same chunks, or broadcast).  Other
    keyword arguments go to ``dask.array.map_blocks`` (``name``, ``token``...).
    """
    arrays = [da.asarray(a) for a in arrays]
    dtype = np.dtype(arrays[0].dtype if dtype is None else dtype)
    return da.map_blocks(
        _partial(kernel, dtype, args, block),
        *arrays,
        dtype=dtype,
        meta=_meta(arrays[0], dtype),
        **kwargs,
    )


def map_overlap(
    kernel, *arrays, depth, boundary="reflect", dtype=None, args=(), block=None, **kwargs
) -> da.Array:
    """``dask.array.map_overlap`` launching ``kernel`` over each block grown by
    ``depth`` on every side (neighbours' values, or ``boundary`` at the array's
    edges); Dask trims the grown part of each output block off again, so a stencil
    kernel may leave its outermost ``depth`` elements unwritten."""
    arrays = [da.asarray(a) for a in arrays]
    dtype = np.dtype(arrays[0].dtype if dtype is None else dtype)
    return da.map_overlap(
        _partial(kernel, dtype, args, block),
        *arrays,
        depth=depth,
        boundary=boundary,
        trim=True,
        dtype=dtype,
        meta=_meta(arrays[0], dtype),
        **kwargs,
    )


def to_host(x) -> np.ndarray:
    """``x`` as a NumPy array: a device array's values copied to the host."""
    if hasattr(x, "copy_to_host"):
        return np.asarray(x.copy_to_host())
    return np.asarray(x)


def to_cupy(x):
    """A device array as a CuPy array over the same memory (the CUDA Array Interface),
    for Dask arrays and transfers that keep device data on the GPU (dask-cuda)."""
    import cupy

    return cupy.asarray(x)


def dask_setup(worker=None, device: int | None = None) -> None:
    """Prepare a worker (Dask calls this for ``--preload cujit.dask``): register the
    device array's serialisation, and select GPU ``device`` when one is given."""
    register_serialization()
    if device is not None:
        from cujit import cuda

        cuda.select_device(int(device))


@functools.cache
def register_serialization() -> None:
    """Teach Dask's serialisation (the "dask" family) cujit's GPU device arrays: sent
    as their values, received on a worker's GPU or, elsewhere, as a NumPy array."""
    try:
        from distributed.protocol import dask_deserialize, dask_serialize
    except ImportError:  # dask without distributed: nothing crosses a network
        return
    from cujit.runtime.memory import DeviceArray

    dask_serialize.register(DeviceArray)(_serialize_device_array)
    dask_deserialize.register(DeviceArray)(_deserialize_device_array)


def _serialize_device_array(x) -> tuple[dict, list]:
    host = np.ascontiguousarray(x.copy_to_host())
    header = {
        "dtype": host.dtype.str,
        "shape": list(host.shape),
        "readonly": bool(getattr(x, "readonly", False)),
    }
    return header, [memoryview(host).cast("B") if host.size else b""]


def _deserialize_device_array(header: dict, frames: list):
    host = np.frombuffer(frames[0], dtype=np.dtype(header["dtype"]))
    host = host.reshape(header["shape"]).copy()  # writable, owning its memory
    if not _in_worker():
        return host  # gathered by a client: the values, on the host
    from cujit.runtime.memory import to_device

    dev = to_device(host)
    dev.readonly = header["readonly"]
    return dev


def _in_worker() -> bool:
    """Whether this process is a Dask worker's."""
    try:
        from distributed import Worker, get_worker
    except ImportError:
        return False
    try:
        get_worker()  # inside a task
    except ValueError:
        # Arguments are deserialised on the worker's event-loop thread, outside any
        # task, where get_worker() finds none: a worker process has one in _instances.
        return bool(getattr(Worker, "_instances", ()))
    return True


register_serialization()
