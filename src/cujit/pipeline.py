"""The compiler, start to end: the stages called in order, as straight-line code.

    bytecode -> cfg -> ir -> typed -> passes -> llvm -> ptx -> cubin     (target "cuda")
    bytecode -> cfg -> ir -> typed -> passes -> llvm -> native           (target "cpu")

``front_end`` (stages 1-5) is shared by kernels and the device functions they call;
``_cuda_back_end`` and ``_cpu_back_end`` finish a kernel for their target.  Each
stage is one call through ``_Run.stage``, which times it, verifies the IR when
``Options.verify`` is set, turns a crash inside cujit into an InternalCompilerError,
and stops after ``stop_after``.  A whole compile ends in an ``abi.LaunchRecord``:
the one thing the runtime, the disk cache and every launch path read.
Device functions go through ``front_end`` inside stage 4, once per argument types
and options (``infer.function_calls.Callees``); their typed IR rides in the kernel's
``Function.callees`` to stage 6, which lowers them into the same module.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import field

from cujit import events, gcpause, startup
from cujit.abi import LaunchRecord
from cujit.diagnostics import CujitError, InternalCompilerError, Loc, NumbaDebugInfoWarning
from cujit.frozen import frozen
from cujit.options import Options

FRONT_STAGES = ("bytecode", "cfg", "ir", "typed", "passes")
STAGES = FRONT_STAGES + ("llvm", "ptx", "cubin")
CPU_STAGES = FRONT_STAGES + ("llvm", "native")
TARGET_STAGES = {"cuda": STAGES, "cpu": CPU_STAGES}
# Options is frozen, so one shared default is safe.
DEFAULT_OPTIONS = Options()


@frozen
class CompileResult:
    """What each stage produced, in order, with its time in seconds, and the kernel's
    ``LaunchRecord`` (None when the compile stopped before the last stage)."""

    name: str
    # Not in the repr: the outputs hold the bytecode's globals, the IR and the cubin,
    # megabytes that a printed specialisation would otherwise dump.
    outputs: dict[str, object] = field(default_factory=dict, repr=False)
    times: dict[str, float] = field(default_factory=dict)
    record: LaunchRecord | None = None

    @property
    def cubin(self) -> bytes:
        return self.outputs["cubin"]

    @property
    def ptx(self) -> str:
        return self.outputs["ptx"]

    # The record's fields, read through the result (explain, tests, benchmarks).
    @property
    def symbol(self) -> str:
        return self.record.symbol

    @property
    def written(self) -> tuple[bool, ...]:
        return self.record.written

    @property
    def cooperative(self) -> bool:
        return self.record.cooperative

    @property
    def debug_sites(self) -> dict:
        return self.record.debug_sites

    @property
    def kept(self) -> tuple[bool, ...] | None:
        return self.record.passed_mask


class _Stop(Exception):
    """Raised by ``_Run.stage`` for the stage after ``stop_after``."""


class _Run:
    """One compilation's bookkeeping: outputs, times, verification, stopping."""

    def __init__(self, pyfunc, options: Options, stop_after: str | None):
        self.pyfunc, self.options, self.stop_after = pyfunc, options, stop_after
        self.name = getattr(pyfunc, "__qualname__", repr(pyfunc))
        self.outputs: dict[str, object] = {}
        self.times: dict[str, float] = {}
        self.stopped = False  # the stop_after stage has run: the next stage stops
        self.record: LaunchRecord | None = None  # made by the back end

    def stage(self, name: str, run: Callable, *args, verify: str = "", shown=None, **kw):
        """``run(*args, **kw)`` as stage ``name``; ``verify``: "typed" or "untyped" IR
        to check after it; ``shown(value)``: what ``outputs[name]`` holds (the value)."""
        if self.stopped:
            raise _Stop
        start = time.perf_counter()
        try:
            value = run(*args, **kw)
            if verify and self.options.verify:
                from cujit import ir

                ir.verify(value, typed=verify == "typed")
        except CujitError:
            raise
        except Exception as exc:  # a bug in cujit: say so, and where the user's kernel is
            raise InternalCompilerError(name, self.name, function_loc(self.pyfunc), exc) from exc
        if self.stop_after is not None:  # a kernel's stage, not a callee's
            self.outputs[name] = value if shown is None else shown(value)
            self.times[name] = time.perf_counter() - start  # its output's text included
            self.stopped = name == self.stop_after
        return value


def import_stages() -> None:
    """Import every stage a compile uses (the warm-up does this ahead of time)."""
    from cujit import bytecode, cfg, codegen, infer, irgen, passes, ptx  # noqa: F401
    from cujit.targets import cuda  # noqa: F401


def pass_list(options: Options) -> tuple:
    """Stage 5's passes for ``options``: a release build drops ``assert`` first; a debug
    build keeps the values of its variables."""
    from cujit.passes import DEBUG_PASSES, RELEASE_PASSES

    return DEBUG_PASSES if options.debug else RELEASE_PASSES


def front_end(
    run: _Run, pyfunc, arg_types, callees, passes, device: bool = False, return_type=None
):
    """Stages 1-5: a Python function -> typed, optimised IR, for a kernel (``run``
    records each stage) or for a device function it calls (``run`` does not)."""
    from cujit.bytecode import decode
    from cujit.cfg import build_cfg
    from cujit.infer import infer_types
    from cujit.irgen import build_ir
    from cujit.passes import run_passes

    code = run.stage("bytecode", decode, pyfunc, device=device)
    graph = run.stage("cfg", build_cfg, code)
    fn = run.stage("ir", build_ir, graph, verify="untyped")
    fn = run.stage(
        "typed",
        infer_types,
        fn,
        tuple(arg_types),
        callees,
        verify="typed",
        device=device,
        return_type=return_type,
        escaping_captures=run.options.escaping_captures,
    )
    return run.stage("passes", run_passes, fn, passes, verify="typed")


def _callees(run: _Run, passes):
    """The device-function context of one compilation (it holds the call chain)."""
    from cujit.infer.function_calls import Callees

    quiet = _Run(run.pyfunc, run.options, None)

    def compile_callee(pyfunc, types, return_type, callees):
        return front_end(quiet, pyfunc, types, callees, passes, True, return_type)

    return Callees(compile_callee, (run.options, passes))


def type_device_function(devfn, arg_types, options: Options = DEFAULT_OPTIONS):
    """Stages 1-5 of device function ``devfn`` for ``arg_types``, with ``options``' pass
    list: its typed IR (kept, as every callee's, by ``device_function``'s table)."""
    run = _Run(devfn.py_func, options, None)
    callees = _callees(run, pass_list(options))
    return callees.typed(devfn, tuple(arg_types), None, function_loc(devfn.py_func))


def _cpu_passes(options: Options, passes) -> tuple:
    """The CPU target's kernel also inlines the device functions that wait: only the
    kernel itself can be a coroutine that suspends (``passes/inline.py``)."""
    from cujit.passes.inline import inline_calls
    from cujit.targets.cpu.coro import suspends

    return (*passes, functools.partial(inline_calls, wanted=suspends, keep_raise=options.debug))


def _cuda_back_end(run: _Run, fn, arg_types, options: Options) -> None:
    """Stages 6-7 for the CUDA target: typed IR -> LLVM IR -> PTX -> cubin."""
    from cujit.codegen import join_texts, kernel_symbol, module_texts
    from cujit.codegen.checks import error_sites
    from cujit.codegen.debuginfo import link_debug_flags, nvvm_debug_flags
    from cujit.ir.analysis import needs_cooperative_launch, written_arguments
    from cujit.linking import foreign_calls, foreign_files
    from cujit.ptx import compile_ptx

    texts: list[str] = []  # the kernel's module text, then each device function's own

    def shown(lowered) -> str:  # the texts are made once: libNVVM reads the same ones
        texts[:] = module_texts(lowered[0])
        return join_texts(texts)

    module, params = run.stage("llvm", lower_kernel, fn, options, shown=shown)
    texts = texts or module_texts(module)
    run.record = LaunchRecord(
        kernel_symbol(fn),
        params.passed,
        written_arguments(fn),
        needs_cooperative_launch(fn),
        error_sites(module),
    )
    ptx = run.stage(
        "ptx",
        compile_ptx,
        texts,
        options.arch,
        opt=options.opt,
        fastmath=options.fastmath,
        debug=options.debug,
        extra=nvvm_debug_flags(options),
    )
    calls = foreign_calls(fn)
    files = options.link + tuple(f for f in foreign_files(calls) if f not in options.link)
    run.stage(
        "cubin",
        _link,
        ptx,
        options.arch,
        link_debug_flags(options),
        files,
        calls,
        f"{run.record.symbol}.ptx",
        options.include_paths,
        kernel_ltoir(module, fn, options) if options.lto and files else None,
    )


def kernel_ltoir(module, fn, options: Options) -> bytes:
    """Kernel ``fn``'s LLVM ``module`` as LTO-IR (libNVVM ``-gen-lto``), the kernel kept
    through nvJitLink's link-time optimisation (``@llvm.used``)."""
    from cujit.codegen import kernel_symbol
    from cujit.codegen.debuginfo import nvvm_debug_flags
    from cujit.codegen.entry import keep_function
    from cujit.ptx.nvvm import compile_ltoir

    keep_function(module, module.get_global(kernel_symbol(fn)))
    flags = {"opt": options.opt, "fastmath": options.fastmath, "debug": options.debug}
    return compile_ltoir(str(module), options.arch, extra=nvvm_debug_flags(options), **flags)


def _link(ptx: str, arch, flags, files, calls: dict, name: str, include=(), ltoir=None):
    """Stage 7's link: the kernel's PTX with its foreign code (``cujit.linking``); a
    declared function the files do not define, or define otherwise, is the user's error.
    With the kernel's LTO-IR (``jit(lto=True)``), that and the CUDA sources compiled to
    LTO-IR link with link-time optimisation instead."""
    from cujit import linking
    from cujit.ptx import LinkError, link_cubin

    inputs = linking.link_inputs(files, arch, include, lto=ltoir is not None)
    linking.check_prototypes(ptx, inputs, calls)
    if ltoir is not None:
        inputs, ptx = (("ltoir", ltoir, name.replace(".ptx", ".ltoir")), *inputs), None
    try:
        return link_cubin(ptx, arch, flags, name=name, inputs=inputs)
    except LinkError as exc:
        error = linking.undefined_symbol(exc.log, calls, files)
        if error is None:
            raise
        raise error from None


def lower_kernel(fn, options: Options):
    """Stage 6 for the CUDA target: ``(LLVM module, params.ParamUse)``.  The kernel
    declares only the parameters its code reads (``codegen.params``), so a launch
    passes only those (``LaunchRecord.passed``)."""
    from cujit.codegen import lower_to_llvm
    from cujit.codegen.debuginfo import level_of
    from cujit.codegen.params import read_params
    from cujit.targets.cuda import cuda_target

    _check_arch(fn, options.arch)
    checked = options.boundscheck is True  # jit(boundscheck=True) / CUJIT_BOUNDSCHECK=1
    # Debug info describes every parameter, and bounds checks read every extent.
    params = read_params(fn, debug=options.debug or checked, index32=options.index32)
    module = lower_to_llvm(
        fn,
        cuda_target(options.arch, options.fastmath),
        debug=options.debug,
        params=params,
        debug_info=level_of(options.lineinfo, options.debug),
        bounds=checked,
        opt=options.opt,
        index32=options.index32,
    )
    if options.launch_bounds:  # jit(launch_bounds=...): NVVM's annotations of the kernel
        from cujit.codegen import kernel_symbol
        from cujit.codegen.entry import annotate_launch_bounds

        kernel = module.get_global(kernel_symbol(fn))
        annotate_launch_bounds(module, kernel, options.launch_bounds)
    return module, params


def _check_arch(fn, arch) -> None:
    """An operation the architecture compiled for lacks (``mma`` below sm_80...) is the
    user's error at its line, before libNVVM or ptxas would reject it."""
    from cujit.diagnostics import UnsupportedError
    from cujit.ir.intrinsics import arch_refusal, spelled

    found = arch_refusal(fn, arch)
    if found is not None:
        op, need = found
        raise UnsupportedError(
            f"{spelled(op.name)} needs sm_{need[0]}{need[1]} or later; this kernel is "
            f"compiled for sm_{arch[0]}{arch[1]}",
            op.loc,
        )


def _cpu_back_end(run: _Run, fn, arg_types, options: Options) -> None:
    """Stage 6 and the last stage on the CPU target: typed IR -> LLVM IR for the host ->
    JIT-compiled code that runs the grid in-process."""
    from cujit.abi import flat_param_kinds
    from cujit.ir.analysis import needs_cooperative_launch, written_arguments
    from cujit.targets.cpu import build_cpu_kernel, lower_cpu_kernel

    lowered = run.stage("llvm", lower_cpu_kernel, fn, options, shown=str)
    every = (True,) * len(flat_param_kinds(arg_types))  # host calls take every parameter
    kernel = run.stage("native", build_cpu_kernel, lowered, options)
    run.record = LaunchRecord(
        lowered.symbol,
        every,
        written_arguments(fn),
        needs_cooperative_launch(fn),
        getattr(kernel, "debug_sites", None) or {},
    )


def _warn_if_no_source(pyfunc, options: Options) -> None:
    """Line tables and debug info name source lines: warn when there are none to
    name (a function made by ``exec``; linecache also holds notebook cells')."""
    import linecache
    import warnings

    code = getattr(pyfunc, "__code__", None)
    if not (options.debug or options.lineinfo) or code is None:
        return
    if not linecache.getline(code.co_filename, code.co_firstlineno):
        warnings.warn(
            NumbaDebugInfoWarning(
                f"Could not find source for function: {pyfunc}. "
                "Debug line information may be inaccurate."
            ),
            stacklevel=2,
        )


def _compile(run: _Run, pyfunc, arg_types, options: Options) -> None:
    _warn_if_no_source(pyfunc, options)
    passes = pass_list(options)
    callees = _callees(run, passes)
    kernel_passes = _cpu_passes(options, passes) if options.target == "cpu" else passes
    if options.coarsen:  # the coarsened variant (passes/coarsen.py, docs/coarsening.md)
        from cujit.passes.coarsen import coarsen_kernel

        kernel_passes = (*kernel_passes, functools.partial(coarsen_kernel, width=options.coarsen))
    fn = front_end(run, pyfunc, arg_types, callees, kernel_passes)
    back_end = _cpu_back_end if options.target == "cpu" else _cuda_back_end
    back_end(run, fn, arg_types, options)
    if not (options.coarsen or options.index32 or options.debug):
        # Whether a launch with small arrays has a 32-bit index variant to take (after
        # the stages' own outputs, which keep their order).
        from cujit.abi import INDEX32_LIMIT
        from cujit.codegen.narrow import worth_narrowing

        run.outputs["index32"] = worth_narrowing(fn, INDEX32_LIMIT)


def _event_name(name: str, options: Options) -> str:
    """What a compile event calls the kernel: a variant is its own compile."""
    if options.index32:
        return f"{name} (32-bit indices)"
    return f"{name} (coarsened x{options.coarsen})" if options.coarsen else name


def compile_kernel(
    pyfunc, arg_types, options: Options = DEFAULT_OPTIONS, stop_after: str = "cubin"
) -> CompileResult:
    """Compile ``pyfunc`` for ``arg_types``; return every stage's output up to ``stop_after``."""
    startup.run_before_compile()  # a warm-up running beside the driver's start finishes
    stages = TARGET_STAGES.get(options.target)
    if stages is None:
        raise ValueError(
            f"unknown target {options.target!r}; targets are {', '.join(TARGET_STAGES)}"
        )
    if stop_after == "cubin" and options.target == "cpu":
        stop_after = "native"  # the default: run every stage of the chosen target
    if stop_after not in stages:
        raise ValueError(
            f"unknown stage {stop_after!r}; stages of target {options.target!r} "
            f"are {', '.join(stages)}"
        )
    run = _Run(pyfunc, options, stop_after)
    events.notify(events.COMPILE, _event_name(run.name, options), options.target)
    try:
        with gcpause.paused():
            _compile(run, pyfunc, arg_types, options)
    except _Stop:
        pass
    return CompileResult(run.name, run.outputs, run.times, run.record)


def compile_entry(
    pyfunc,
    arg_types,
    return_type,
    options: Options,
    abi: str | None,
    symbol: str = "",
    output: str = "ptx",
    forceinline: bool = False,
    launch_bounds: tuple[int, ...] = (),
) -> tuple[CompileResult, object]:
    """One function on its own (``cuda.compile``): a kernel (``abi`` None), or a device
    function behind one visible entry ``symbol`` in ``abi`` ("numba" or "c",
    ``codegen.entry``); then ``output``: "ptx", "ltoir" (libNVVM's LTO mode) or "cubin".
    Returns the result, whose ``outputs`` hold the front end's stages, "llvm", then "ptx"
    or "ltoir", then "cubin", and the function's return type (declared, or inferred).
    A kernel's ``launch_bounds`` annotate it (``codegen.entry.annotate_launch_bounds``)."""
    from cujit.codegen.debuginfo import link_debug_flags, nvvm_debug_flags
    from cujit.ptx import compile_ptx, link_cubin
    from cujit.ptx.nvvm import compile_ltoir

    startup.run_before_compile()
    run = _Run(pyfunc, options, output)
    events.notify(events.COMPILE, run.name, "cuda")
    passes = pass_list(options)
    device = abi is not None
    fn = front_end(run, pyfunc, arg_types, _callees(run, passes), passes, device, return_type)
    from cujit.codegen import llvm_text, module_texts

    module = run.stage(
        "llvm",
        _entry_module,
        fn,
        options,
        abi,
        symbol,
        output == "ltoir",
        forceinline,
        launch_bounds,
        shown=llvm_text,
    )
    flags = {
        "opt": options.opt,
        "fastmath": options.fastmath,
        "debug": options.debug,
        "extra": nvvm_debug_flags(options),
    }
    if output == "ltoir":
        run.stage("ltoir", compile_ltoir, module_texts(module), options.arch, **flags)
    else:
        ptx = run.stage("ptx", compile_ptx, module_texts(module), options.arch, **flags)
        if output == "cubin":
            run.stage("cubin", link_cubin, ptx, options.arch, link_debug_flags(options))
    return CompileResult(run.name, run.outputs, run.times), fn.return_type


def _entry_module(
    fn,
    options: Options,
    abi: str | None,
    symbol: str,
    lto: bool,
    forceinline: bool,
    launch_bounds: tuple[int, ...],
):
    from cujit.codegen import kernel_symbol
    from cujit.codegen.debuginfo import level_of
    from cujit.codegen.entry import annotate_launch_bounds, keep_function, lower_device_entry
    from cujit.targets.cuda import NVVM_IR_VERSION, cuda_target

    if abi is not None:
        return lower_device_entry(
            fn,
            cuda_target(options.arch, options.fastmath),
            abi,
            symbol,
            NVVM_IR_VERSION,
            options.debug,
            level_of(options.lineinfo, options.debug),
            forceinline,
            bounds=options.boundscheck is True,
        )
    module, _ = lower_kernel(fn, options)
    kernel = module.get_global(kernel_symbol(fn))
    annotate_launch_bounds(module, kernel, launch_bounds)
    if lto:
        keep_function(module, kernel)
    return module


def function_loc(pyfunc) -> Loc | None:
    code = getattr(pyfunc, "__code__", None)
    if code is None:
        return None
    return Loc(code.co_filename, code.co_firstlineno, 0)


def lto_ptx(result: CompileResult, options: Options) -> str:
    """The kernel of ``result`` (a CUDA compile with ``options``) as nvJitLink's
    link-time optimisation makes it: its NVVM IR compiled to LTO-IR (libNVVM
    ``-gen-lto``), linked with its foreign code (CUDA sources compiled to LTO-IR) with
    ``-lto -ptx``, so that the linked functions are optimised, and inlined, into it."""
    from cujit import linking
    from cujit.codegen.debuginfo import link_debug_flags
    from cujit.ptx import link_lto_ptx

    fn = result.outputs["passes"]
    module, _ = lower_kernel(fn, options)  # again: kernel_ltoir marks it
    ltoir = kernel_ltoir(module, fn, options)
    calls = linking.foreign_calls(fn)
    files = options.link + tuple(f for f in linking.foreign_files(calls) if f not in options.link)
    inputs = linking.link_inputs(files, options.arch, options.include_paths, lto=True)
    name = f"{result.record.symbol}.ltoir" if result.record else "kernel.ltoir"
    return link_lto_ptx((("ltoir", ltoir, name), *inputs), options.arch, link_debug_flags(options))
