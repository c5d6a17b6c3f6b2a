"""``cujit`` on the command line.

python -m cujit demo                                   compile and run an embedded saxpy
python -m cujit explain FILE.py:KERNEL --sig SIG       every stage of a kernel, with times
python -m cujit explain FILE.py:KERNEL --sig SIG --emit ptx
python -m cujit cache list|clear                       the on-disk kernel cache
python -m cujit report FILE.py:KERNEL --sig SIG [-o out.html]   the HTML report
python -m cujit run SCRIPT.py [ARGS...]                run a numba.cuda program on cujit
python -m cujit run -m MODULE [ARGS...]                (``import numba.cuda`` gives cujit)
python -m cujit --version                              cujit's version
"""

from __future__ import annotations

import argparse
import sys
import time

from cujit.pipeline import STAGES


def render_stage(name: str, output: object) -> str:
    """The printed form of one stage's output."""
    if name == "bytecode":
        from cujit.bytecode import format_bytecode

        return format_bytecode(output)
    if name == "cfg":
        from cujit.cfg import format_cfg

        return format_cfg(output)
    if name in ("ir", "typed", "passes"):
        from cujit.ir import format_function

        return format_function(output)
    if name == "cubin":
        return f"{len(output)} bytes of ELF (CUDA cubin)\n"
    return str(output)


def print_stages(result, emit: str | None = None, out=sys.stdout, limit: int | None = None):
    for name in STAGES:
        if name not in result.outputs or (emit and name != emit):
            continue
        text = render_stage(name, result.outputs[name])
        ms = result.times[name] * 1e3
        if emit:
            out.write(text if text.endswith("\n") else text + "\n")
            continue
        out.write(f"== {name} ({ms:.2f} ms) ==\n")
        lines = text.rstrip("\n").splitlines()
        if limit is not None and len(lines) > limit:
            lines = lines[:limit] + [f"... ({len(lines) - limit} more lines)"]
        out.write("\n".join(lines) + "\n")
    if not emit:
        total = sum(result.times.values()) * 1e3
        out.write(
            "== times ==\n" + "  ".join(f"{k} {v * 1e3:.2f} ms" for k, v in result.times.items())
        )
        out.write(f"\ntotal {total:.2f} ms\n")


def print_parameters(result, arg_names, arg_types, out=sys.stdout) -> None:
    """The kernel's flat parameters (``cujit.abi``) and which the launch passes: those
    the optimised kernel reads (``LaunchRecord.passed``)."""
    from cujit import abi

    names = [n for a, t in zip(arg_names, arg_types, strict=True) for n in abi.param_names(a, t)]
    kinds = abi.flat_param_kinds(arg_types)
    kept = result.record.passed
    out.write(f"== parameters ({sum(kept)} of {len(kinds)} passed at launch) ==\n")
    width = max((len(n) for n in names), default=0)
    for name, kind, keep in zip(names, kinds, kept, strict=True):
        note = "" if keep else "  (never read: not passed)"
        out.write(f"  {name:{width}}  {kind}{note}\n")


def _load_kernel(target: str, command: str = "explain"):
    from cujit.explain_load import load_kernel  # the file's definitions only, no launches

    return load_kernel(target, command)


def cmd_explain(args) -> int:
    from cujit.diagnostics import CujitError
    from cujit.options import Options
    from cujit.pipeline import compile_kernel
    from cujit.types import parse_signature

    pyfunc = _load_kernel(args.target)
    try:
        sig = parse_signature(args.sig)
    except CujitError as exc:
        hint = f" ({exc.hint})" if getattr(exc, "hint", None) else ""
        raise SystemExit(f"cujit explain: --sig {args.sig!r}: {exc.message}{hint}") from None
    arch = tuple(int(x) for x in args.arch.split(".")) if args.arch else Options().arch
    try:
        result = compile_kernel(
            pyfunc, sig.args, Options(arch=arch, verify=True), stop_after=args.emit or "cubin"
        )
    except CujitError as exc:
        print(exc, file=sys.stderr)
        return 1
    print_stages(result, emit=args.emit)
    if not args.emit and "ptx" in result.outputs:
        code = pyfunc.__code__
        print_parameters(result, code.co_varnames[: code.co_argcount], sig.args)
    if not args.emit and "passes" in result.outputs:
        from cujit.ir.independence import analyse

        verdict = analyse(result.outputs["passes"])
        print(f"== coarsening ==\n  {verdict.describe()}")
        if not verdict.ok and "index32" in result.outputs:  # docs/index32.md
            print(f"  {_index32_line(result.outputs['index32'])}")
    return 0


def _index32_line(has: bool) -> str:
    if has:
        return (
            "32-bit index variant: where every array holds 1..2**30 elements and the grid "
            "at most 2**30 threads per axis, int64 index comparisons and divisions in int32"
        )
    return "no 32-bit index variant: small arrays would change too few comparisons"


EXPLAIN_HELP = """Print every stage of a kernel's compilation.  The file is not run as a
script: only its top-level definitions are (imports, def, class, assignments, if
blocks other than `if __name__ == "__main__"`), with kernel launches disabled and
their output sent to stderr, so that the kernel's globals have their values while
the script's own work (launches, prints, loops) does not happen."""


DEMO_SOURCE = """\
from cujit import cuda

@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
"""


def cmd_demo(args) -> int:
    import linecache

    import numpy as np

    from cujit import cuda, float32

    filename = "<cujit demo>"
    linecache.cache[filename] = (len(DEMO_SOURCE), None, DEMO_SOURCE.splitlines(True), filename)
    namespace: dict = {}
    exec(compile(DEMO_SOURCE, filename, "exec"), namespace)
    saxpy = namespace["saxpy"]
    print(DEMO_SOURCE)
    arg_types = (float32, float32[::1], float32[::1], float32[::1])
    # The types a launch with contiguous arrays will have, so the launch reuses this compile.
    # The stages shown are the CUDA target's, whatever target runs the kernel after.
    from cujit.pipeline import compile_kernel

    result = (
        saxpy.compile(arg_types).result
        if saxpy.target == "cuda"
        else compile_kernel(saxpy.py_func, arg_types)
    )
    print_stages(_every_stage(result, saxpy.py_func, arg_types), limit=args.lines)
    print_parameters(result, ("a", "x", "y", "out"), arg_types)
    n = 1 << 20
    rng = np.random.default_rng()
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    on_gpu = saxpy.target == "cuda" and cuda.is_available()
    if on_gpu:
        where = "the GPU"
        d_x, d_y, d_out = cuda.to_device(x), cuda.to_device(y), cuda.to_device(out)
        start = time.perf_counter()
        saxpy[(n + 255) // 256, 256](np.float32(2.0), d_x, d_y, d_out)
        cuda.synchronize()
        took = time.perf_counter() - start
        got = d_out.copy_to_host()
    else:
        if saxpy.target == "cuda":
            print(
                "\nNo CUDA GPU was found on this machine: the kernel was compiled through "
                "every stage to a cubin, but cannot run here. Running it on the CPU target "
                "instead (the same typed IR, compiled for this host)."
            )
        where = "the CPU target"
        cpu_saxpy = cuda.jit(saxpy.py_func, target="cpu")
        start = time.perf_counter()
        cpu_saxpy[(n + 255) // 256, 256](np.float32(2.0), x, y, out)
        took = time.perf_counter() - start
        got = out
    ref = 2.0 * x.astype(np.float64) + y
    err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
    ok = err < 1e-6
    print(
        f"\nran saxpy on {where} over {n} elements (first launch, compile/load included: "
        f"{took * 1e3:.2f} ms); relative error vs NumPy {err:.2e}: "
        f"{'OK' if ok else 'MISMATCH'}"
    )
    print(NEXT_STEPS)
    return 0 if ok else 1


def _every_stage(result, pyfunc, arg_types):
    """``result``'s stages with the early ones a kernel's specialisation lets go of
    once compiled (bytecode, CFG, IR: ``dispatcher.FORGOTTEN_STAGES``) made again."""
    import types

    from cujit.pipeline import compile_kernel

    if all(name in result.outputs for name in ("bytecode", "cfg", "ir")):
        return result
    early = compile_kernel(pyfunc, arg_types, stop_after="ir")
    return types.SimpleNamespace(
        outputs={**early.outputs, **result.outputs}, times={**early.times, **result.times}
    )


NEXT_STEPS = """
What to try next:
  docs/guide/ (in cujit's source)      the user guide: a first kernel, memory, running
                                       without a GPU, debugging, performance, numba
  python -m cujit explain FILE.py:KERNEL --sig "void(float32[:])"
                                       every stage of your own kernel
  CUJIT_TARGET=cpu python PROGRAM.py   run every kernel of a program on the CPU"""


def cmd_cache(args) -> int:
    from cujit import cache

    if args.action == "list":
        print(cache.format_listing())
    else:
        print(f"removed {cache.clear()} files from {cache.cache_dir()}")
    return 0


def cmd_run(args) -> int:
    """Run a program with the numba drop-in installed (cujit.numba_drop_in)."""
    import os
    import runpy

    from cujit import install_numba_drop_in

    install_numba_drop_in()
    if args.module:
        sys.argv = [args.target, *args.args]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(args.target, run_name="__main__", alter_sys=True)
        return 0
    path = os.path.abspath(args.target)
    if not os.path.exists(path):
        raise SystemExit(f"cujit run: no such file {args.target!r}")
    sys.argv = [args.target, *args.args]
    sys.path.insert(0, os.path.dirname(path))  # as `python script.py` would
    runpy.run_path(path, run_name="__main__")
    return 0


def main(argv=None) -> int:
    # The module docstring, as plain text: no reST literal markup in --help.
    parser = argparse.ArgumentParser(
        prog="cujit",
        description=__doc__.replace("``", ""),
        epilog="The user guide: docs/guide/ in cujit's source.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from cujit import __version__

    parser.add_argument("--version", action="version", version=f"cujit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compile and run an embedded saxpy kernel")
    demo.add_argument("--lines", type=int, default=12, help="lines shown per stage")
    demo.set_defaults(func=cmd_demo)
    ex = sub.add_parser(
        "explain", help="print every stage of a kernel's compilation", description=EXPLAIN_HELP
    )
    ex.add_argument("target", help="FILE.py:KERNEL")
    ex.add_argument("--sig", required=True, help='a signature such as "void(float32[:])"')
    ex.add_argument("--emit", choices=STAGES, help="print only this stage's output")
    ex.add_argument("--arch", help="compute capability, e.g. 9.0 (default 9.0)")
    ex.set_defaults(func=cmd_explain)
    ca = sub.add_parser("cache", help="list or clear the on-disk kernel cache")
    ca.add_argument("action", choices=("list", "clear"))
    ca.set_defaults(func=cmd_cache)
    from cujit.report.cli import add_report_command

    add_report_command(sub, _load_kernel)
    run = sub.add_parser("run", help="run a numba.cuda program with numba.cuda served by cujit")
    run.add_argument(
        "-m", dest="module", action="store_true", help="TARGET is a module name, as with python -m"
    )
    run.add_argument("target", help="the script (or, with -m, the module) to run")
    run.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    run.set_defaults(func=cmd_run)
    args = parser.parse_args(argv)
    return args.func(args)
