"""CUDA streams: ``cuda.stream()``, ``cuda.default_stream()`` and the stream arguments.

Everywhere a stream is accepted, ``0`` and ``None`` mean the legacy default
stream; a :class:`Stream`, a ``CUstream`` or a raw handle int also work.
"""

from __future__ import annotations

import contextlib
import weakref

from cujit.runtime.driver import _import_bindings, call, get_driver

_default_cu = None  # CUstream(0), built once: launches pass it without converting


class Stream:
    """A CUDA stream owned by cujit (or wrapping handle 0, the default stream)."""

    __slots__ = ("__weakref__", "_finalizer", "cu", "handle")

    def __init__(self, cu_stream, owned: bool):
        from cujit.runtime.context import get_context

        self.cu = cu_stream  # the cuda.bindings CUstream object, ready for driver calls
        self.handle = int(cu_stream)
        self._finalizer = None
        if owned:
            # atexit=False: at interpreter exit the process teardown frees streams.
            self._finalizer = weakref.finalize(self, _destroy, cu_stream, get_context())
            self._finalizer.atexit = False

    def synchronize(self) -> None:
        """Wait until all work queued on this stream has finished."""
        call("cuStreamSynchronize", self.cu)

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

    def __repr__(self) -> str:
        return "<Stream default>" if self.handle == 0 else f"<Stream {self.handle:#x}>"


def _destroy(cu_stream, ctx) -> None:
    try:
        get_driver().cuStreamDestroy(cu_stream)
    except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
        pass


def stream() -> Stream:
    """``cuda.stream()``: a new stream on the current device."""
    from cujit.runtime.context import get_context

    get_context()
    return Stream(call("cuStreamCreate", 0), owned=True)


def default_stream() -> Stream:
    """``cuda.default_stream()``: the legacy default stream, handle 0."""
    return Stream(_default(), owned=False)


def _default():
    global _default_cu
    if _default_cu is None:  # building a CUstream needs the bindings, not a GPU
        _default_cu = _import_bindings().CUstream(0)
    return _default_cu


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
    proto = getattr(s, "__cuda_stream__", None)
    if proto is not None:
        return drv.CUstream(proto()[1])
    if isinstance(s, int):
        return _default() if s == 0 else drv.CUstream(s)
    raise TypeError(f"expected a stream (cujit Stream, CUstream, int handle or 0), got {s!r}")
