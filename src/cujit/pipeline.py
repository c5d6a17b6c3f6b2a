"""The compiler, start to end: seven stages chained in order.

    bytecode -> cfg -> ir -> typed -> passes -> llvm -> ptx -> cubin

``compile_kernel`` runs them, times each, verifies the IR between the IR stages
when asked, and can stop after any stage (``stop_after=``, ``explain --emit``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from cujit.diagnostics import CujitError, InternalCompilerError, Loc
from cujit.options import Options

STAGES = ("bytecode", "cfg", "ir", "typed", "passes", "llvm", "ptx", "cubin")


@dataclass
class CompileResult:
    """What each stage produced, in order, with its time in seconds."""

    name: str
    outputs: dict[str, object] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)
    symbol: str = ""  # the kernel's entry name in the PTX and cubin

    @property
    def cubin(self) -> bytes:
        return self.outputs["cubin"]

    @property
    def ptx(self) -> str:
        return self.outputs["ptx"]


def _stage_table(arg_types, options: Options):
    # Imported here so that ``import cujit`` does not load llvmlite or libNVVM.
    from cujit import ir
    from cujit.bytecode import decode
    from cujit.cfg import build_cfg
    from cujit.codegen import kernel_symbol, lower_to_llvm
    from cujit.infer import infer_types
    from cujit.irgen import build_ir
    from cujit.passes import run_passes
    from cujit.ptx import compile_ptx, link_cubin
    from cujit.targets.cuda import CUDA_TARGET

    def check(fn):
        if options.verify:
            ir.verify(fn, typed=fn.args[0].type is not None if fn.args else True)
        return fn

    def llvm(fn, result):
        module = lower_to_llvm(fn, CUDA_TARGET)
        result.symbol = kernel_symbol(fn)
        return str(module)

    return (
        ("bytecode", lambda fn, r: decode(fn)),
        ("cfg", lambda bc, r: build_cfg(bc)),
        ("ir", lambda cfg, r: check(build_ir(cfg))),
        ("typed", lambda fn, r: check(infer_types(fn, tuple(arg_types)))),
        ("passes", lambda fn, r: check(run_passes(fn))),
        ("llvm", llvm),
        ("ptx", lambda text, r: compile_ptx(text, options.arch, opt=options.opt,
                                            fastmath=options.fastmath)),
        ("cubin", lambda ptx, r: link_cubin(ptx, options.arch)),
    )


def compile_kernel(pyfunc, arg_types, options: Options = Options(),
                   stop_after: str = "cubin") -> CompileResult:
    """Compile ``pyfunc`` for ``arg_types``; return every stage's output up to ``stop_after``."""
    if stop_after not in STAGES:
        raise ValueError(f"unknown stage {stop_after!r}; stages are {', '.join(STAGES)}")
    result = CompileResult(getattr(pyfunc, "__qualname__", repr(pyfunc)))
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
