"""Device memory: allocations and :class:`DeviceArray`, numba's ``DeviceNDArray``.

An allocation (:class:`DeviceBuffer`) queues its ``cuMemFree`` on its context's
pending frees (``deallocs``, numba's deferred deallocation) when the last array
viewing it is garbage collected; views made by slicing hold a
reference to it, so a strided view keeps its base's memory alive.  Strides are
in bytes, as in NumPy and the kernel parameter layout (``cujit.abi``).

A DeviceArray also remembers the device it lives on (``device_id``) and
whether it may be written (``readonly``: set for views of read-only foreign
buffers); it exports itself through the CUDA Array Interface and DLPack
(``cujit.runtime.dlpack``) and pickles by a round trip through the host.
"""

from __future__ import annotations

import ctypes
import gc
import weakref

import numpy as np

from cujit.runtime import deallocs
from cujit.runtime.array_views import DeviceArrayViews
from cujit.runtime.context import get_context
from cujit.runtime.driver import CudaDriverError, call
from cujit.runtime.layout import (
    byte_span,
    check_host_copy_strides,
    contiguous_strides,
    index_view,
    is_contiguous,
    strides_like,
)
from cujit.runtime.stream import _default, as_cu_stream, stream_handle

_CUDA_ERROR_OUT_OF_MEMORY = 2


class DeviceBuffer:
    """One ``cuMemAlloc`` allocation, freed when this object is collected."""

    __slots__ = ("__weakref__", "device_id", "nbytes", "ptr")

    def __init__(self, nbytes: int):
        ctx = get_context()
        self.device_id = _device_id(ctx)
        self.nbytes = nbytes
        if nbytes and hasattr(ctx, "memory_manager"):
            ctx.memory_manager  # noqa: B018 - made now, on the allocating thread
        self.ptr = _alloc(nbytes) if nbytes else 0
        if self.ptr:
            # Queued on the context's pending frees when collected, as numba does
            # (cujit.runtime.deallocs); released at interpreter exit too (a finalizer's
            # default), so that every allocation is returned before the context goes
            # (compute-sanitizer's leak check).
            weakref.finalize(self, deallocs.release, self.ptr, nbytes, ctx)


def _device_id(ctx) -> int | None:
    device = getattr(ctx, "device", None)  # None under the tests' driver stand-ins
    return getattr(device, "id", None)


def _alloc(nbytes: int) -> int:
    try:
        return int(call("cuMemAlloc", nbytes))
    except CudaDriverError as exc:
        if exc.code != _CUDA_ERROR_OUT_OF_MEMORY:
            raise
    gc.collect()  # unreachable arrays may still hold memory: free them, try once more
    deallocs.clear_all()  # with the frees still queued
    return int(call("cuMemAlloc", nbytes))


def _htod(dst: int, src: int, n: int, stream) -> None:
    get_context()  # a thread's first driver call (a Dask worker's I/O thread) binds one
    cu = as_cu_stream(stream)
    if cu is _default():
        call("cuMemcpyHtoD", dst, src, n)
    else:  # pageable host memory: returns once the source has been staged
        call("cuMemcpyHtoDAsync", dst, src, n, cu)


def _dtoh(dst: int, src: int, n: int, stream) -> None:
    get_context()  # as in _htod: copies need a current context, whatever the thread
    cu = as_cu_stream(stream)
    if cu is _default():
        call("cuMemcpyDtoH", dst, src, n)
    else:
        call("cuMemcpyDtoHAsync", dst, src, n, cu)


class DeviceArray(DeviceArrayViews):
    """An n-dimensional array in device memory (numba's ``DeviceNDArray``)."""

    __slots__ = (
        "__weakref__",
        "base",
        "cujit_type",
        "device_id",
        "device_ptr",
        "dtype",
        "ndim",
        "readonly",
        "shape",
        "size",
        "stream",
        "strides",
    )
    __cuda_memory__ = True

    def __init__(self, shape, strides, dtype, stream=0, gpu_data=None):
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(map(int, shape))
        dtype = np.dtype(dtype)
        if strides is None:
            strides = contiguous_strides(shape, dtype.itemsize)
        strides = tuple(map(int, strides))
        if len(strides) != len(shape):
            raise ValueError(f"strides {strides} do not match shape {shape}")
        if gpu_data is None:
            lo, hi = byte_span(shape, strides, dtype.itemsize)
            if lo < 0:
                raise ValueError("a new allocation cannot have negative strides")
            gpu_data = DeviceBuffer(hi)
        self._set(shape, strides, dtype, gpu_data.ptr, gpu_data, stream)
        self.device_id = getattr(gpu_data, "device_id", None)

    def _set(
        self, shape, strides, dtype, ptr, base, stream, readonly=False, device_id=None
    ) -> None:
        self.shape, self.strides, self.dtype = shape, strides, dtype
        self.ndim = len(shape)
        self.size = int(np.prod(shape, dtype=np.int64)) if shape else 1
        self.device_ptr, self.base, self.stream = ptr, base, stream
        self.readonly, self.device_id = readonly, device_id
        # The launch path's cache of this array's kernel-argument type (shape, strides
        # and dtype never change after construction): see cujit.argtypes.
        self.cujit_type = None

    @classmethod
    def _view(
        cls, shape, strides, dtype, ptr, base, stream=0, readonly=False, device_id=None
    ) -> DeviceArray:
        """A DeviceArray over existing memory that ``base`` keeps alive.

        ``device_id`` None means unknown: device checks let such an array pass.
        """
        v = cls.__new__(cls)
        v._set(shape, strides, dtype, ptr, base, stream, readonly, device_id)
        return v

    def _derive(self, shape, strides, ptr) -> DeviceArray:
        """A view of this array's memory, inheriting its base, stream, flags and device."""
        return self._view(
            shape, strides, self.dtype, ptr, self.base, self.stream, self.readonly, self.device_id
        )

    # -- numba's attributes ------------------------------------------------
    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def alloc_size(self) -> int:
        return getattr(self.base, "nbytes", self.nbytes)

    @property
    def gpu_data(self):
        """numba's ``gpu_data``: the memory this array's elements span (lowest address,
        size in bytes, and the allocation or foreign object holding it); equal for two
        arrays over the same bytes (``d.view(np.int64)`` and ``d``)."""
        from cujit.runtime.ipc import DevicePointer

        lo, hi = byte_span(self.shape, self.strides, self.dtype.itemsize)
        return DevicePointer(self.device_ptr + lo, hi - lo, self.base)

    def get_ipc_handle(self):
        """An IpcArrayHandle: this array's memory and layout, to open in another process."""
        from cujit.runtime import ipc

        handle = ipc.get_ipc_handle(self.gpu_data)
        return ipc.IpcArrayHandle(handle, self.shape, self.strides, self.dtype)

    @property
    def device_ctypes_pointer(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.device_ptr or None)

    @property
    def __cuda_array_interface__(self) -> dict:
        c = self.is_c_contiguous()
        handle = stream_handle(self.stream)
        return {
            "shape": self.shape,
            "strides": None if c else self.strides,
            "data": (self.device_ptr, self.readonly),
            "typestr": self.dtype.str,
            # CAI v3: the stream the data was last worked on, for the consumer to
            # order after; None (no ordering) for the legacy default stream, as numba.
            "stream": handle or None,
            "version": 3,
        }

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export (a capsule viewing this memory; see ``cujit.runtime.dlpack``)."""
        from cujit.runtime import dlpack

        return dlpack.export(
            self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
        )

    def __dlpack_device__(self) -> tuple[int, int]:
        from cujit.runtime import dlpack

        return (dlpack.KDL_CUDA, self.device_id or 0)

    def __reduce__(self):
        # Device pointers mean nothing in another process: pickle the values,
        # and allocate on the unpickling process's current device.
        return (_unpickle, (self._to_host(), self.readonly))

    def is_c_contiguous(self) -> bool:
        return is_contiguous(self.shape, self.strides, self.dtype.itemsize, "C")

    def is_f_contiguous(self) -> bool:
        return is_contiguous(self.shape, self.strides, self.dtype.itemsize, "F")

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<DeviceArray shape={self.shape} dtype={self.dtype} ptr={self.device_ptr:#x}>"

    @property
    def T(self) -> DeviceArray:
        return self.transpose()

    def transpose(self, axes=None) -> DeviceArray:
        """numba's: a new C-contiguous array holding the transpose, not a view (the
        array itself for the identity permutation).  The copy goes through the host:
        a device-side transpose would need a kernel, which the runtime does not build."""
        axes = tuple(range(self.ndim))[::-1] if axes is None else tuple(map(int, axes))
        if axes == tuple(range(self.ndim)):
            return self
        host = np.transpose(self._to_host(stream=self.stream), axes)
        return to_device(np.ascontiguousarray(host), stream=self.stream)

    def reshape(self, *newshape, order: str = "C") -> DeviceArray:
        """A contiguous array viewed with a new shape (one extent may be -1)."""
        if len(newshape) == 1 and not isinstance(newshape[0], (int, np.integer)):
            newshape = tuple(newshape[0])
        shape = list(map(int, newshape))
        if shape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in shape:
            known = int(np.prod([n for n in shape if n != -1]))
            shape[shape.index(-1)] = self.size // known if known else 0
        if int(np.prod(shape)) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(shape)}")
        if not (self.is_c_contiguous() if order == "C" else self.is_f_contiguous()):
            raise NotImplementedError(f"reshape of a non-{order}-contiguous device array")
        shape = tuple(shape)
        return self._derive(
            shape, contiguous_strides(shape, self.dtype.itemsize, order), self.device_ptr
        )

    def ravel(self, order: str = "C") -> DeviceArray:
        return self.reshape(self.size, order=order)

    # -- indexing ----------------------------------------------------------
    def _index(self, key) -> tuple[DeviceArray, bool]:
        off, shape, strides, scalar = index_view(self.shape, self.strides, key)
        ptr = self.device_ptr + off if self.device_ptr else 0
        return self._derive(shape, strides, ptr), scalar

    def __getitem__(self, key):
        """Views for slices; a single element comes back to the host, as in numba."""
        view, scalar = self._index(key)
        return view._to_host()[()] if scalar else view

    def __setitem__(self, key, value) -> None:
        self._index(key)[0].copy_to_device(value)

    # -- copies --------------------------------------------------------------
    def copy_to_host(self, ary: np.ndarray | None = None, stream=0) -> np.ndarray:
        """Copy to a new host array (same strides when not contiguous) or into ``ary``;
        a view with a negative stride is refused, as numba refuses it
        (``layout.check_host_copy_strides``)."""
        check_host_copy_strides(self.strides)
        return self._to_host(ary, stream)

    def _to_host(self, ary: np.ndarray | None = None, stream=0) -> np.ndarray:
        """``copy_to_host`` for any strides: what cujit's own reads of a view use."""
        if ary is not None and (ary.shape != self.shape or ary.dtype != self.dtype):
            raise ValueError(
                f"cannot copy a device array of shape {self.shape}, dtype "
                f"{self.dtype} into a host array of shape {ary.shape}, dtype "
                f"{ary.dtype}"
            )
        order = "C" if self.is_c_contiguous() else "F" if self.is_f_contiguous() else None
        if self.size == 0:
            return ary if ary is not None else np.empty(self.shape, self.dtype, order=order or "C")
        if order is not None:
            direct = ary is not None and ary.strides == self.strides
            out = ary if direct else np.empty(self.shape, self.dtype, order=order)
            _dtoh(out.ctypes.data, self.device_ptr, self.nbytes, stream)
        else:  # strided: fetch the whole byte span once, view it with our strides
            lo, hi = byte_span(self.shape, self.strides, self.dtype.itemsize)
            buf = np.empty(hi - lo, np.uint8)
            _dtoh(buf.ctypes.data, self.device_ptr + lo, hi - lo, stream)
            out = np.ndarray(self.shape, self.dtype, buffer=buf, offset=-lo, strides=self.strides)
            direct = False
        if ary is None or direct:
            return out
        if as_cu_stream(stream) is not _default():
            call("cuStreamSynchronize", as_cu_stream(stream))
        ary[...] = out
        return ary

    def copy_to_device(self, ary, stream=0) -> None:
        """Copy a host array (or a device array) of the same shape into this array.

        A non-contiguous view is written by reading the byte span it covers,
        updating its elements on the host and writing the span back: other
        elements inside the span must not change meanwhile (no kernel writing them).
        """
        if self.readonly:
            raise ValueError("cannot copy into a read-only device array")
        if is_cuda_array(ary):
            src = as_device_array(ary)
            contiguous = self.is_c_contiguous() or self.is_f_contiguous()
            if (src.shape, src.strides, src.dtype) == (
                self.shape,
                self.strides,
                self.dtype,
            ) and contiguous:
                if self.nbytes:
                    get_context()  # as in _htod: this thread may have no context yet
                    cu = as_cu_stream(stream)
                    if cu is _default():
                        call("cuMemcpyDtoD", self.device_ptr, src.device_ptr, self.nbytes)
                    else:
                        call("cuMemcpyDtoDAsync", self.device_ptr, src.device_ptr, self.nbytes, cu)
                return
            ary = src._to_host(stream=stream)  # layouts differ: go through the host
        host = np.broadcast_to(np.asarray(ary, dtype=self.dtype), self.shape)
        if self.size == 0:
            return
        if self.is_c_contiguous():
            host = np.ascontiguousarray(host)
        elif self.is_f_contiguous():
            host = np.asfortranarray(host)
        else:  # strided view: read the span, write our elements into it, write it back
            lo, hi = byte_span(self.shape, self.strides, self.dtype.itemsize)
            buf = np.empty(hi - lo, np.uint8)
            _dtoh(buf.ctypes.data, self.device_ptr + lo, hi - lo, 0)
            view = np.ndarray(self.shape, self.dtype, buffer=buf, offset=-lo, strides=self.strides)
            view[...] = host
            _htod(self.device_ptr + lo, buf.ctypes.data, hi - lo, 0)
            return
        _htod(self.device_ptr, host.ctypes.data, self.nbytes, stream)


DeviceNDArray = DeviceArray  # numba's name


def is_cuda_array(obj) -> bool:
    """``cuda.is_cuda_array``: whether ``obj`` exposes the CUDA Array Interface (the CPU
    target's device arrays, whose interface points at host memory, do not count)."""
    return hasattr(obj, "__cuda_array_interface__") and not is_host_memory(obj)


def is_host_memory(obj) -> bool:
    """Whether ``obj`` is one of the CPU target's device arrays: host memory whose CUDA
    Array Interface gives host pointers, which a GPU must not be given."""
    return getattr(obj, "__cujit_host_memory__", False) is True


def as_device_array(obj, sync: bool = True) -> DeviceArray:
    """``cuda.as_cuda_array``: a DeviceArray viewing a CUDA Array Interface object.

    Implemented in ``cujit.runtime.interop`` (with DLPack and stream handling).
    """
    if isinstance(obj, DeviceArray):
        return obj
    from cujit.runtime import interop

    return interop.as_cuda_array(obj, sync=sync)


def _unpickle(host: np.ndarray, readonly: bool) -> DeviceArray:
    dev = to_device(host)
    dev.readonly = readonly
    return dev


def device_array(shape, dtype=np.float64, strides=None, order: str = "C", stream=0) -> DeviceArray:
    """An uninitialised device array."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(map(int, shape))
    if strides is None:
        strides = contiguous_strides(shape, dtype.itemsize, order)
    return DeviceArray(shape, strides, dtype, stream=stream)


def device_array_like(ary, stream=0) -> DeviceArray:
    """An uninitialised contiguous device array with ``ary``'s shape and dtype, its
    dimensions laid out in ``ary``'s order of strides (NumPy's ``zeros_like``)."""
    dtype = np.dtype(ary.dtype)
    shape = tuple(map(int, ary.shape))
    strides = strides_like(shape, tuple(ary.strides), dtype.itemsize)
    return DeviceArray(shape, strides, dtype, stream=stream)


def to_device(obj, stream=0, copy: bool = True, to: DeviceArray | None = None) -> DeviceArray:
    """Copy a host array to a new device array (or into ``to``)."""
    if to is not None:
        to.copy_to_device(obj, stream=stream)
        return to
    host = np.asarray(obj)
    dev = device_array(host.shape, host.dtype, order=_host_order(host), stream=stream)
    if copy:
        dev.copy_to_device(host, stream=stream)
    return dev


def _host_order(ary) -> str:
    flags = getattr(ary, "flags", None)
    if flags is not None and flags.f_contiguous and not flags.c_contiguous:
        return "F"
    return "C"
