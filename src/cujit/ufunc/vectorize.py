"""``cuda.vectorize``: NumPy-style ufuncs whose loops are cujit kernels.

The user's scalar function becomes a device function; each loop (input types -> output
type) and operand layout gets a generated grid-stride kernel calling it (``kernels.py``).
A call resolves its loop as NumPy does (``resolve.py``), broadcasts, copies host arrays
to the device and the result back, and leaves device operands where they are.
"""

from __future__ import annotations

import warnings

import numpy as np

from cujit import config
from cujit.diagnostics import api_boundary
from cujit.types import Scalar, Signature, from_dtype
from cujit.ufunc import kernels, resolve
from cujit.ufunc.arrays import arrays_for


def device_function(pyfunc, signatures=()):
    """``pyfunc`` as a cujit device function (kept as is when it already is one)."""
    from cujit.dispatcher import DeviceFunction

    if isinstance(pyfunc, DeviceFunction):
        return pyfunc
    return DeviceFunction(pyfunc, signatures)


def return_type(devfn, arg_types: tuple[Scalar, ...]) -> Scalar:
    """The type ``devfn`` returns for ``arg_types`` (stages 1-5 of the device function)."""
    from cujit.pipeline import type_device_function

    fn = type_device_function(devfn, arg_types)
    if not isinstance(fn.return_type, Scalar):
        raise TypeError(
            f"vectorized function {devfn.__name__!r} must return a scalar, not {fn.return_type}"
        )
    return fn.return_type


def _rebuild_ufunc(func, signatures, target, identity, options, filename: str):
    """The receiving end of ``UFunc.__reduce__``."""
    from cujit import pickling

    return UFunc(pickling.restored(func, filename), signatures, target, identity, **options)


class UFunc:
    """A GPU ufunc: ``ufunc(*inputs, out=None, stream=0)`` as NumPy's, on the device."""

    def __init__(self, pyfunc, signatures=(), target: str | None = None, identity=None, **options):
        self.py_func = getattr(pyfunc, "py_func", pyfunc)
        self.__name__ = getattr(self.py_func, "__name__", "ufunc")
        self.__doc__ = getattr(self.py_func, "__doc__", None)
        self.target = target or config.TARGET.get()
        self.nin = self.py_func.__code__.co_argcount
        self.nout = 1
        self.identity = identity
        self.device_function = device_function(pyfunc)
        self._signatures, self._options = tuple(signatures), dict(options)
        self.loops = [self._declared_loop(s) for s in signatures]
        self.dynamic = not self.loops
        self._kernels: dict[tuple, object] = {}
        # Calls on device operands seen before: their launch, keyed by the operands'
        # classes, dtypes, shapes and strides (see _fast_key).
        self._fast: dict[tuple, tuple] = {}

    def _declared_loop(self, sig) -> resolve.Loop:
        """A declared signature's loop; numba's tuple of argument types alone takes the
        return type the function gives them."""
        inputs = resolve.parse_inputs(sig, self.nin)
        if inputs is None:
            return resolve.parse_loop(sig, self.nin)
        return resolve.Loop(inputs, return_type(self.device_function, inputs))

    def __repr__(self) -> str:
        return f"<cujit ufunc {self.__name__}>"

    def __reduce__(self):
        # Its function and decorator arguments; the receiver compiles its own loops.
        from cujit import pickling

        func = pickling.by_value(self.py_func)  # a local or __main__ function's code
        args = (func, self._signatures, self.target, self.identity, self._options)
        return (_rebuild_ufunc, (*args, self.py_func.__code__.co_filename))

    @property
    def types(self) -> list[str]:
        return [str(loop) for loop in self.loops]

    @property
    def ntypes(self) -> int:
        return len(self.loops)

    def _loop(self, operands) -> resolve.Loop:
        if self.dynamic:
            wanted = resolve.dynamic_types(operands)
            for loop in self.loops:
                if loop.inputs == wanted:
                    return loop
            loop = resolve.Loop(wanted, return_type(self.device_function, wanted))
            self.loops.append(loop)
            return loop
        return resolve.select_loop(self.__name__, self.loops, operands)

    def _kernel(self, loop, kinds: str, ndim: int, out: Scalar):
        key = (loop, kinds, ndim, out)
        kern = self._kernels.get(key)
        if kern is None:
            kern = kernels.map_kernel(
                self.device_function, loop.inputs, kinds, ndim, out, self.target
            )
            self._kernels[key] = kern
        return kern

    def _coarsened(self, loop, kinds: str, out: Scalar, args, stream):
        """The flat form's one-element-per-thread kernel where cujit coarsens it
        (``cujit.coarsen``), else None (the grid-stride kernel serves)."""
        key = (loop, kinds, "coarsened", out)
        if key not in self._kernels:
            kern = None
            if config.COARSEN.get():
                kern = kernels.flat_kernel(
                    self.device_function, loop.inputs, kinds, out, self.target
                )
                plan = kern._specialize(args, stream)[1].coarse
                if getattr(plan, "k", None) is None:  # not coarsened (none, or 32-bit only)
                    kern = None
            self._kernels[key] = kern
        return self._kernels[key]

    @api_boundary
    def __call__(self, *args, out=None, stream=0):
        if len(args) == self.nin + 1 and out is None:
            *args, out = args
        key = _fast_key(args, out, stream)
        hit = self._fast.get(key) if key is not None else None
        if hit is not None:  # the same kinds of device operands as an earlier call
            launch, casts = hit
            launch(out, *[v if c is None else c(v) for v, c in zip(args, casts, strict=True)])
            return out
        if len(args) != self.nin:
            raise TypeError(f"ufunc '{self.__name__}' takes {self.nin} input(s), got {len(args)}")
        mem = arrays_for(self.target)
        operands = [mem.operand(a, stream) for a in args]
        loop = self._loop(operands)
        arrays = [k for k, v in enumerate(operands) if not _is_scalar(v)]
        shape = resolve.broadcast_shape(self.__name__, [tuple(operands[k].shape) for k in arrays])
        on_device = any(mem.is_device(v) for v in operands) or mem.is_device(out)
        host_out = None
        if out is not None:
            out = mem.operand(out, stream)
            resolve.check_output(self.__name__, out, loop, shape)
            if not mem.is_device(out):
                host_out, out = out, None
        if out is None:
            dtype = loop.output.dtype if host_out is None else host_out.dtype
            out = mem.empty(shape, dtype, stream)
        else:
            out = mem.as_device(out, stream)
        dev = [
            _device_operand(mem, v, t, stream) for v, t in zip(operands, loop.inputs, strict=True)
        ]
        launch = self._run(mem, loop, dev, out, shape, stream)
        if key is not None and launch is not None and on_device and host_out is None:
            self._fast[key] = (
                launch,
                [
                    t.dtype.type if _is_scalar(v) else None
                    for v, t in zip(operands, loop.inputs, strict=True)
                ],
            )
        if on_device:
            return out
        if host_out is not None:
            mem.copy_into_host(out, host_out, stream)
            return host_out
        host = mem.to_host(out, stream)
        return host[()] if shape == () else host

    def _run(self, mem, loop, dev, out, shape, stream):
        """Launch the loop's kernel; return the launch when later calls with operands
        like these may reuse it as it is (1-D contiguous operands)."""
        if out.size == 0:
            return None
        kinds = "".join("s" if _is_scalar(v) else "a" for v in dev)
        flat = out.is_c_contiguous() and all(
            tuple(v.shape) == shape and v.is_c_contiguous() for v in dev if not _is_scalar(v)
        )
        if flat:
            args = [mem.flat(out) if shape else out.reshape(1)]
            args += [v if _is_scalar(v) else (mem.flat(v) if shape else v.reshape(1)) for v in dev]
            ndim = 0
        else:
            args = [out] + [
                v
                if _is_scalar(v)
                else mem.view(v, shape, resolve.broadcast_strides(v.shape, v.strides, shape))
                for v in dev
            ]
            ndim = len(shape)
        kern = self._coarsened(loop, kinds, from_dtype(out.dtype), args, stream) if flat else None
        if kern is not None:  # one element per thread, each thread then moving k of them
            tpb = kernels.block_size(kern, args, stream)
            blocks = -(-out.size // tpb)
        else:
            kern = self._kernel(loop, kinds, ndim, from_dtype(out.dtype))
            blocks, tpb = kernels.launch_shape(
                out.size, kernels.block_size(kern, args, stream), kernels.UNROLL if ndim == 0 else 1
            )
        launch = kern[blocks, tpb, stream]
        launch(*args)
        reusable = flat and all(
            a is v for a, v in zip(args[1:], dev, strict=True) if not _is_scalar(v)
        )
        return launch if reusable and args[0] is out else None

    def reduce(self, array, axis=0, stream=0):
        """``ufunc.reduce`` of a binary ufunc over a 1-D array (numba's CUDA form)."""
        from cujit.ufunc.reduce import Reduce

        if self.nin != 2:
            raise ValueError(
                f"reduce only supported for binary functions, not "
                f"'{self.__name__}' with {self.nin} inputs"
            )
        if axis not in (0, None) or np.ndim(array) != 1:
            raise NotImplementedError("ufunc.reduce of a 1-D array over axis 0 only")
        return Reduce(self.device_function, target=self.target)(array, stream=stream)


def _fast_key(args, out, stream):
    """What decides a call's loop and launch, for calls whose operands are all arrays
    or typed scalars (a Python int's value matters to the loop, so it has no key)."""
    if out is None or not hasattr(out, "dtype"):  # none, or a bare CUDA Array Interface
        return None
    key = [id(stream), type(out), out.dtype, out.shape, out.strides]
    for a in args:
        cls = type(a)
        if cls is int:
            return None
        if cls is float or cls is bool or cls is complex:
            key.append(cls)
        else:
            key += (
                cls,
                getattr(a, "dtype", None),
                getattr(a, "shape", None),
                getattr(a, "strides", None),
            )
    return tuple(key)


def _is_scalar(value) -> bool:
    return isinstance(value, (bool, int, float, complex, np.generic))


def _device_operand(mem, value, loop_type: Scalar, stream):
    if _is_scalar(value):
        return loop_type.dtype.type(value)
    if mem.is_device(value):
        return mem.as_device(value, stream)
    return mem.to_device(value, stream)


def check_vectorize_options(options: dict) -> None:
    """numba's rules: ``nopython`` is redundant (a warning), anything else unknown."""
    for name in options:
        if name == "nopython":
            warnings.warn(
                "nopython kwarg for cuda target is redundant", RuntimeWarning, stacklevel=3
            )
        else:
            raise KeyError(
                f"Unrecognized options. cuda vectorize target does not support option: '{name}'"
            )


def vectorize(
    signatures=None, target: str | None = None, identity=None, device: bool = False, **options
):
    """``@cuda.vectorize(['float32(float32, float32)'])`` or ``@cuda.vectorize`` (lazy).

    ``target`` 'cuda' (numba's spelling) or 'cpu'; ``device=True`` gives a device
    function with those signatures, callable from kernels, instead of a ufunc;
    ``identity`` is kept as the ufunc's; ``nopython`` is accepted (and redundant)."""
    if options.pop("cache", False):
        raise TypeError("caching is not supported")
    check_vectorize_options(options)
    if callable(signatures) and not isinstance(signatures, (str, list, tuple)):
        return UFunc(signatures, (), _target(target), identity)
    sigs = (
        []
        if signatures is None
        else ([signatures] if isinstance(signatures, (str, Signature)) else list(signatures))
    )

    def decorate(pyfunc):
        if device:
            return device_function(pyfunc, sigs)
        return UFunc(pyfunc, sigs, _target(target), identity)

    return decorate


def _target(target: str | None) -> str:
    # 'cuda' is numba's name for a GPU ufunc: it runs on the configured target
    # (CUJIT_TARGET=cpu runs it on the host, as every other kernel).
    if target in (None, "cuda", "gpu"):
        return config.TARGET.get()
    if target == "cpu":
        return "cpu"
    raise ValueError(f"unknown vectorize target {target!r}: use 'cuda' or 'cpu'")
