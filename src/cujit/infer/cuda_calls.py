"""Typing rules for the ``cuda.*`` device functions (``cujit.device_api``): the grid,
barriers and fences (the grid's too: ``cuda.cg.this_grid().sync()``), shared and local
arrays.  Atomics are typed in ``atomic_calls``, warp-level and bit intrinsics in
``warp_calls``.

Their compile-time parameters (``grid``'s ndim, an array's shape and dtype)
must be constants: they become ``attrs`` of the intrinsic, not values.
Predicates (``syncthreads_count``, the warp votes) become bools (``!= 0``); lane
masks and lane numbers become uint32 (their low 32 bits, as numba truncates them).

    %5 = call %4(16, %3)          # cuda.shared.array(16, float32)
  becomes
    %5: array(float32, 1d, C) = intrinsic shared.array () {shape=(16,), dtype=type float32}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import ConstantValueError, RequireLiteralValue, TypingError
from cujit.infer.context import Typer
from cujit.infer.numba_text import call_text, cannot_infer, no_implementation, value_text
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, Value
from cujit.types import (
    Array,
    PyObject,
    Record,
    Scalar,
    Tuple,
    boolean,
    int32,
    int64,
    none,
    to_type,
    uint32,
)

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


_UNKNOWN = object()


def grid(name: str):
    """``cuda.grid(ndim)`` / ``cuda.gridsize(ndim)``: int64, or a tuple for 2-3 dims."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1, keywords=("ndim",))
        arg = site.arg(0, "ndim")
        ndim = t.const_value(arg, default=_UNKNOWN)
        if ndim is _UNKNOWN:  # numba's words first: the class it raises, and the type
            raise RequireLiteralValue(
                f"RequireLiteralValue: {value_text(t, arg)}: {name}(ndim) needs ndim to be "
                "a constant 1, 2 or 3, not a value known only at run time",
                site.loc,
            )
        if not isinstance(ndim, int) or isinstance(ndim, bool) or ndim not in (1, 2, 3):
            raise TypingError(f"{name}(ndim) needs ndim to be a constant 1, 2 or 3", site.loc)
        rt = int64 if ndim == 1 else Tuple((int64,) * ndim)
        return t.emit(
            Intrinsic(
                loc=site.loc, result=site.result(rt), name=name, args=(), attrs=(("ndim", ndim),)
            )
        )

    return rule


def call_syncthreads(t: Typer, site: CallSite) -> Value:
    site.expect(0, 0)
    return t.emit(
        Intrinsic(loc=site.loc, result=site.result(none), name="cuda.syncthreads", args=())
    )


def predicate(t: Typer, site: CallSite, v: Value, what: str) -> Value:
    """A predicate argument as a bool (``!= 0``): numba takes an integer or a bool."""
    pt = t.scalar(v, site.loc, what)
    if pt.is_float:  # numba's words, with the argument cujit names
        raise TypingError(f"Predicate must be an integer or boolean. Got {pt} ({what})", site.loc)
    return t.cast(v, boolean, site.loc)


def mask32(t: Typer, site: CallSite, v: Value, what: str) -> Value:
    """A 32-bit lane mask or lane number: any integer, its low 32 bits as uint32."""
    mt = t.scalar(v, site.loc, what)
    if mt.is_float or mt == boolean:
        if what.endswith("mask"):  # numba's words, with the argument cujit names
            raise TypingError(f"Mask type must be an integer. Got {mt} ({what})", site.loc)
        raise TypingError(f"{what} must be an integer, not {mt}", site.loc)
    return t.cast(v, uint32, site.loc)


def barrier_reduce(name: str):
    """``cuda.syncthreads_count/and/or(predicate)``: a block barrier that also reduces a
    predicate over the block's threads; int32 as in numba (a count, or 0/1)."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1, keywords=("predicate",))
        pred = predicate(t, site, site.arg(0, "predicate"), f"cuda.{name}'s predicate")
        return t.emit(
            Intrinsic(loc=site.loc, result=site.result(int32), name=f"cuda.{name}", args=(pred,))
        )

    return rule


def call_syncwarp(t: Typer, site: CallSite) -> Value:
    """``cuda.syncwarp(mask=0xffffffff)``."""
    site.expect(0, 1, keywords=("mask",))
    mask = site.arg(0, "mask", default=None)
    mask = t.const(0xFFFFFFFF, site.loc) if mask is None else mask
    mask = mask32(t, site, mask, "cuda.syncwarp's mask")
    return t.emit(
        Intrinsic(loc=site.loc, result=site.result(none), name="cuda.syncwarp", args=(mask,))
    )


def fence(name: str):
    """``cuda.threadfence()``, ``threadfence_block()``, ``threadfence_system()``."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(0, 0)
        return t.emit(
            Intrinsic(loc=site.loc, result=site.result(none), name=f"cuda.{name}", args=())
        )

    return rule


def call_nanosleep(t: Typer, site: CallSite) -> Value:
    """``cuda.nanosleep(ns)``: ns as a uint32, as PTX's ``nanosleep.u32`` takes it."""
    site.expect(1, 1, ("ns",))
    ns = site.arg(0, "ns")
    if t.scalar(ns, site.loc, "cuda.nanosleep()").is_float:
        raise TypingError("cuda.nanosleep()'s argument must be an integer", site.loc)
    ns = t.cast(ns, uint32, site.loc)
    return t.emit(
        Intrinsic(loc=site.loc, result=site.result(none), name="cuda.nanosleep", args=(ns,))
    )


def _shape(t: Typer, site: CallSite, name: str) -> tuple[int, ...]:
    shape = t.const_value(site.arg(0, "shape"), default=None)
    dims = shape if isinstance(shape, tuple) else (shape,)
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        hint = (
            "use a tuple of constants, not a list"
            if type(shape).__name__ == "ConstantList"
            else "for a size chosen at launch, use cuda.shared.array(0, dtype) and pass the "
            "size in bytes as the launch's 4th item: kernel[grid, block, stream, nbytes]"
            if name == "shared.array"
            else "use a constant: a literal, or a global variable the kernel reads"
        )
        heading = no_implementation(name, call_text(t, site, name.rsplit(".", 1)[-1]))
        raise TypingError(
            f"{heading}the shape of cuda.{name} must be a constant integer or a tuple of "
            "constant integers",
            site.loc,
            hint=hint,
        )
    if any(d < 0 for d in dims):
        raise TypingError(f"the shape of cuda.{name} must not be negative: {shape}", site.loc)
    if 0 in dims and not (name == "shared.array" and dims == (0,)):
        # (0,) is dynamic shared memory, sized by the launch; nothing else may be empty.
        raise TypingError(f"cuda.{name} cannot have an empty dimension: {shape}", site.loc)
    return tuple(dims)


def _dtype(t: Typer, site: CallSite, name: str) -> Scalar | Record:
    spec = t.const_value(site.arg(1, "dtype"), default=None)
    try:
        dtype = to_type(spec) if spec is not None else None
    except TypeError:
        if isinstance(spec, str):  # numba's words for a name NumPy does not know
            raise TypingError(f"Invalid NumPy dtype specified: {spec!r}", site.loc) from None
        dtype = None
    if not isinstance(dtype, (Scalar, Record)):
        given = repr(spec) if type(spec).__module__.startswith("numpy") else None
        raise TypingError(
            f"{cannot_infer(t, site.op.result.id)}the dtype of cuda.{name} must be a constant "
            "scalar type such as float32 or np.int32, not "
            f"{given or describe(site.arg(1, 'dtype').type)}",
            site.loc,
        )
    return dtype


def array_alloc(name: str):
    """``cuda.shared.array(shape, dtype, alignment=None)`` and ``cuda.local.array(...)``;
    an alignment (bytes) rides in the op's attributes."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 3, keywords=("shape", "dtype", "alignment"))
        shape, dtype = _shape(t, site, name), _dtype(t, site, name)
        if name == "shared.array":
            _check_static_shared(site, shape, dtype)
        else:
            _check_local(site, shape, dtype)
        attrs = (("shape", shape), ("dtype", dtype))
        align = _alignment(t, site, name)
        if align is not None:
            attrs += (("alignment", align),)
        return t.emit(
            Intrinsic(
                loc=site.loc,
                result=site.result(Array(dtype, len(shape), "C")),
                name=name,
                args=(),
                attrs=attrs,
            )
        )

    return rule


# CUDA's limit on a block's static shared memory (``__shared__`` arrays of fixed size)
# on every architecture cujit targets; more needs dynamic shared memory, opted in at launch.
STATIC_SHARED_LIMIT = 48 * 1024


def _check_static_shared(site: CallSite, shape: tuple[int, ...], dtype) -> None:
    """A fixed-size shared array over the limit would fail at link, naming no line."""
    nbytes = _nbytes(shape, dtype)
    if nbytes > STATIC_SHARED_LIMIT:
        raise TypingError(
            f"cuda.shared.array({shape[0] if len(shape) == 1 else shape}, {dtype}) takes "
            f"{nbytes} bytes; a block's static "
            f"shared memory is at most {STATIC_SHARED_LIMIT} bytes (48 KiB)",
            site.loc,
            hint="for more, use dynamic shared memory: cuda.shared.array(0, dtype), with the "
            "size in bytes as the launch's 4th item: kernel[grid, block, stream, nbytes]",
        )


def _nbytes(shape: tuple[int, ...], dtype) -> int:
    nbytes = dtype.itemsize
    for d in shape:
        nbytes *= d
    return nbytes


# CUDA's limit on a thread's local memory (every compute capability since 2.0): a local
# array past it compiles and links, and only its launch fails, naming nothing.
LOCAL_LIMIT = 512 * 1024


def _check_local(site: CallSite, shape: tuple[int, ...], dtype) -> None:
    nbytes = _nbytes(shape, dtype)
    if nbytes > LOCAL_LIMIT:
        raise TypingError(
            f"cuda.local.array({shape[0] if len(shape) == 1 else shape}, {dtype}) takes "
            f"{nbytes} bytes; a thread's local memory is at most {LOCAL_LIMIT} bytes "
            "(512 KiB), so no launch could run it",
            site.loc,
            hint="keep the data in a global array (cuda.device_array) and give each "
            "thread its slice",
        )


def _alignment(t: Typer, site: CallSite, name: str) -> int | None:
    """numba's rule: a constant positive power of two, a multiple of a pointer's 8 bytes
    (None, or no argument, asks for no particular alignment)."""
    arg = site.arg(2, "alignment", None)
    if arg is None:
        return None
    value = t.const_value(arg, default=arg)
    if value is None:
        return None
    if value is arg or isinstance(value, bool) or not isinstance(value, int):
        raise RequireLiteralValue(
            f"cuda.{name}'s alignment must be a constant integer, not {describe(arg.type)}",
            site.loc,
        )
    if value <= 0 or value & (value - 1) or value % 8:
        raise ConstantValueError(
            f"cuda.{name}: Alignment must be a positive power of 2 and a multiple of "
            f"8 (bytes), not {value}",
            site.loc,
        )
    return value


class ConstData(bytes):
    """The bytes of a ``cuda.const.array_like`` table: plain bytes that print short
    (IR dumps name their size and a digest, not every byte)."""

    def __repr__(self) -> str:
        import hashlib

        return f"<{len(self)} bytes sha1:{hashlib.sha1(self).hexdigest()[:12]}>"


def call_const_array_like(t: Typer, site: CallSite) -> Value:
    """``cuda.const.array_like(ary)``: ``ary`` must be a NumPy array known at compile
    time (a global or closure variable: a PyObject Const); its contents are frozen
    into the kernel as a constant-memory table, read as a C-layout array."""
    import numpy as np

    site.expect(1, 1, keywords=("ary",))
    arg = site.arg(0, "ary")
    value = arg.type.value if isinstance(arg.type, PyObject) else None
    if not isinstance(value, np.ndarray):
        what = describe(arg.type) if not isinstance(arg.type, PyObject) else type(value).__name__
        raise TypingError(
            f"cuda.const.array_like needs a NumPy array known at compile time, not {what}",
            site.loc,
            hint="pass a NumPy array held in a global or closure variable; its "
            "contents are copied into the kernel when it is compiled",
        )
    return constant_array(t, value, site.loc, site.result, "cuda.const.array_like")


def is_frozen_array(value: object) -> bool:
    """Whether a global or closure value is a host NumPy array that kernels read as a
    constant, as numba freezes them (device arrays and other subclasses are not)."""
    from cujit.types.core import loaded_module

    np = loaded_module("numpy")
    return np is not None and type(value) is np.ndarray


def constant_array(t: Typer, value, loc, result, what: str) -> Value:
    """The array ``value`` (a NumPy array known at compile time) frozen into the kernel:
    a ``const.array_like`` op, a C-layout array over a constant-memory table of its
    bytes.  ``result(type)`` makes the result value."""
    import numpy as np

    from cujit.types import from_dtype

    try:
        dtype = from_dtype(value.dtype)
    except (TypeError, ValueError, KeyError, NotImplementedError):
        dtype = None
    if not isinstance(dtype, (Scalar, Record)):
        raise TypingError(f"{what} does not support arrays of dtype {value.dtype}", loc)
    if value.ndim == 0:
        raise TypingError(f"{what} needs an array of at least one dimension", loc)
    data = ConstData(np.ascontiguousarray(value).tobytes())
    v = t.emit(
        Intrinsic(
            loc=loc,
            result=result(Array(dtype, value.ndim, "C")),
            name="const.array_like",
            args=(),
            attrs=(("shape", tuple(value.shape)), ("dtype", dtype), ("data", data)),
        )
    )
    t.const_arrays.add(v.id)  # read-only: stores into it are refused (Typer.check_writable)
    return v


class GlobalArray:
    """A device array a kernel reads from a global or closure variable, by reference
    (numba-cuda captures them so): the kernel holds its address, shape and strides as
    constants, sees writes made to it after the compile, and keeps the array alive.
    Two are equal when they view the same object the same way."""

    __slots__ = ("array", "dtype", "shape", "strides")

    def __init__(self, array, dtype, shape: tuple[int, ...], strides: tuple[int, ...]):
        self.array, self.dtype, self.shape, self.strides = array, dtype, shape, strides

    def __repr__(self) -> str:
        return f"<global {type(self.array).__name__} {self.dtype}{list(self.shape)}>"

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, GlobalArray)
            and other.array is self.array
            and (other.dtype, other.shape, other.strides) == (self.dtype, self.shape, self.strides)
        )

    def __hash__(self) -> int:
        return hash((id(self.array), self.shape, self.strides))

    def address(self, target: str) -> int | None:
        """The data address a kernel on ``target`` uses, or None where the array's
        memory is not that target's (a GPU array on the CPU target, a host one on
        the GPU)."""
        import numpy as np

        if isinstance(self.array, np.ndarray):  # host memory; mapped memory has a CAI too
            if target == "cpu":
                return self.array.ctypes.data
            cai = getattr(self.array, "__cuda_array_interface__", None)
            if cai is None or getattr(self.array, "__cujit_host_memory__", False):
                return None  # (the CPU target's device arrays: their CAI is the host's)
            return int(cai["data"][0])
        if target == "cpu":  # the CPU target's lowering finds its own memory's (interop.py)
            return None
        return int(self.array.__cuda_array_interface__["data"][0])


def global_array(t: Typer, value, loc, result) -> Value:
    """The device array ``value`` (a global or closure variable) as an array value the
    kernel addresses directly: a ``global.array`` op (``codegen.arrays``)."""
    import numpy as np

    from cujit.types import from_dtype

    if isinstance(value, np.ndarray):
        dtype, shape, strides = value.dtype, value.shape, value.strides
    else:
        cai = value.__cuda_array_interface__
        dtype, shape = np.dtype(cai["typestr"]), tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is None:  # C-contiguous
            strides = (
                np.empty(shape, np.dtype(dtype), order="C").strides
                if all(shape)
                else (0,) * len(shape)
            )
    try:
        scalar = from_dtype(np.dtype(dtype))
    except (TypeError, ValueError, KeyError, NotImplementedError):
        scalar = None
    what = f"the global {type(value).__name__}"
    if not isinstance(scalar, Scalar):
        raise TypingError(f"{what} has dtype {dtype}, which kernels do not support", loc)
    probe = (
        np.lib.stride_tricks.as_strided(np.empty(1, dtype), shape, strides)
        if all(shape)
        else np.empty(shape, dtype)
    )
    layout = "C" if probe.flags.c_contiguous else "F" if probe.flags.f_contiguous else "A"
    data = GlobalArray(value, scalar, tuple(int(n) for n in shape), tuple(int(s) for s in strides))
    return t.emit(
        Intrinsic(
            loc=loc,
            result=result(Array(scalar, len(shape), layout)),
            name="global.array",
            args=(),
            attrs=(("array", data),),
        )
    )


def call_this_grid(t: Typer, site: CallSite) -> Value:
    """``cuda.cg.this_grid()``: the grid group, a compile-time object (its one method,
    ``sync``, needs nothing from it at run time), and the intrinsic ``cuda.this_grid``
    that marks the kernel cooperative."""
    from cujit.device_api import grid_group

    site.expect(0, 0)
    # As numba, a kernel that takes the grid group is launched cooperatively.
    t.emit(Intrinsic(loc=site.loc, result=t.fresh(none), name="cuda.this_grid", args=()))
    return t.const(grid_group, site.loc, result=site.op.result)


def call_grid_sync(t: Typer, site: CallSite) -> Value:
    """``g.sync()`` on ``g = cuda.cg.this_grid()``: a barrier for every thread of the grid."""
    site.expect(0, 0)
    return t.emit(Intrinsic(loc=site.loc, result=site.result(none), name="cuda.grid_sync", args=()))
