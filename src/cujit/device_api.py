"""The objects a kernel names to reach the GPU: ``cuda.grid``, ``cuda.threadIdx.x``,
``cuda.shared.array``, ``cuda.atomic.add``...

They are placeholders with a stable identity: type inference recognises them by
identity (see ``cujit.infer.intrinsics``) and the target lowers them.  Called on
the host they raise, since they mean something only inside a kernel.
"""

from __future__ import annotations


class DeviceOnly:
    """A function usable only inside a kernel; ``key`` names its intrinsic."""

    def __init__(self, key: str, doc: str = ""):
        self.key = key
        self.__name__ = key.rsplit(".", 1)[-1]
        self.__qualname__ = key
        self.__module__ = "cujit.cuda"
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"cuda.{self.key} can only be called inside a @cuda.jit kernel")

    def __repr__(self) -> str:
        return f"<cujit device function cuda.{self.key}>"

    def __reduce__(self):  # pickles by name, so kernels referencing it pickle too
        return (_lookup, (self.key,))


class SpecialRegister:
    """One of ``threadIdx.x`` ... ``gridDim.z``: an int32 read from a PTX special register."""

    def __init__(self, key: str):
        self.key = key
        self.__qualname__ = key
        self.__module__ = "cujit.cuda"

    def __repr__(self) -> str:
        return f"<cujit special register cuda.{self.key}>"

    def __reduce__(self):
        return (_lookup, (self.key,))


class Dim3:
    """``cuda.threadIdx`` and friends: ``.x``, ``.y``, ``.z``."""

    def __init__(self, name: str):
        self.__qualname__ = name
        self.__module__ = "cujit.cuda"
        self.x = SpecialRegister(f"{name}.x")
        self.y = SpecialRegister(f"{name}.y")
        self.z = SpecialRegister(f"{name}.z")

    def __repr__(self) -> str:
        return f"<cujit cuda.{self.__qualname__}>"


class Namespace:
    """A group of device functions (``cuda.shared``, ``cuda.local``, ``cuda.atomic``)."""

    def __init__(self, name: str, **members: DeviceOnly):
        self.__qualname__ = name
        self.__module__ = "cujit.cuda"
        for k, v in members.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return f"<cujit cuda.{self.__qualname__}>"


threadIdx = Dim3("threadIdx")
blockIdx = Dim3("blockIdx")
blockDim = Dim3("blockDim")
gridDim = Dim3("gridDim")

grid = DeviceOnly("grid", "grid(ndim): this thread's absolute index (an int, or a tuple for 2-3 dims)")
gridsize = DeviceOnly("gridsize", "gridsize(ndim): the number of threads in the grid per dimension")
syncthreads = DeviceOnly("syncthreads", "barrier for all threads of the block")

shared = Namespace("shared", array=DeviceOnly(
    "shared.array", "shared.array(shape, dtype): block-shared memory; shape 0 means sized at launch"))
local = Namespace("local", array=DeviceOnly(
    "local.array", "local.array(shape, dtype): a per-thread array"))
atomic = Namespace("atomic", add=DeviceOnly(
    "atomic.add", "atomic.add(array, index, value): add atomically, return the old value"))

ALL: dict[str, object] = {}
for _obj in (grid, gridsize, syncthreads, shared.array, local.array, atomic.add):
    ALL[_obj.key] = _obj
for _d in (threadIdx, blockIdx, blockDim, gridDim):
    for _r in (_d.x, _d.y, _d.z):
        ALL[_r.key] = _r


def _lookup(key: str):
    return ALL[key]
