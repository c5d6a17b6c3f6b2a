"""Kernel arguments -> flat parameter values, with numba's host-array semantics.

Per ``cujit.abi`` an array becomes (data pointer, n extents, n byte strides),
a scalar one value, a tuple its items in order.  How an array argument gets
a device pointer:

- a :class:`DeviceArray`, or any object with ``__cuda_array_interface__``
  (CuPy, PyTorch), is passed by pointer, no copy;
- a NumPy array is copied to the device before the launch and, if writeable,
  copied back after it (numba's rule; it costs two transfers per launch, which
  is why numba warns about it and why users pass device arrays).
"""

from __future__ import annotations

import numpy as np

from cujit.diagnostics import LaunchError
from cujit.runtime.driver import call
from cujit.runtime.memory import DeviceArray, as_device_array, to_device
from cujit.runtime.stream import _default, as_cu_stream
from cujit.types.core import Array, Scalar, Tuple


def prepare_args(arg_types, args, stream=0) -> tuple[list, list]:
    """Flatten ``args`` (typed by ``arg_types``) into parameter values.

    Returns ``(values, writebacks)``: ``values`` in ``cujit.abi`` order, and one
    :class:`Writeback` per host array, to run after the launch (call each, or
    :func:`finish_writebacks`).  Keep ``writebacks`` alive until then: it owns
    the temporary device copies the launched kernel reads.
    """
    values: list = []
    writebacks: list = []
    if len(arg_types) != len(args):
        raise LaunchError(f"kernel takes {len(arg_types)} arguments, got {len(args)}")
    for i, (t, a) in enumerate(zip(arg_types, args)):
        _flatten(t, a, values, writebacks, stream, i)
    return values, writebacks


def _flatten(t, a, values: list, writebacks: list, stream, index: int) -> None:
    tc = t.__class__
    if tc is Scalar:
        try:
            if t.kind == "f":
                values.append(float(a))
            elif t.kind == "b":
                values.append(1 if a else 0)
            else:
                values.append(int(a))  # int(), not index(): numba truncates floats
        except (TypeError, ValueError):
            raise LaunchError(f"argument {index}: expected a {t} scalar, got {a!r}") from None
    elif tc is Array:
        if isinstance(a, DeviceArray):
            dev = a
        elif isinstance(a, np.ndarray):
            dev = _host_to_device(a, writebacks, stream)
        elif hasattr(a, "__cuda_array_interface__"):
            dev = as_device_array(a)
        else:
            raise LaunchError(f"argument {index}: expected an array for {t}, got "
                              f"{type(a).__name__}")
        if dev.ndim != t.ndim:
            raise LaunchError(f"argument {index}: expected a {t.ndim}-d array, got "
                              f"{dev.ndim}-d")
        values.append(dev.device_ptr)
        values.extend(dev.shape)
        values.extend(dev.strides)
    elif tc is Tuple:
        if not isinstance(a, tuple) or len(a) != len(t.items):
            raise LaunchError(f"argument {index}: expected a tuple of {len(t.items)} items "
                              f"for {t}, got {a!r}")
        for item_t, item in zip(t.items, a):
            _flatten(item_t, item, values, writebacks, stream, index)
    else:
        raise LaunchError(f"argument {index}: values of type {t} cannot be kernel parameters")


def _host_to_device(a: np.ndarray, writebacks: list, stream) -> DeviceArray:
    # A non-contiguous host array travels as a C-contiguous copy; the kernel's
    # type must then allow any layout, which typeof's 'A' layout does.
    host = a if a.flags.c_contiguous or a.flags.f_contiguous else np.ascontiguousarray(a)
    dev = to_device(host, stream=stream)
    writebacks.append(Writeback(dev, a if a.flags.writeable else None, stream))
    return dev


class Writeback:
    """Copies a host array argument's device copy back; calling it does the copy.

    A read-only host array gets one too (with ``host`` None): it keeps the
    device copy alive until the kernel has run.
    """

    __slots__ = ("dev", "host", "stream")

    def __init__(self, dev: DeviceArray, host: np.ndarray | None, stream):
        self.dev, self.host, self.stream = dev, host, stream

    def __call__(self) -> None:
        if self.host is not None:
            self.dev.copy_to_host(self.host, stream=self.stream)


def finish_writebacks(writebacks: list, stream=0) -> None:
    """After a launch: copy every writeable host array argument back (numba semantics).

    On the default stream the copy waits for the kernel (legacy-stream
    ordering); on another stream it is ordered after the kernel and the stream
    is synchronised so the host sees the results on return.
    """
    if not writebacks:
        return
    for write in writebacks:
        write()
    cu = as_cu_stream(stream)
    if cu is not _default():
        call("cuStreamSynchronize", cu)
    writebacks.clear()

