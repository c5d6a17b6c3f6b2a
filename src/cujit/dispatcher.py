"""``@cuda.jit`` kernels: specialisation per argument types, launch configuration, launch.

A ``Kernel`` holds the Python function and one compiled specialisation per
argument-type tuple.  ``kernel[grid, block, stream, shmem](*args)`` types the
arguments, finds (or compiles) the specialisation, loads its cubin on the
current device once, and hands the flat parameters to the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass

from cujit import abi, config
from cujit.diagnostics import CujitError, LaunchError
from cujit.options import Options
from cujit.types import Array, Scalar, Signature, Type, parse_signature, typeof
from cujit.types.core import NoneType


def normalize_dim(value, what: str) -> tuple[int, int, int]:
    """An int or a 1-3 tuple of ints as a (x, y, z) triple, checked positive."""
    items = value if isinstance(value, tuple) else (value,)
    if not 1 <= len(items) <= 3:
        raise LaunchError(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}")
    dims = []
    for v in items:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise LaunchError(f"{what} must be made of ints, got {value!r}")
        v = v.__index__()
        if v <= 0:
            raise LaunchError(f"{what} dimensions must be positive, got {value!r}")
        dims.append(v)
    while len(dims) < 3:
        dims.append(1)
    return (dims[0], dims[1], dims[2])


def user_facing(exc: CujitError) -> CujitError:
    """Drop cujit's frames from a compile error unless CUJIT_SHOW_INTERNALS is set."""
    if not config.SHOW_INTERNALS.get():
        exc.__cause__ = None
        exc.__suppress_context__ = True
        exc.__traceback__ = None
    return exc


@dataclass
class Specialization:
    """One compiled form of a kernel: its argument types and the compiler's outputs."""

    arg_types: tuple[Type, ...]
    result: object  # pipeline.CompileResult
    param_kinds: list[str]
    functions: dict  # device id -> loaded runtime Function (its Module kept beside it)
    packer: object = None  # the runtime's parameter packer, made on first launch


class Kernel:
    """A Python function compiled on demand into CUDA kernels (``@cuda.jit``)."""

    def __init__(self, pyfunc, signatures=(), options: Options | None = None, **flags):
        self.py_func = pyfunc
        self.__name__ = getattr(pyfunc, "__name__", "kernel")
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.__wrapped__ = pyfunc
        self._base_options = options or Options(debug=bool(flags.get("debug")) or
                                                config.DEBUG.get(),
                                                fastmath=bool(flags.get("fastmath")))
        self.overloads: dict[tuple[Type, ...], Specialization] = {}
        self.eager = bool(signatures)
        for sig in signatures:
            self.compile(parse_signature(sig))

    def __repr__(self) -> str:
        return f"<cujit kernel {self.__name__}>"

    # -- compiling ---------------------------------------------------------
    def _options(self) -> Options:
        from cujit.runtime import context

        arch = context.compute_capability_or(config.ARCH.get() or self._base_options.arch)
        if arch == self._base_options.arch:
            return self._base_options
        return Options(arch=arch, opt=self._base_options.opt,
                       fastmath=self._base_options.fastmath, debug=self._base_options.debug)

    def compile(self, sig) -> Specialization:
        """Compile (once) for a signature or a tuple of argument types."""
        sig = sig if isinstance(sig, Signature) else parse_signature(tuple(sig))
        if not isinstance(sig.return_type, NoneType):
            raise user_facing(CujitError(
                f"kernel {self.__name__!r} must return void, not {sig.return_type}"))
        key = tuple(sig.args)
        spec = self.overloads.get(key)
        if spec is None:
            from cujit.pipeline import compile_kernel

            try:
                result = compile_kernel(self.py_func, key, self._options())
            except CujitError as exc:
                raise user_facing(exc) from None
            kinds: list[str] = []
            for t in key:
                kinds.extend(abi.param_kinds(t))
            spec = Specialization(key, result, kinds, {})
            self.overloads[key] = spec
        return spec

    def inspect_ptx(self, sig=None) -> str:
        return self._pick(sig).result.ptx

    def inspect_llvm(self, sig=None) -> str:
        return self._pick(sig).result.outputs["llvm"]

    def _pick(self, sig) -> Specialization:
        if sig is None:
            if len(self.overloads) != 1:
                raise ValueError("give the signature: this kernel has "
                                 f"{len(self.overloads)} specialisations")
            return next(iter(self.overloads.values()))
        return self.compile(parse_signature(sig))

    # -- launching ---------------------------------------------------------
    def __getitem__(self, config_):
        if not isinstance(config_, tuple) or not 2 <= len(config_) <= 4:
            raise LaunchError("launch a kernel as kernel[grid, block](...) or "
                              "kernel[grid, block, stream, dynamic_shared_bytes](...)")
        grid, block, *rest = config_
        stream = rest[0] if rest else 0
        shmem = rest[1] if len(rest) > 1 else 0
        return LaunchConfig(self, normalize_dim(grid, "grid"), normalize_dim(block, "block"),
                            stream, int(shmem))

    def __call__(self, *args):
        raise LaunchError(f"kernel {self.__name__!r} needs a launch configuration: "
                          f"{self.__name__}[blocks, threads_per_block](...)")

    def _arg_types(self, args) -> tuple[Type, ...]:
        try:
            types = tuple(typeof(a) for a in args)
        except TypeError as exc:
            raise LaunchError(f"kernel {self.__name__!r}: {exc}") from None
        if not self.eager or types in self.overloads:
            return types
        for key in self.overloads:
            if len(key) == len(types) and all(map(_accepts, key, types)):
                return key
        sigs = ", ".join("(" + ", ".join(map(str, k)) + ")" for k in self.overloads)
        raise LaunchError(f"kernel {self.__name__!r} was compiled for {sigs} and cannot "
                          "take arguments of types (" + ", ".join(map(str, types)) + ")")

    def launch(self, args, grid, block, stream=0, shmem=0) -> None:
        from cujit.runtime import context, launch as rt_launch, module as rt_module

        code = self.py_func.__code__
        if len(args) != code.co_argcount:
            raise LaunchError(f"kernel {self.__name__!r} takes {code.co_argcount} arguments, "
                              f"{len(args)} given")
        types = self._arg_types(args)
        spec = self.overloads.get(types) or self.compile(types)
        dev = context.current_device_id()
        fn = spec.functions.get(dev)
        if fn is None:
            mod = rt_module.load_module(spec.result.cubin)
            fn = spec.functions[dev] = mod.get_function(spec.result.symbol)
            spec.functions[(dev, "module")] = mod
            if spec.packer is None:
                spec.packer = rt_launch.get_packer(spec.param_kinds)
        values, writebacks = rt_launch.prepare_args(types, args, stream)
        rt_launch.launch(fn, grid, block, stream, shmem, spec.packer, values)
        if writebacks:
            rt_launch.finish_writebacks(writebacks, stream)


def _accepts(declared: Type, given: Type) -> bool:
    """Whether an eager signature's parameter type takes an argument of type ``given``."""
    if declared == given:
        return True
    if isinstance(declared, Scalar) and isinstance(given, Scalar):
        return True  # scalars convert, as numba converts them at launch
    if isinstance(declared, Array) and isinstance(given, Array):
        return (declared.dtype == given.dtype and declared.ndim == given.ndim
                and declared.layout in ("A", given.layout))
    return False


@dataclass(frozen=True)
class LaunchConfig:
    kernel: Kernel
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    stream: object = 0
    shmem: int = 0

    def __call__(self, *args) -> None:
        self.kernel.launch(args, self.grid, self.block, self.stream, self.shmem)


def jit(func_or_sig=None, device: bool = False, debug: bool = False, fastmath: bool = False,
        **kwargs):
    """``@cuda.jit``, ``@cuda.jit("void(float32[:])")`` and ``@cuda.jit(debug=True)``."""
    if device:
        from cujit.diagnostics import UnsupportedError

        raise UnsupportedError("device functions (jit(device=True)) are not supported yet")
    flags = dict(debug=debug, fastmath=fastmath)
    if callable(func_or_sig) and not isinstance(func_or_sig, (Type, Signature, str)):
        return Kernel(func_or_sig, (), **flags)
    sigs = () if func_or_sig is None else (
        func_or_sig if isinstance(func_or_sig, list) else [func_or_sig])

    def decorate(pyfunc):
        return Kernel(pyfunc, sigs, **flags)

    return decorate


def compile_ptx(pyfunc, sig, device: bool = False, debug: bool = False, fastmath: bool = False,
                cc=None, opt: bool = True, **kwargs):
    """numba's ``cuda.compile_ptx``: ``(ptx, return_type)`` for ``pyfunc`` at ``sig``."""
    from cujit.pipeline import compile_kernel

    sig = parse_signature(sig)
    options = Options(arch=tuple(cc) if cc else Options().arch, opt=3 if opt else 0,
                      fastmath=fastmath, debug=debug)
    try:
        result = compile_kernel(pyfunc, sig.args, options, stop_after="ptx")
    except CujitError as exc:
        raise user_facing(exc) from None
    return result.ptx, sig.return_type


