"""Kernel arguments -> flat parameter values, with numba's host-array semantics.

Per ``cujit.abi`` an array becomes (data pointer, n extents[, n byte strides]),
a scalar one value, a tuple (named or not) its items in order.  How an array
argument gets a device pointer:

- a :class:`DeviceArray` is passed by pointer, no copy (the fast path);
- another library's device array (CUDA Array Interface or DLPack: CuPy,
  PyTorch, JAX) is viewed with no copy, after ordering the launch stream
  behind the producer's stream (``cujit.runtime.interop``);
- a NumPy array over mapped or managed memory (``cuda.mapped_array``,
  ``cuda.managed_array``: an ndarray subclass with a CUDA Array Interface) is
  passed by its device address, no copy;
- another NumPy array is copied to the device before the launch and, if writeable,
  copied back after it (numba's rule; it costs two transfers per launch, which
  is why numba warns about it and why users pass device arrays).

Two optional checks, a few attribute reads per array argument: ``written``
(one bool per argument: does the kernel store into it?) refuses read-only
arrays where the kernel writes, and ``device_id`` refuses arrays that live on
another GPU.  Both raise a LaunchError naming the argument.
"""

from __future__ import annotations

import numpy as np

from cujit.abi import keep, kept_per_argument, passes_strides
from cujit.diagnostics import LaunchError
from cujit.runtime import pycode
from cujit.runtime.devices import arg_name, device_error
from cujit.runtime.driver import call
from cujit.runtime.interop import import_for_launch
from cujit.runtime.memory import DeviceArray, to_device
from cujit.runtime.stream import _default, as_cu_stream
from cujit.types.bf16 import value_bits as bf16_bits
from cujit.types.core import Array, NamedTuple, Scalar, Tuple
from cujit.types.enums import EnumMember
from cujit.types.numba_names import CPointer
from cujit.types.records import Record


def prepare_args(
    arg_types, args, stream=0, written=None, device_id=None, names=None, kept=None
) -> tuple[list, list]:
    """Flatten ``args`` (typed by ``arg_types``) into parameter values.

    Returns ``(values, writebacks)``: ``values`` in ``cujit.abi`` order, and one
    :class:`Writeback` per host array (and a ``pending.PendingWrite`` per mapped or
    managed array the kernel may write), to run after the launch (call each, or
    :func:`finish_writebacks`).  Keep ``writebacks`` alive until then: it owns
    the temporary device copies (and foreign-array views) the kernel reads.

    ``written``: a tuple of one bool per argument, True where the kernel may
    store into that array (for a tuple argument: into any array in it).
    ``device_id``: the device the kernel is launched on.  ``names``: the
    parameter names, for error messages.  ``kept``: the compiled kernel's mask of the
    parameters it takes (``cujit.abi``); the values it does not take are left out.
    """
    values: list = []
    writebacks: list = []
    if len(arg_types) != len(args):
        raise LaunchError(f"kernel takes {len(arg_types)} arguments, got {len(args)}")
    # None when nothing is to be checked: the fast path then pays one comparison.
    checks = None if written is None and device_id is None else (written, device_id, names)
    for i, (t, a) in enumerate(zip(arg_types, args, strict=True)):
        _flatten(t, a, values, writebacks, stream, i, checks)
    return keep(values, kept), writebacks


def _flatten(t, a, values: list, writebacks: list, stream, index: int, checks) -> None:  # noqa: C901 -- the launch hot path: one branch per argument kind, inlined on purpose (no calls per argument)
    tc = t.__class__
    if tc is Scalar:
        _scalar_values(t, a, values, index)
    elif tc is Array:
        if a.__class__ is DeviceArray or isinstance(a, DeviceArray):
            dev = a
        elif isinstance(a, np.ndarray):
            dev = None if a.__class__ is np.ndarray else _reachable_view(a, stream)
            if (
                dev is not None
                and checks is not None
                and checks[0] is not None
                and checks[0][index]
                and hasattr(a, "_cujit_note_written")
            ):
                writebacks.append(a._cujit_note_written(stream))  # runtime/pending.py
            if dev is None:  # host memory: copied (numba's rule)
                if (
                    checks is not None
                    and checks[0] is not None
                    and checks[0][index]
                    and not a.flags.writeable
                ):
                    raise _readonly_error(index, checks[2], "a read-only NumPy array")
                dev = _host_to_device(a, writebacks, stream)
        else:
            dev = import_for_launch(a, stream)
            if dev is None:
                raise LaunchError(
                    f"argument {index}: expected an array for {t}, got {type(a).__name__}"
                )
        if checks is not None:
            written, device_id, names = checks
            if dev.readonly and written is not None and written[index]:
                raise _readonly_error(index, names, f"a read-only {type(a).__name__} buffer")
            d = dev.device_id
            if d != device_id and d is not None and device_id is not None:
                raise device_error(index, d, device_id, names)
        if dev.ndim != t.ndim:
            raise LaunchError(f"argument {index}: expected a {t.ndim}-d array, got {dev.ndim}-d")
        values.append(dev.device_ptr)
        values.extend(dev.shape)
        if passes_strides(t):
            values.extend(dev.strides)
    elif tc is Record:
        values.append(_record_to_device(t, a, writebacks, stream, index).device_ptr)
    elif tc is CPointer:  # an address (an int, as numba takes one)
        values.append(_address(a, index))
    elif tc is EnumMember:  # its value (cujit.abi)
        if not isinstance(a, t.cls):
            raise LaunchError(f"argument {index}: expected a {t.cls.__name__} member, got {a!r}")
        _flatten(t.dtype, a.value, values, writebacks, stream, index, checks)
    elif tc is Tuple or tc is NamedTuple:
        if not isinstance(a, tuple) or len(a) != len(t.items):
            raise LaunchError(
                f"argument {index}: expected a tuple of {len(t.items)} items for {t}, got {a!r}"
            )
        for item_t, item in zip(t.items, a, strict=True):
            _flatten(item_t, item, values, writebacks, stream, index, checks)
    else:
        raise LaunchError(f"argument {index}: values of type {t} cannot be kernel parameters")


def _address(a, index: int) -> int:
    if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
        raise LaunchError(f"argument {index}: a pointer argument takes an address, not {a!r}")
    return int(a) & (2**64 - 1)


def _record_to_device(t, a, writebacks: list, stream, index: int) -> DeviceArray:
    """A record argument (a NumPy structured scalar, a view of its array's bytes) is
    copied to the device and back, as numba does: the kernel's field stores reach it."""
    if not isinstance(a, np.void) or a.dtype.itemsize != t.size:
        raise LaunchError(f"argument {index}: expected a record of {t}, got {a!r}")
    host = np.asarray(a).reshape(1)  # shares the scalar's bytes
    dev = to_device(host, stream=stream)
    writebacks.append(Writeback(dev, host if host.flags.writeable else None, stream))
    return dev


def _scalar_values(t: Scalar, a, values: list, index: int) -> None:
    try:
        if t.name == "bfloat16":  # travels as its 16 bits (cujit.types.bf16)
            values.append(bf16_bits(a))
        elif t.kind == "f":
            values.append(float(a))
        elif t.kind == "c":  # two parameters: the parts (cujit.abi)
            z = complex(a)
            values.append(z.real)
            values.append(z.imag)
        elif t.kind == "b":
            values.append(1 if a else 0)
        elif t.kind in "Mm":  # a datetime64 / timedelta64: its count of t's unit
            values.append(time_count(t, a))
        else:
            values.append(int(a))  # int(), not index(): numba truncates floats
    except (TypeError, ValueError):
        raise LaunchError(f"argument {index}: expected a {t} scalar, got {a!r}") from None


def time_count(t, a) -> int:
    """The int64 count of a datetime64 / timedelta64 argument in type ``t``'s unit."""
    return int(np.asarray(a).astype(t.dtype).view(np.int64))


def _reachable_view(a: np.ndarray, stream) -> DeviceArray | None:
    """A NumPy array subclass over memory kernels address directly (``cuda.mapped_array``,
    ``cuda.managed_array``, or another library's such array with a CUDA Array
    Interface): its device view, no copy.  None for an array over host memory."""
    view = getattr(a, "_cujit_device_view", None)
    if view is not None:
        return view()
    if getattr(a, "__cujit_host_memory__", False):  # the CPU target's: host memory, copied
        return None
    if getattr(a, "__cuda_array_interface__", None) is not None:
        return import_for_launch(a, stream)
    return None


def _readonly_error(index: int, names, what: str) -> LaunchError:
    return LaunchError(
        f"{arg_name(index, names)} is {what}, but the kernel writes to it: "
        "pass a writeable array (for instance a copy)"
    )


def check_writable(args, written, names=None) -> None:
    """Raise a LaunchError naming the first read-only array the kernel would write.

    ``written`` holds one bool per argument.  Device arrays and NumPy arrays
    are checked here; foreign arrays (CuPy, PyTorch...) are checked by
    ``prepare_args`` once viewed, since reading their flag may mean taking a
    DLPack capsule.
    """
    for i, (a, w) in enumerate(zip(args, written, strict=True)):
        if w:
            for item in a if isinstance(a, tuple) else (a,):
                if isinstance(item, DeviceArray) and item.readonly:
                    raise _readonly_error(i, names, "a read-only device array")
                if isinstance(item, np.ndarray) and not item.flags.writeable:
                    raise _readonly_error(i, names, "a read-only NumPy array")


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
    if cu is not _default() and any(w.__class__ is Writeback for w in writebacks):
        call("cuStreamSynchronize", cu)
    writebacks.clear()


def value_code(name: str, t, kept=None) -> str:
    """Python source for argument ``name``'s flat parameter values as type ``t`` (a scalar
    or a device array), converted as :func:`prepare_args` converts them, for generated
    launch code: only those ``kept`` (one bool per value, None: all) marks; "" for none."""
    if t.__class__ is Array:
        if kept is None or all(kept):
            strides = f", *{name}.strides" if passes_strides(t) else ""
            return f"{name}.device_ptr, *{name}.shape{strides}"
        exprs = (
            [f"{name}.device_ptr"]
            + [f"{name}.shape[{k}]" for k in range(t.ndim)]
            + ([f"{name}.strides[{k}]" for k in range(t.ndim)] if passes_strides(t) else [])
        )
    elif t.name == "bfloat16":  # its bits; the generated code's namespace is its own
        exprs = [f"__import__('cujit.types.bf16').types.bf16.value_bits({name})"]
    elif t.kind == "f":
        exprs = [f"float({name})"]
    elif t.kind == "c":
        exprs = [f"complex({name}).real", f"complex({name}).imag"]
    elif t.kind == "b":
        exprs = [f"(1 if {name} else 0)"]
    else:
        exprs = [f"int({name})"]  # int(), as prepare_args: numba truncates floats
    return ", ".join(e for e, k in zip(exprs, kept or [True] * len(exprs), strict=True) if k)


def make_flattener(arg_types, kept=None):
    """A ``flatten(args, device_id)`` specialised to ``arg_types``, or None.

    It returns the flat parameter values as a tuple for the common launch: scalars
    and cujit device arrays that are writeable and on ``device_id``.  For anything
    else (a host or foreign array, a read-only array, an array on another device) it
    returns None and the launch takes :func:`prepare_args`, which handles and checks
    every case.  Generated once per specialisation as straight-line code: no loop,
    no per-argument dispatch on the type.  ``kept`` is the specialisation's mask of the
    parameters the kernel takes (``cujit.abi``).
    """
    if any(
        t.__class__ not in (Scalar, Array) or t.__class__ is Scalar and t.kind in "Mm"
        for t in arg_types
    ):
        return None
    names = [f"a{i}" for i in range(len(arg_types))]
    guards, parts = [], []
    for name, t, mask in zip(names, arg_types, kept_per_argument(arg_types, kept), strict=True):
        if t.__class__ is Array:
            guards.append(
                f"    if {name}.__class__ is not DeviceArray or {name}.readonly or "
                f"({name}.device_id != device_id and {name}.device_id is not None):\n"
                "        return None\n"
            )
        parts.append(value_code(name, t, mask))
    parts = [p for p in parts if p]
    unpack = f"    {', '.join(names)}{',' if len(names) == 1 else ''} = args\n" if names else ""
    src = (
        "def flatten(args, device_id):\n"
        + unpack
        + "".join(guards)
        + f"    return ({', '.join(parts)}{',' if len(parts) == 1 else ''})\n"
    )
    namespace = {"DeviceArray": DeviceArray}
    exec(pycode.code(src, f"<cujit flatten {len(arg_types)} args>"), namespace)  # noqa: S102
    return namespace["flatten"]
