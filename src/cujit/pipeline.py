"""The compiler, start to end: seven stages chained in order.

    bytecode -> cfg -> ir -> typed -> passes -> llvm -> ptx -> cubin     (target "cuda")
    bytecode -> cfg -> ir -> typed -> passes -> native                   (target "cpu")

Stages 1-5 are shared; the CPU target lowers the same typed IR for the host and
JIT-compiles it in-process.  ``compile_kernel`` runs them, times each, verifies the IR between the IR stages
when asked, and can stop after any stage (``stop_after=``, ``explain --emit``).
Device functions the kernel calls go through stages 1-5 inside stage 4, once per
argument types (``infer.function_calls.Callees``); their typed IR rides in the
kernel's ``Function.callees`` to stage 6, which lowers them into the same module.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from cujit import events, warmup
from cujit.diagnostics import CujitError, InternalCompilerError, Loc
from cujit.options import Options

FRONT_STAGES = ("bytecode", "cfg", "ir", "typed", "passes")
STAGES = FRONT_STAGES + ("llvm", "ptx", "cubin")
CPU_STAGES = FRONT_STAGES + ("native",)
TARGET_STAGES = {"cuda": STAGES, "cpu": CPU_STAGES}


@dataclass
class CompileResult:
    """What each stage produced, in order, with its time in seconds."""

    name: str
    outputs: dict[str, object] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)
    symbol: str = ""  # the kernel's entry name in the PTX and cubin
    written: tuple[bool, ...] = ()  # per argument: may the kernel store into it
    cooperative: bool = False  # it has a grid-wide barrier: launch it cooperatively
    # One bool per flat parameter of ``abi.param_kinds``: does the launched kernel still
    # take it (``ptx.params``)?  None: it takes them all (the CPU target, debug builds).
    kept: tuple[bool, ...] | None = None
    # Debug mode: error record code -> abi.ErrorSite (empty without checks to report).
    debug_sites: dict = field(default_factory=dict)

    @property
    def cubin(self) -> bytes:
        return self.outputs["cubin"]

    @property
    def ptx(self) -> str:
        return self.outputs["ptx"]


def _stage_table(arg_types, options: Options):
    # Imported here so that ``import cujit`` does not load llvmlite or libNVVM.
    from cujit import ir
    from cujit.abi import flat_param_kinds
    from cujit.bytecode import decode
    from cujit.cfg import build_cfg
    from cujit.codegen import kernel_symbol, lower_to_llvm
    from cujit.codegen.checks import error_sites
    from cujit.infer import infer_types
    from cujit.infer.function_calls import Callees
    from cujit.ir.analysis import uses_grid_sync, written_arguments
    from cujit.irgen import build_ir
    from cujit.passes import DEFAULT_PASSES, RELEASE_PASSES, run_passes
    from cujit.ptx import compile_ptx, link_cubin
    from cujit.ptx.params import prune_entry_params
    from cujit.targets.cuda import CUDA_TARGET

    pass_list = DEFAULT_PASSES if options.debug else RELEASE_PASSES

    def check(fn, typed: bool = True):
        if options.verify:
            ir.verify(fn, typed=typed)
        return fn

    def passes(fn, result):
        fn = check(run_passes(fn, pass_list))
        result.written = written_arguments(fn)
        result.cooperative = uses_grid_sync(fn)
        return fn

    def llvm(fn, result):
        module = lower_to_llvm(fn, CUDA_TARGET, debug=options.debug)
        result.symbol = kernel_symbol(fn)
        result.debug_sites = error_sites(module)
        return str(module)

    def ptx(text, result):
        out = compile_ptx(text, options.arch, opt=options.opt, fastmath=options.fastmath)
        if options.debug:  # debug info describes the parameters as declared: keep them all
            return out
        pruned, kept = prune_entry_params(out, result.symbol)
        if kept is None:  # a parameter list in an unexpected form: launch with them all
            return out
        if len(kept) != len(flat_param_kinds(arg_types)):
            raise AssertionError(f"the PTX entry {result.symbol} declares {len(kept)} "
                                 f"parameters, not the ABI's {len(flat_param_kinds(arg_types))}")
        result.kept = None if all(kept) else kept
        return pruned

    def device_front_end(pyfunc, types, return_type, callees):
        # Stages 1-5 of a device function the kernel calls, for the call's types.
        fn = check(build_ir(build_cfg(decode(pyfunc))), typed=False)
        fn = check(infer_types(fn, types, callees, device=True, return_type=return_type))
        return check(run_passes(fn, pass_list))

    callees = Callees(device_front_end)  # one per compilation: it holds the call chain
    front = (
        ("bytecode", lambda fn, r: decode(fn)),
        ("cfg", lambda bc, r: build_cfg(bc)),
        ("ir", lambda cfg, r: check(build_ir(cfg), typed=False)),
        ("typed", lambda fn, r: check(infer_types(fn, tuple(arg_types), callees))),
        ("passes", passes),
    )
    if options.target == "cpu":
        from cujit.targets.cpu import compile_cpu_kernel

        def native(fn, result):
            kernel = compile_cpu_kernel(fn, options)
            result.debug_sites = kernel.debug_sites
            return kernel

        return front + (("native", native),)
    return front + (
        ("llvm", llvm),
        ("ptx", ptx),
        ("cubin", lambda ptx, r: link_cubin(ptx, options.arch)),
    )


def compile_kernel(pyfunc, arg_types, options: Options = Options(),
                   stop_after: str = "cubin") -> CompileResult:
    """Compile ``pyfunc`` for ``arg_types``; return every stage's output up to ``stop_after``."""
    warmup.wait()  # a warm-up running beside the driver's start finishes first (warmup.py)
    stages = TARGET_STAGES.get(options.target)
    if stages is None:
        raise ValueError(f"unknown target {options.target!r}; targets are "
                         f"{', '.join(TARGET_STAGES)}")
    if stop_after == "cubin" and options.target == "cpu":
        stop_after = "native"  # the default: run every stage of the chosen target
    if stop_after not in stages:
        raise ValueError(f"unknown stage {stop_after!r}; stages of target {options.target!r} "
                         f"are {', '.join(stages)}")
    result = CompileResult(getattr(pyfunc, "__qualname__", repr(pyfunc)))
    events.notify(events.COMPILE, result.name, options.target)
    value: object = pyfunc
    for name, run in _stage_table(arg_types, options):
        start = time.perf_counter()
        try:
            value = run(value, result)
        except CujitError:
            raise
        except Exception as exc:  # a bug in cujit: say so, and where the user's kernel is
            raise InternalCompilerError(name, result.name, function_loc(pyfunc), exc) from exc
        result.times[name] = time.perf_counter() - start
        result.outputs[name] = value
        if name == stop_after:
            break
    return result


def function_loc(pyfunc) -> Loc | None:
    code = getattr(pyfunc, "__code__", None)
    if code is None:
        return None
    return Loc(code.co_filename, code.co_firstlineno, 0)
