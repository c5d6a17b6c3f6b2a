"""``@cuda.jit`` kernels: specialisation per argument types, launch configuration, launch.

A ``Kernel`` holds the Python function and one compiled specialisation per
argument-type tuple.  ``kernel[grid, block, stream, shmem](*args)`` types the
arguments, finds (or compiles) the specialisation, loads its cubin on the
current device once, and hands the flat parameters to the runtime.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import TYPE_CHECKING

# What few launches need (hints for mistakes, declared signatures' overloads, foreign
# code, pickling) is imported where it is used, so that ``from cujit import cuda``
# stays light.
from cujit import (
    arghints,
    config,
    decorator,
    events,
    gcpause,
    guards,
    jit_options,
    launchconfig,
    numba_config,
    variants,
    warmup,
)
from cujit.argtypes import fast_typeof
from cujit.configured import ForAll, LaunchConfig
from cujit.device_function import DeviceFunction, is_importable  # noqa: F401  (re-exported)
from cujit.diagnostics import (
    CujitError,
    LaunchError,
    LaunchTypeError,
    LaunchValueError,
    NoGPUError,
    TypingError,
    api_boundary,
    hide_internals,
    user_facing,
)
from cujit.frozen import mutable
from cujit.inspection import (
    InspectableDeviceFunction,
    KernelInspection,
    KernelOverloads,
    cuda_result,
)
from cujit.options import Options
from cujit.types import Array, Signature, Type, parse_signature, typeof
from cujit.types.core import NoneType

if TYPE_CHECKING:
    from cujit import abi

_RUNTIME: tuple = ()  # (runtime.context, runtime.launch), imported by the first launch


def _load_runtime() -> tuple:
    global _RUNTIME
    from cujit.runtime import context
    from cujit.runtime import launch as rt_launch

    _RUNTIME = (context, rt_launch)
    return _RUNTIME


def normalize_dim(value, what: str) -> tuple[int, int, int]:
    """An int or a 1-3 tuple of ints as a (x, y, z) triple, checked positive.

    The messages name the dimensions as numba's do (``griddim``, ``blockdim``), and the
    errors are numba's kinds too: a ValueError for the count, a TypeError for a non-int.
    """
    items = value if isinstance(value, tuple) else (value,)
    name = what if what.endswith("dim") else what + "dim"
    if not 1 <= len(items) <= 3:
        raise LaunchValueError(
            f"{name} must be a sequence of 1, 2 or 3 integers, got {list(items)!r}"
        )
    dims = []
    for v in items:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            message = f"{name} must be a sequence of integers, got {list(items)!r}"
            from cujit import hints

            raise LaunchTypeError(
                hints.with_hint(message, "float-dimension") if isinstance(v, float) else message
            )
        v = v.__index__()
        if v <= 0:
            raise LaunchValueError(f"{what} dimensions must be positive, got {value!r}")
        dims.append(v)
    while len(dims) < 3:
        dims.append(1)
    return (dims[0], dims[1], dims[2])


# Stages whose outputs a kernel's specialisation lets go of once compiled: the bytecode,
# control-flow graph and untyped IR, the largest group of objects a compile makes, which
# nothing reads after it (numba's dumps print them as it ends).  Kept, every kernel of a
# program would hold them and the cyclic collector would walk them again and again.
# ``pipeline.compile_kernel`` itself returns every stage's output.
FORGOTTEN_STAGES = ("bytecode", "cfg", "ir")


@mutable
class Specialization:
    """One compiled form of a kernel: its argument types and the compiler's outputs."""

    arg_types: tuple[Type, ...]
    result: object  # pipeline.CompileResult
    record: abi.LaunchRecord  # what a launch needs: symbol, parameters passed, ...
    param_kinds: list[str]  # of the parameters a launch passes (LaunchRecord.param_kinds)
    functions: dict  # device id -> loaded runtime Function (its Module kept beside it)
    packer: object = None  # the runtime's parameter packer, made on first launch
    flatten: object = None  # the runtime's fast argument flattener, made with the packer
    # Generated launcher code per kind of arguments (runtime.launch.make_launcher), which
    # every launch configuration of this specialisation binds its shape to.
    launcher_code: dict = dataclasses.field(default_factory=dict)
    # Set when its compilation read the launch configuration and said that its code
    # depends on it (``Kernel.mark_launch_config_sensitive``).
    launch_config_sensitive: bool = False
    # cujit.coarsen.Plan or cujit.index_width.Plan: the variant, chosen per launch
    coarse: object = None
    # On the CPU target: its CUDA compilation, made when inspected (cujit.cuda_view).
    cuda_view: object = None
    linked: tuple = ()  # the names of the files linked into it (link=, declare_device)

    def let_go(self) -> None:
        """Drop the outputs of ``FORGOTTEN_STAGES`` from the result, once compiled."""
        for stage in FORGOTTEN_STAGES:
            self.result.outputs.pop(stage, None)

    @property
    def _codelibrary(self):
        """numba's code library, as far as programs read it: ``_linking_files``, the files
        linked (never CUDA's device runtime: cujit's grid barrier is inline code)."""
        return SimpleNamespace(_linking_files=list(self.linked))

    @property
    def cooperative(self) -> bool:
        """numba's name: whether the kernel syncs the grid, so that it is launched as a
        cooperative kernel (``cuLaunchCooperativeKernel``)."""
        return self.record.cooperative

    def inspect_llvm(self, target: str | None = None) -> str:
        """The NVVM IR of this specialisation (numba's ``_Kernel.inspect_llvm``);
        ``target="cpu"``: the host module's LLVM IR, on the CPU target."""
        from cujit.inspection import specialization_llvm

        return specialization_llvm(self, target)

    def inspect_asm(self, cc=None, target: str | None = None) -> str:
        """Its PTX (numba's ``_Kernel.inspect_asm``): on a GPU for the one compute
        capability it was compiled for; on the CPU target for ``cc`` (default: the CPU
        device's).  ``target="cpu"``: the host assembly, on the CPU target."""
        from cujit.inspection import specialization_asm

        return specialization_asm(self, cc, target)

    @property
    def _type_annotation(self):
        """numba's annotation: ``typemap`` maps each local variable to its type."""
        from cujit.type_annotation import annotate

        return annotate(self.result.outputs.get("typed"))

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize: int = 0) -> int:
        """numba's ``max_cooperative_grid_blocks``: the most blocks of ``blockdim`` a
        cooperative launch (a kernel that syncs the grid) may have on the current device:
        the blocks one multiprocessor holds at once, times the multiprocessors."""
        bx, by, bz = normalize_dim(blockdim, "blockdim")
        native = self.result.outputs.get("native")
        if native is not None:  # the CPU target
            return native.max_cooperative_grid_blocks(bx * by * bz)
        from cujit.runtime import context
        from cujit.runtime.occupancy import max_cooperative_blocks

        dev = context.current_device_id()
        fn = self.functions.get(dev) or Kernel._load(self, dev)
        return max_cooperative_blocks(fn, bx * by * bz, int(dynsmemsize))


class Kernel(KernelInspection):
    """A Python function compiled on demand into CUDA kernels (``@cuda.jit``)."""

    @api_boundary
    def __init__(self, pyfunc, signatures=(), options: Options | None = None, **flags):
        self.py_func = pyfunc
        self.__name__ = getattr(pyfunc, "__name__", "kernel")
        self.__qualname__ = getattr(pyfunc, "__qualname__", self.__name__)
        self.__module__ = getattr(pyfunc, "__module__", None)
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.__wrapped__ = pyfunc
        target = flags.get("target") or config.TARGET.get()
        if target not in ("cuda", "cpu"):
            raise ValueError(f"unknown target {target!r}: use 'cuda' or 'cpu'")
        link = ()
        if flags.get("link") is not None:  # foreign code (cujit.linking)
            from cujit import linking

            link = linking.link_files(flags["link"])
        if link and target == "cpu":
            if flags.get("cache") and not config.CACHE_LINKED.get():
                from cujit.cache import linked_refusal  # numba's refusal comes first

                raise linked_refusal(self.__qualname__, link)
            raise CujitError(
                f"kernel '{self.__name__}' links foreign CUDA code "
                f"('{link[0].name}'), which cannot run on the CPU target; "
                "run it on a GPU (target='cuda')"
            )
        self._base_options = options or Options(
            debug=bool(flags.get("debug")) or config.DEBUG.get(),
            fastmath=bool(flags.get("fastmath")),
            opt=3 if flags.get("opt", True) else 0,  # numba: opt=False is libNVVM's -opt=0
            lineinfo=bool(flags.get("lineinfo")),
            verify=config.VERIFY.get(),
            target=target,
            boundscheck=guards.boundscheck_flag(flags, config.BOUNDSCHECK.get()),
            link=link,
            launch_bounds=tuple(flags.get("launch_bounds") or ()),
            lto=bool(flags.get("lto")),
            escaping_captures=bool(flags.get("escaping_captures")),
        )
        self.target = self._base_options.target
        # A launch of more threads per block than launch_bounds allows is refused.
        self._max_threads = (self._base_options.launch_bounds or (0,))[0]
        # numba's inlining options, for calls of this kernel from other kernels.
        self.inline = flags.get("inline", "never")
        self.forceinline = bool(flags.get("forceinline", False))
        self.overloads: dict[tuple[Type, ...], Specialization] = KernelOverloads(self)
        self._configs: dict[tuple, LaunchConfig] = {}
        self._fast: dict[tuple[int, ...], Specialization] = {}  # see _specialize
        code = pyfunc.__code__
        self._nargs = code.co_argcount
        self._argnames = code.co_varnames[: code.co_argcount]
        self.cache = bool(flags.get("cache"))  # or CUJIT_CACHE=1, read at compile time
        self._stats = None  # numba's kernel.stats, made when first asked for
        self.eager = bool(signatures)
        self._signatures = tuple(signatures)
        self._flags = dict(flags)
        # numba's launch extensions (cujit.arghints): applied to every launch's arguments.
        self.extensions: list = list(flags.get("extensions") or ())
        self.specializations: dict = {}  # argument types -> Kernel, made by specialize()
        # Launch-config sensitive (a compile marked it): the configuration its own
        # specialisations were compiled for, and one kernel per other configuration.
        self._lc_default = None  # a launchconfig.config_key, once sensitive
        self._lc_fixed = False  # one of those kernels: it never hands launches on
        self._launch_config_specializations: dict = {}
        for sig in signatures:
            self.compile(parse_signature(sig))
        if target == "cuda" and not signatures and not (self.cache or config.CACHE.get()):
            warmup.note_kernel()  # a compile will follow the driver's start: warm up then

    def __repr__(self) -> str:
        return f"<cujit kernel {self.__name__}>"

    @property
    def stats(self):
        """numba's ``stats``: disk-cache hits and misses per argument types, and where
        the kernel's entries go (``cujit.cache.Stats``)."""
        if self._stats is None:
            from cujit.cache import Stats

            self._stats = Stats()
        return self._stats

    def __reduce__(self):
        # By name or by value, compiled once per receiving process: cujit.pickling.
        from cujit import pickling

        return pickling.reduce_kernel(self, is_importable(self), _rebuild_kernel)

    # -- compiling ---------------------------------------------------------
    def _options(self) -> Options:
        if self.target == "cpu":
            return self._base_options
        from cujit.runtime import context

        base = self._base_options
        arch = context.compute_capability_or(config.ARCH.get() or base.arch)
        # numba's config is read at each compile, as numba reads it.
        include = numba_config.nvrtc_search_paths()
        if arch == base.arch and include == base.include_paths:
            return base
        return dataclasses.replace(base, arch=arch, include_paths=include)

    @api_boundary
    def recompile(self) -> None:
        """numba's ``recompile()``: compile every specialisation afresh, with the globals'
        values of now, replacing the disk cache's entries (later imports load these)."""
        sigs = list(self.overloads)
        self.overloads.clear()
        self._fast.clear()
        for cfg in self._configs.values():
            cfg.launchers.clear()
        for sig in sigs:
            self._compile(sig, refresh=True)

    @api_boundary
    def compile(self, sig) -> Specialization:
        """Compile (once) for a signature or a tuple of argument types."""
        return self._compile(sig)

    def _compile(self, sig, refresh: bool = False) -> Specialization:
        sig = parse_signature(sig)  # a string, a Signature, a tuple or list of types
        if not isinstance(sig.return_type, NoneType):
            raise TypingError(
                f"kernel {self.__name__!r} must return void, not {sig.return_type}",
                hint="a kernel returns results by writing into an array argument",
            )
        key = tuple(sig.args)
        spec = self.overloads.get(key)
        if spec is None:
            # The collector stays off until the stages' outputs the kernel keeps no more
            # are gone too (``let_go``): its pass after the compile then walks what stays.
            with gcpause.paused():
                spec = self._compile_new(key, refresh)
            self.overloads[key] = spec
        return spec

    def _compile_new(self, key: tuple, refresh: bool) -> Specialization:
        """``_compile`` for a signature not compiled yet: its new Specialization."""
        from cujit.pipeline import compile_kernel

        guards.check_parameters(self.py_func)  # *args, keyword-only: said at the def line

        # Checked GPU builds skip the disk cache: a CUDA entry keeps no error table
        # (a CPU entry does: its checks are on by default).
        base = self._base_options
        if (
            (self.cache or config.CACHE.get())
            and not base.debug
            and (self.target == "cpu" or base.boundscheck is not True)
        ):
            from cujit.cache import compile_cached

            result = compile_cached(
                self.py_func,
                key,
                self._options(),
                strict=self.cache,
                refresh=refresh,
                launch_config=self._lc_default,
            )
            self.stats.note(key, result, self.py_func, self.cache)
        else:
            if self.cache and self.target == "cpu":  # nothing kept, but refused alike
                from cujit.cache import check_cacheable

                check_cacheable(self.py_func, key, self._options())
            result = compile_kernel(self.py_func, key, self._options())
        record = result.record
        spec = Specialization(key, result, record, record.param_kinds(key), {})
        spec.linked = _linked_files(base.link, result)
        if self.target == "cpu":  # inspected as its CUDA compilation, as on a GPU
            from cujit.cuda_view import CudaView

            spec.cuda_view = CudaView(self.py_func, key, self._options())
        self._dump(spec)
        from cujit import index_width
        from cujit.coarsen import plan_for

        # The coarsened variant where the kernel has one, else the 32-bit index one.
        spec.coarse = plan_for(self, spec) or index_width.plan_for(self, spec)
        spec.let_go()
        return spec

    def _dump(self, spec: Specialization) -> None:
        """numba's compile dumps its config asks for (``cujit.dumps``)."""
        stages = numba_config.dumps()
        if stages:
            from cujit.dumps import print_dumps

            outputs = spec.result.outputs
            if spec.cuda_view is not None and "llvm" in stages:
                # the CPU target's LLVM dump is its CUDA code's, as its inspect_llvm is
                outputs = {**outputs, "llvm": spec.cuda_view.result().outputs.get("llvm")}
            print_dumps(self.__qualname__, self.py_func, outputs, stages, spec.inspect_asm)

    @api_boundary
    def inspect_ptx(self, sig=None) -> str:
        return cuda_result(self._pick(sig)).ptx

    @api_boundary
    def report(self, sig, path: str | None = None) -> str:
        """Write the HTML report of this kernel compiled for ``sig`` (``cujit.report``);
        return the file's path (default ``<kernel>.report.html``)."""
        from cujit.report import report

        sig = parse_signature(sig if isinstance(sig, (str, Signature)) else tuple(sig))
        return report(self.py_func, tuple(sig.args), path, self._options())

    @api_boundary
    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize: int = 0, sig=None) -> int:
        """``Specialization.max_cooperative_grid_blocks`` of the one specialisation (or
        of ``sig``): the largest grid a launch of this grid-syncing kernel may have."""
        return self._pick(sig).max_cooperative_grid_blocks(blockdim, dynsmemsize)

    def _pick(self, sig) -> Specialization:
        if sig is None:
            if len(self.overloads) != 1:
                raise ValueError(
                    f"give the signature: this kernel has {len(self.overloads)} specialisations"
                )
            return next(iter(self.overloads.values()))
        return self.compile(parse_signature(sig))

    # -- launching ---------------------------------------------------------
    def __getitem__(self, config_):
        # Launch configurations repeat: check and normalise each one once.  The key
        # carries the classes of grid and block, since True == 1.0 == 1 as dict keys
        # and a bool or float grid must still be refused.
        key = (
            (config_, config_[0].__class__, config_[1].__class__)
            if config_.__class__ is tuple and len(config_) > 1
            else config_
        )
        try:
            cfg = self._configs.get(key)
            cacheable = True
        except TypeError:  # an unhashable stream object: no caching
            cfg, cacheable = None, False
        if cfg is None:
            try:
                cfg = self._configure(config_)
            except CujitError as error:  # an API boundary, inline: see api_boundary
                if not user_facing(error):
                    raise
                hide_internals(error)  # cujit frames: CUJIT_SHOW_INTERNALS=1
                raise  # bare: adds no frame of this function
            if cacheable and len(self._configs) < 256:
                self._configs[key] = cfg
        return cfg

    def _configure(self, config_):
        if not isinstance(config_, tuple) or not 2 <= len(config_) <= 4:
            raise LaunchValueError(
                "launch a kernel as kernel[grid, block](...) or "
                "kernel[grid, block, stream, dynamic_shared_bytes](...)"
            )
        grid, block, *rest = config_
        stream = rest[0] if rest else 0
        shmem = rest[1] if len(rest) > 1 else 0
        guards.check_stream(stream)
        grid = normalize_dim(grid, "grid")
        jit_options.warn_grid(grid, self.target)
        return LaunchConfig(self, grid, normalize_dim(block, "block"), stream, int(shmem))

    @api_boundary
    def __call__(self, *args, **kwargs):
        from cujit import hints

        raise LaunchValueError(
            f"kernel {self.__name__!r} needs a launch configuration (the launch "
            "configuration was not specified): "
            f"{self.__name__}[blocks, threads_per_block](...)\nhint: "
            + hints.launch_form(self.__name__, self._argnames, args)
        )

    def _arg_types(self, args) -> tuple[Type, ...]:
        try:
            types = tuple(map(fast_typeof, args))
        except TypeError:
            raise LaunchError(self._untypable(args)) from None
        if not self.eager or types in self.overloads:
            return types
        return self._resolve(types)

    def _resolve(self, types: tuple[Type, ...]) -> tuple[Type, ...]:
        """The declared signature a launch with argument types ``types`` runs: numba's
        choice among them (``cujit.overloads``), or a TypeError saying why none."""
        from cujit import hints, overloads

        try:
            key = overloads.select(self.overloads, types)
        except overloads.Ambiguous as tie:
            raise LaunchTypeError(
                f"Ambiguous overloading for {self.py_func!r} "
                f"({', '.join(map(overloads.numba_spelling, types))}):\n"
                + "\n".join(
                    f"({', '.join(map(overloads.numba_spelling, sig))}) -> none" for sig in tie.best
                )
            ) from None
        if key is None and self._specialized and overloads.same_bits(self._only(), types):
            key = self._only()
        if key is None:
            sigs = ", ".join("(" + ", ".join(map(str, k)) + ")" for k in self.overloads)
            raise LaunchTypeError(
                "No matching definition for argument type(s) ("
                + ", ".join(map(str, types))
                + f") of kernel {self.__name__!r}, which was compiled for {sigs}\nhint: "
                + hints.eager_mismatch(
                    self.__name__, self._argnames, next(iter(self.overloads)), types, _accepts
                )
            )
        k = overloads.unpassable(key, types)
        if k is not None:
            raise LaunchTypeError(
                f"kernel {self.__name__!r}: argument {k} ({self._argnames[k]!r}) is "
                f"{types[k]}, which a launch cannot pass as the signature's {key[k]}: "
                f"convert it first (np.{key[k]}(...)) or add a signature taking {types[k]}"
            )
        return key

    def _only(self) -> tuple[Type, ...]:
        return next(iter(self.overloads))

    def _untypable(self, args) -> str:
        """Which argument cannot be passed, and why (off the fast path: errors only)."""
        from cujit import hints

        code = self.py_func.__code__
        # co_varnames lists the arguments first, then the locals: only the first len(args) pair.
        for k, (name, a) in enumerate(zip(code.co_varnames, args, strict=False)):
            try:
                typeof(a)
            except TypeError as exc:
                message = f"kernel {self.__name__!r}: argument {k} ({name!r}): {exc}"
                return (
                    hints.with_hint(message, "list-argument", name=name)
                    if isinstance(a, list)
                    else message
                )
        return f"kernel {self.__name__!r}: cannot type the arguments"

    @api_boundary
    def launch(self, args, grid, block, stream=0, shmem=0) -> None:
        guards.check_stream(stream)
        self._launch(args, grid, block, stream, shmem)

    def _launch(self, args, grid, block, stream, shmem, cfg=None):
        """Launch: the general path, for any arguments.  Returns what a launcher for
        these kinds of arguments would be made from, or None where none can be.
        ``cfg`` is the ``LaunchConfig`` launching, where there is one."""
        if len(args) != self._nargs:
            self._wrong_count(args)
        if self._lc_default is not None and cfg is not None and not self._lc_fixed:
            key = launchconfig.config_key(cfg)  # sensitive: its code is per configuration
            if key != self._lc_default:
                sub = self._launch_config_kernel(key)
                return sub._launch(args, grid, block, stream, shmem, cfg)
        try:
            spec = self._fast.get(tuple(map(id, map(fast_typeof, args))))
        except TypeError:  # an argument typeof cannot type: the slow path says which
            spec = None
        if spec is None:
            if arghints.has_hint(args):  # cuda.In(a)...: plain arguments, then this path
                return self._launch_prepared(args, grid, block, stream, shmem, cfg)
            args, spec = self._specialize(args, stream, cfg)
        if cfg is not None and cfg.pre_launch_callbacks:
            for callback in cfg.pre_launch_callbacks:
                callback(spec, cfg)
        return self._launch_spec(spec, args, grid, block, stream, shmem)

    def _launch_spec(self, spec: Specialization, args, grid, block, stream, shmem):
        """Launch ``spec`` with ``args`` (of its kinds); what ``_launch`` returns."""
        if self._max_threads:
            from cujit.launch_bounds import check_block

            check_block(self.__name__, block, self._max_threads)
        if spec.coarse is not None:  # the coarsened variant where the launch's facts allow
            spec, grid = spec.coarse.select(spec, args, grid, block)
        types = spec.arg_types
        events.notify(events.LAUNCH, self.__name__, self.target)
        if self.target == "cpu":
            jit_options.warn_host_arrays(args, _ndarray(), "cpu")
            spec.result.outputs["native"].launch(grid, block, shmem, types, args)
            return None
        context, rt_launch = _RUNTIME or _load_runtime()
        try:
            dev = context.current_device_id()
        except NoGPUError as exc:
            from cujit.hints import GUIDE

            raise NoGPUError(
                f"{exc}\nTo run kernels on the CPU instead, set CUJIT_TARGET=cpu "
                f"or use @cuda.jit(target='cpu').\nguide: {GUIDE}cpu-target.md"
            ) from None
        fn = spec.functions.get(dev) or self._load(spec, dev)
        values = spec.flatten(args, dev) if spec.flatten is not None else None
        if values is None:  # host, foreign, read-only or other-device arrays: checked here
            jit_options.warn_host_arrays(args, _ndarray())
            values, writebacks = rt_launch.prepare_args(
                types,
                args,
                stream,
                written=spec.record.written or None,
                device_id=dev,
                names=self._argnames,
                kept=spec.record.passed_mask,
            )
        else:
            writebacks = ()
        rt_launch.launch(fn, grid, block, stream, shmem, spec.packer, values)
        if variants.deferred:  # a variant this launch asked for compiles from now on
            variants.start_deferred()
        if writebacks:
            rt_launch.finish_writebacks(writebacks, stream)
        if spec.record.debug_sites:  # debug=True: raise what a failed check reported
            from cujit.runtime import debug

            debug.check_module(
                spec.functions[(dev, "module")], spec.record.debug_sites, self.__name__, stream
            )
            return None  # every launch of a debug kernel takes this path
        # What a LaunchConfig needs to make a launcher for these kinds of arguments
        # (it declines host arrays: their copies happen here, every time).
        return spec, dev, fn, context, rt_launch

    def _wrong_count(self, args):
        guards.check_parameters(self.py_func)  # *args, keyword-only: said at the def
        from cujit import hints

        raise LaunchError(
            hints.with_hint(
                f"kernel {self.__name__!r} takes {self._nargs} arguments, {len(args)} given",
                "argument-count",
                kernel=self.__name__,
                args=", ".join(self._argnames),
            )
        )

    def _specialize(self, args, stream, cfg=None):
        """The first launch with a new kind of arguments: type them (importing arrays
        known only through DLPack), compile if needed, remember the answer by the
        ids of the argument types (interned by ``fast_typeof``)."""
        try:
            types = self._arg_types(args)
        except LaunchError:
            args = self._import_foreign(args, stream)  # not remembered: views per launch
            types = self._arg_types(args)
            return args, self.overloads.get(types) or self._compile_launching(args, cfg)
        spec = self.overloads.get(types) or self._compile_launching(args, cfg)
        if self._specialized and _retyped(args, types):  # not remembered: views per launch
            return tuple(map(_as_declared, args, types)), spec
        if len(self._fast) < 1024:
            self._fast[tuple(map(id, map(fast_typeof, args)))] = spec
        return args, spec

    def _compile_launching(self, args, cfg) -> Specialization:
        """Compile for a launch's arguments with its configuration current on this thread
        (``cujit.launchconfig``), through ``_compile_for_args`` as numba does."""
        with launchconfig.compiling(cfg, args) as marks:
            spec = self._compile_for_args(*args)
        if marks["sensitive"]:
            spec.launch_config_sensitive = True
            if self._lc_default is None:  # its code is this configuration's from now on
                self._lc_default = launchconfig.config_key(cfg)
        return spec

    def _launch_config_kernel(self, key) -> Kernel:
        """The kernel that compiles for launch configuration ``key`` (numba's
        launch-config specialisation of a sensitive kernel)."""
        sub = self._launch_config_specializations.get(key)
        if sub is None:
            sub = Kernel(self.py_func, (), self._base_options, **self._flags)
            sub._lc_default, sub._lc_fixed = key, True
            self._launch_config_specializations[key] = sub
        return sub

    def _compile_for_args(self, *args, **kwargs) -> Specialization:
        """numba's hook: compile for the types of ``args`` (code may wrap it)."""
        return self.compile(tuple(map(fast_typeof, args)))

    def mark_launch_config_sensitive(self) -> None:
        """Say, during a compilation a launch started, that the code being compiled
        depends on the launch configuration (numba's API; cujit records the mark on
        the specialisation)."""
        launchconfig.mark_sensitive(self)

    def _launch_prepared(self, args, grid, block, stream, shmem, cfg) -> None:
        """A launch whose arguments go through the kernel's extensions or hold
        ``cuda.In``/``Out``/``InOut`` hints (``cujit.arghints``): the plain arguments
        are launched, then the work the preparation left (copies back) is done."""
        plain, retr = arghints.prepare(args, self.extensions, stream, fast_typeof, self.target)
        self._launch(plain, grid, block, stream, shmem, cfg)
        for finish in retr:
            finish()

    @staticmethod
    def _load(spec: Specialization, dev: int):
        """Load ``spec``'s cubin on device ``dev`` (once); its runtime Function."""
        from cujit.runtime import launch as rt_launch
        from cujit.runtime import module as rt_module

        mod = rt_module.load_module(spec.result.cubin)
        fn = spec.functions[dev] = mod.get_function(spec.record.symbol)
        spec.functions[(dev, "module")] = mod
        if spec.record.cooperative:  # it syncs the grid: cuLaunchCooperativeKernel
            fn.make_cooperative()
        if spec.packer is None:
            spec.packer = rt_launch.get_packer(spec.param_kinds)
            spec.flatten = rt_launch.make_flattener(spec.arg_types, spec.record.passed_mask)
        return fn

    @api_boundary
    def forall(self, ntasks: int, tpb: int = 0, stream=0, sharedmem: int = 0) -> ForAll:
        """numba's ``kernel.forall(n)(*args)``: a 1-D launch of ``n`` threads (rounded up
        to whole blocks) whose block size is ``tpb`` or, when 0, the occupancy
        calculator's choice for this kernel (``FORALL_CPU_BLOCK`` on the CPU target)."""
        ntasks = int(ntasks)
        if ntasks < 0:  # numba's words first: its users match them
            raise LaunchValueError(
                f"Can't create ForAll with negative task count: {ntasks} "
                "(forall needs a non-negative number of tasks)"
            )
        return ForAll(self, ntasks, int(tpb), stream, int(sharedmem))

    def _forall_block_size(self, args, stream, sharedmem: int) -> int:
        if self.target == "cpu":
            return min(FORALL_CPU_BLOCK, self._max_threads or FORALL_CPU_BLOCK)
        from cujit.runtime import context
        from cujit.runtime.occupancy import max_potential_block_size

        try:
            types = self._arg_types(args)
        except LaunchError:
            types = self._arg_types(self._import_foreign(args, stream))
        spec = self.overloads.get(types) or self.compile(types)
        dev = context.current_device_id()
        fn = spec.functions.get(dev) or self._load(spec, dev)
        key = (dev, "forall block", sharedmem)
        if key not in spec.functions:
            spec.functions[key] = max_potential_block_size(fn, sharedmem)[1]
        return spec.functions[key]

    def _import_foreign(self, args, stream):
        """Arrays that speak only DLPack (JAX's) become stream-ordered device views;
        anything else that failed to type re-raises its error."""
        if self.target != "cuda":
            raise
        from cujit.runtime import interop

        if not any(interop.is_foreign_array(a) for a in args):
            raise
        return tuple(
            interop.import_for_launch(a, stream) if interop.is_foreign_array(a) else a for a in args
        )


def _linked_files(link, result) -> tuple[str, ...]:
    """The names of the files a compile result links: ``link=``'s, then its foreign
    functions' (known from the typed IR; a disk-cache hit has ``link=``'s alone)."""
    files = list(link)
    typed = result.outputs.get("passes")
    if typed is not None:
        from cujit import linking

        calls = linking.foreign_calls(typed)
        files += [f for f in linking.foreign_files(calls) if f not in files]
    return tuple(f.name for f in files)


def _retyped(args, types) -> bool:
    """Whether an array argument has another element type than its parameter's (of the
    same bits: ``overloads.same_bits``)."""
    return any(
        isinstance(d, Array) and fast_typeof(a).dtype != d.dtype
        for a, d in zip(args, types, strict=True)
    )


def _as_declared(arg, declared: Type):
    """``arg`` viewed as its parameter's element type where that differs."""
    if isinstance(declared, Array) and fast_typeof(arg).dtype != declared.dtype:
        return arg.view(declared.dtype.dtype)
    return arg


def _ndarray() -> type:
    import numpy as np

    return np.ndarray


def _rebuild_kernel(pyfunc, signatures, flags, token: str | None, filename: str) -> Kernel:
    """The receiving end of ``pickling.reduce_kernel``: this process's kernel for ``token``."""
    from cujit import pickling

    return pickling.rebuilt(
        token, lambda: Kernel(pickling.restored(pyfunc, filename), signatures, **flags)
    )


def _accepts(declared: Type, given: Type) -> bool:
    """Whether an eager signature's parameter type takes an argument of type ``given``."""
    from cujit import overloads

    return overloads.conversion(given, declared) != overloads.NONE


# The CPU target has no occupancy to maximise: a block is a loop over its threads on
# one core, so any size that fills vector loops and amortises the per-block setup
# (shared buffers, block ids) does; blocks then spread over the cores.
FORALL_CPU_BLOCK = 256


jit = decorator.make_jit(Kernel, InspectableDeviceFunction)
