"""``cuda.reduce`` / ``cuda.Reduce(binop)``: a full reduction of a 1-D array in two launches.

The generated kernel (compiled by ``cujit.jit``) folds a grid-stride slice per thread,
then reduces each warp with ``shfl_down_sync`` and the warps' results through shared
memory.  The first launch leaves one partial per block; a second one-block launch folds
the partials and ``init`` into the result, on the device (``res=`` is never copied to the
host).  Arrays of at most one block's worth need only the second kind of launch.
"""

from __future__ import annotations

import numpy as np

from cujit import config
from cujit.diagnostics import api_boundary
from cujit.types import from_dtype
from cujit.ufunc.arrays import arrays_for
from cujit.ufunc.vectorize import device_function

BLOCK = 256  # threads per block: 8 warps, so the last stage is one warp
MAX_BLOCKS = 1024  # partials of the first launch, folded by one block of the second

_TEMPLATE = """
def _reduce(x, part, n, init, use_init):
    warps = cuda.shared.array(NWARPS, T)
    tid = cuda.threadIdx.x
    lane = tid % 32
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    acc = init
    if i < n:
        acc = x[i]
        i += step
        # Four independent loads per step keep enough bytes in flight to fill the
        # memory bus with one block per multiprocessor's worth of warps.
        while i + 3 * step < n:
            acc = op(acc, op(op(x[i], x[i + step]), op(x[i + 2 * step], x[i + 3 * step])))
            i += 4 * step
        while i < n:
            acc = op(acc, x[i])
            i += step
    # The lanes holding a value are a prefix of the warp: count them.
    first = cuda.blockIdx.x * cuda.blockDim.x + tid - lane
    acc = _warp_fold(acc, min(max(n - first, 0), 32), lane)
    if lane == 0:
        warps[tid // 32] = acc
    cuda.syncthreads()
    if tid < 32:
        start = cuda.blockIdx.x * cuda.blockDim.x
        held = min(max((n - start + 31) // 32, 0), NWARPS)
        acc = warps[0]
        if lane < held:
            acc = warps[lane]
        acc = _warp_fold(acc, held, lane)
        if lane == 0:
            if use_init:
                acc = op(acc, init)
            part[cuda.blockIdx.x] = acc


@jit(device=True)
def _warp_fold(acc, count, lane):
    off = 16
    while off > 0:
        other = SHUFFLE
        if lane + off < count:
            acc = op(acc, other)
        off = off // 2
    return acc
"""

# How each kind of element crosses a shuffle: shuffles move 32- and 64-bit values.
_CARRIER = {
    "b": "int32",
    "i1": "int32",
    "i2": "int32",
    "u1": "int32",
    "u2": "int32",
    "f2": "float32",
}


def _shuffle(dtype: np.dtype) -> str:
    carrier = _CARRIER.get(dtype.kind) or _CARRIER.get(f"{dtype.kind}{dtype.itemsize}")
    if carrier is None:
        return "cuda.shfl_down_sync(0xFFFFFFFF, acc, off)"
    return f"T(cuda.shfl_down_sync(0xFFFFFFFF, {carrier}(acc), off))"


def _compile(op, dtype: np.dtype, target: str):
    from cujit import device_api as cuda  # the names kernels call
    from cujit import types
    from cujit.dispatcher import Kernel, jit

    if dtype.kind == "c":
        raise TypeError(f"cuda.reduce of complex arrays ({dtype}) is not supported")
    env = {
        "cuda": cuda,
        "jit": jit,
        "op": op,
        "T": from_dtype(dtype),
        "NWARPS": BLOCK // 32,
        "int32": types.int32,
        "float32": types.float32,
    }
    src = _TEMPLATE.replace("SHUFFLE", _shuffle(dtype))
    exec(compile(src, "<cujit reduce>", "exec"), env)  # noqa: S102
    return Kernel(env["_reduce"], target=target)


class Reduce:
    """``cuda.Reduce(binop)``: ``reducer(arr, size=None, res=None, init=0, stream=0)``.

    ``binop`` is a commutative, associative function of two scalars (a Python function
    or a device function); it is compiled per element dtype.
    """

    def __init__(self, functor, target: str | None = None):
        self._op = device_function(functor)
        self.__name__ = getattr(self._op, "__name__", "reduce")
        self.target = target if target in ("cpu", "cuda") else config.TARGET.get()
        self._kernels: dict[np.dtype, object] = {}
        # The first launch's partials, kept per dtype, stream and device: an allocation
        # (and its free) per call would cost more than the reduction of a short array.
        self._scratch: dict[tuple, tuple] = {}

    def __repr__(self) -> str:
        return f"<cujit Reduce {self.__name__}>"

    def _kernel(self, dtype: np.dtype):
        kern = self._kernels.get(dtype)
        if kern is None:
            kern = self._kernels[dtype] = _compile(self._op, dtype, self.target)
        return kern

    def _partials(self, mem, dtype: np.dtype, stream):
        device = None
        if mem.target == "cuda":
            from cujit.runtime import context

            device = context.current_device_id()
        key = (dtype, id(stream), device)
        found = self._scratch.get(key)
        if found is None:  # the stream is kept too, so that its id is not reused
            found = self._scratch[key] = (mem.empty((MAX_BLOCKS,), dtype, stream), stream)
        return found[0]

    @api_boundary
    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        mem = arrays_for(self.target)
        if not mem.is_device(arr):
            arr = np.asarray(arr)
        if arr.ndim != 1:
            raise TypeError(
                f"reduce '{self.__name__}': only 1-D arrays are supported, "
                f"got an array of {arr.ndim} dimensions"
            )
        n = arr.shape[0] if size is None else min(int(size), arr.shape[0])
        dtype = np.dtype(arr.dtype)
        init = dtype.type(init)
        if n < 1:
            return init if res is None else _fill(mem, res, init, stream)
        x = mem.as_device(arr, stream) if mem.is_device(arr) else mem.to_device(arr[:n], stream)
        kern = self._kernel(dtype)
        out = mem.empty((1,), dtype, stream) if res is None else mem.as_device(res, stream)
        blocks = min((n + BLOCK - 1) // BLOCK, MAX_BLOCKS)
        if blocks == 1:
            kern[1, BLOCK, stream](x, out, np.int64(n), init, True)
        else:
            part = self._partials(mem, dtype, stream)
            kern[blocks, BLOCK, stream](x, part, np.int64(n), init, False)
            kern[1, BLOCK, stream](part, out, np.int64(blocks), init, True)
        if res is not None:
            return None
        return mem.to_host(out, stream)[0]


def _fill(mem, res, value, stream) -> None:
    res = mem.as_device(res, stream)
    if mem.target == "cpu":
        res[0] = value
    else:
        res[:1].copy_to_device(np.array([value], dtype=res.dtype), stream=stream)


def reduce(functor):
    """``@cuda.reduce``: a ``Reduce`` of the decorated binary function."""
    return Reduce(functor)
