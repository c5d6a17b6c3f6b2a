"""CUDA streams: ``cuda.stream()``, the default streams, foreign streams.

Everywhere a stream is accepted, ``0`` and ``None`` mean the legacy default
stream; a :class:`Stream`, a ``CUstream``, a raw handle int, or any object
speaking the CUDA stream protocol (``__cuda_stream__()`` returning
``(version, handle)``: cuda.core, CuPy, recent PyTorch) also work.  PyTorch
and CuPy streams that predate the protocol are read through their
``cuda_stream`` / ``ptr`` attributes.

Handles 1 and 2 are the driver's ``CU_STREAM_LEGACY`` and
``CU_STREAM_PER_THREAD``: valid in every driver call, which is why the CUDA
Array Interface and DLPack use them to name the two default streams.
"""

from __future__ import annotations

import contextlib
import weakref

from cujit.runtime.driver import _import_bindings, call, get_driver

_default_cu = None  # CUstream(0), built once: launches pass it without converting
LEGACY = 1  # CU_STREAM_LEGACY
PER_THREAD = 2  # CU_STREAM_PER_THREAD


class Stream:
    """A CUDA stream: owned by cujit (destroyed when collected) or borrowed."""

    __slots__ = ("__weakref__", "_finalizer", "cu", "external", "handle", "owner")

    def __init__(self, cu_stream, owned: bool, owner=None, external: bool = False):
        from cujit.runtime.context import get_context

        self.cu = cu_stream  # the cuda.bindings CUstream object, ready for driver calls
        self.handle = int(cu_stream)
        self.owner = owner  # a foreign stream object kept alive while we use its handle
        self.external = external  # numba's flag: made by another library (external_stream)
        self._finalizer = None
        if owned:
            # atexit=False: at interpreter exit the process teardown frees streams.
            self._finalizer = weakref.finalize(self, _destroy, cu_stream, get_context())
            self._finalizer.atexit = False

    def synchronize(self) -> None:
        """Wait until all work queued on this stream has finished."""
        call("cuStreamSynchronize", self.cu)

    def query(self) -> bool:
        """True when all work queued on this stream has finished (does not wait)."""
        (err,) = get_driver().cuStreamQuery(self.cu)
        return err == 0

    @contextlib.contextmanager
    def auto_synchronize(self):
        """``with s.auto_synchronize():`` synchronizes the stream on leaving the block."""
        yield self
        self.synchronize()

    def __int__(self) -> int:
        return self.handle

    def __cuda_stream__(self):
        # The CUDA stream protocol (cuda.core, CuPy): (version, handle).
        return (0, self.handle)

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.handle == self.handle

    def __hash__(self) -> int:
        return hash(self.handle)

    def __repr__(self) -> str:
        names = {0: "default", LEGACY: "legacy default", PER_THREAD: "per-thread default"}
        return f"<Stream {names.get(self.handle) or hex(self.handle)}>"


def _destroy(cu_stream, ctx) -> None:
    try:
        get_driver().cuStreamDestroy(cu_stream)
    except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
        pass


def stream(non_blocking: bool = False) -> Stream:
    """``cuda.stream()``: a new stream on the current device.

    ``non_blocking=True`` makes a stream that does not synchronize with the
    legacy default stream (PyTorch makes its streams this way).
    """
    from cujit.runtime.context import get_context

    get_context()
    return Stream(call("cuStreamCreate", 1 if non_blocking else 0), owned=True)


def default_stream() -> Stream:
    """``cuda.default_stream()``: the legacy default stream, handle 0."""
    return Stream(_default(), owned=False)


def legacy_default_stream() -> Stream:
    """The legacy default stream named by its explicit handle (``CU_STREAM_LEGACY``)."""
    return Stream(_import_bindings().CUstream(LEGACY), owned=False)


def per_thread_default_stream() -> Stream:
    """``cuda.per_thread_default_stream()``: the calling thread's default stream."""
    return Stream(_import_bindings().CUstream(PER_THREAD), owned=False)


def external_stream(ptr) -> Stream:
    """``cuda.external_stream(ptr)``: wrap a stream another library created (not owned).

    ``ptr`` is a raw handle (an int) or any object accepted as a stream.
    """
    handle = stream_handle(ptr)
    return Stream(
        _import_bindings().CUstream(handle),
        owned=False,
        owner=None if isinstance(ptr, int) else ptr,
        external=True,
    )


def _default():
    global _default_cu
    if _default_cu is None:  # building a CUstream needs the bindings, not a GPU
        _default_cu = _import_bindings().CUstream(0)
    return _default_cu


def stream_handle(s) -> int:
    """The raw handle (an int) of any accepted stream argument; 0 for the default."""
    if s is None:
        return 0
    if isinstance(s, int):
        return s
    handle = getattr(s, "handle", None)
    if isinstance(handle, int) and isinstance(s, Stream):
        return handle
    proto = getattr(s, "__cuda_stream__", None)
    if proto is not None:
        # The protocol is a method (cuda.core, CuPy); a few early adopters made it
        # a property returning the tuple.
        value = proto() if callable(proto) else proto
        return int(value[1])
    if isinstance(s, _import_bindings().CUstream):
        return int(s)
    torch_handle = getattr(s, "cuda_stream", None)  # torch.cuda.Stream before the protocol
    if isinstance(torch_handle, int):
        return torch_handle
    if type(s).__module__.startswith("cupy"):  # cupy.cuda.Stream before the protocol
        return int(s.ptr)
    raise TypeError(
        f"expected a stream (cujit Stream, CUstream, int handle, 0, or an "
        f"object with __cuda_stream__), got {s!r}"
    )


def as_cu_stream(s):
    """A ``CUstream`` for any accepted stream argument."""
    if s is None or (s.__class__ is int and s == 0):
        return _default()
    cu = getattr(s, "cu", None)
    if cu is not None:
        return cu
    drv = _import_bindings()
    if isinstance(s, drv.CUstream):
        return s
    handle = stream_handle(s)
    return _default() if handle == 0 else drv.CUstream(handle)


def same_stream(a: int, b: int) -> bool:
    """Whether two raw handles name the same stream (0 and 1 are both the legacy stream)."""
    return a == b or {a, b} == {0, LEGACY}
