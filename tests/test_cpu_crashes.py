"""No input ends the process on the CPU target.

- An extension's LLVM (``@intrinsic``) is checked before the host JIT takes it: a call of
  libdevice's ``__nv_*`` runs the host's version, and an undefined symbol, an NVVM
  intrinsic or inline assembly is a LoweringError at the user's line (before, a
  segfault or LLVM's "Cannot select" abort).
- A recursion that never reaches its base case is a RecursionError at the recursive call
  (before, a segfault), and a correct recursion still runs.
- Ctrl-C (SIGINT) stops a spinning kernel within about a second, and the interpreter
  runs kernels after it.

Every case runs as a script in a fresh interpreter with a timeout: a segfault, an abort
or a hang fails the test instead of ending pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

PRELUDE = """
import os, signal, sys, threading, time
import numpy as np
from llvmlite import ir
from cujit import cuda, types
from cujit.extension_intrinsic import intrinsic
from cujit.diagnostics import LoweringError
from cujit.targets.cpu import launch

launch.host_cores = lambda: 4  # parallel launches even on a one-core machine

def report(run):
    try:
        run()
    except BaseException as exc:
        print(f"RAISED {type(exc).__name__}: {exc}", flush=True)
    else:
        print("NO ERROR", flush=True)

@cuda.jit(target="cpu")
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

def still_works():
    x = np.arange(1000.0)
    out = np.zeros_like(x)
    saxpy[4, 256](2.0, x, x, out)
    assert (out == 3 * x).all()
    print("STILL WORKS", flush=True)
"""


def run_script(body: str, timeout: float = 120) -> str:
    code = PRELUDE + textwrap.dedent(body)
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    env.pop("CUJIT_TARGET", None)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def line_of(body: str, marker: str) -> int:
    """The line (of the script run_script makes) that carries ``marker``."""
    lines = (PRELUDE + textwrap.dedent(body)).splitlines()
    (k,) = [k for k, text in enumerate(lines) if marker in text]
    return k + 1


# --- an extension's LLVM ---------------------------------------------------------

CALLS_SYMBOL = """
@intrinsic
def call_it(typingctx, x):
    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.DoubleType(), [ir.DoubleType()])
        fn = ir.Function(builder.module, fnty, name=SYMBOL)
        return builder.call(fn, args)
    return types.float64(types.float64), codegen

@cuda.jit(target="cpu")
def kernel(out):
    out[0] = call_it(out[0])  # <- the call

out = np.array([0.5])
report(lambda: kernel[1, 1](out))
print("VALUE", out[0])
still_works()
"""


def test_libdevice_call_in_an_intrinsic_runs_the_host_version():
    out = run_script('SYMBOL = "__nv_sin"\n' + CALLS_SYMBOL)
    assert "NO ERROR" in out and "STILL WORKS" in out
    assert f"VALUE {float(np.sin(0.5))!r}" in out


def test_libdevice_formula_and_outputs_in_an_intrinsic():
    body = """
    @intrinsic
    def brev_and_sincos(typingctx, n, x):
        def codegen(context, builder, signature, args):
            m = builder.module
            i32, f64 = ir.IntType(32), ir.DoubleType()
            brev = ir.Function(m, ir.FunctionType(i32, [i32]), name="__nv_brev")
            sincos = ir.Function(
                m, ir.FunctionType(ir.VoidType(), [f64, f64.as_pointer(), f64.as_pointer()]),
                name="__nv_sincos",
            )
            s, c = builder.alloca(f64), builder.alloca(f64)
            builder.call(sincos, [args[1], s, c])
            r = builder.sitofp(builder.call(brev, [args[0]]), f64)
            return builder.fadd(r, builder.fadd(builder.load(s), builder.load(c)))
        return types.float64(types.int32, types.float64), codegen

    @cuda.jit(target="cpu")
    def kernel(out):
        out[0] = brev_and_sincos(np.int32(1), out[0])

    out = np.array([0.25])
    report(lambda: kernel[1, 1](out))
    print("VALUE", out[0])
    """
    out = run_script(body)
    assert "NO ERROR" in out
    expected = float(np.int32(np.uint32(1 << 31).view(np.int32))) + np.sin(0.25) + np.cos(0.25)
    value = float(out.split("VALUE")[1].split()[0])
    assert value == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    ("symbol", "words"),
    [
        ("no_such_symbol_anywhere", "'no_such_symbol_anywhere', which this process does not"),
        ("__nv_no_such_function", "__nv_no_such_function, which is not a libdevice function"),
    ],
)
def test_undefined_symbol_in_an_intrinsic_is_refused_at_the_users_line(symbol, words):
    body = f"SYMBOL = {symbol!r}\n" + CALLS_SYMBOL
    out = run_script(body)
    line = line_of(body, "# <- the call")
    assert "RAISED LoweringError" in out, out
    assert f":{line}:" in out and words in out, out
    assert "STILL WORKS" in out


def test_libdevice_call_with_the_wrong_prototype_is_refused():
    body = CALLS_SYMBOL.replace("[ir.DoubleType()])", "[ir.FloatType()])").replace(
        "builder.call(fn, args)",
        "builder.fpext(builder.call(fn, [builder.fptrunc(args[0], "
        "ir.FloatType())]), ir.DoubleType())",
    )
    out = run_script('SYMBOL = "__nv_sin"\n' + body)
    assert "RAISED LoweringError" in out and "its prototype is double (double)" in out, out


def test_nvvm_intrinsic_in_an_intrinsic_is_refused_not_an_abort():
    body = """
    @intrinsic
    def tid_x(typingctx):
        def codegen(context, builder, signature, args):
            fnty = ir.FunctionType(ir.IntType(32), [])
            fn = ir.Function(builder.module, fnty, name="llvm.nvvm.read.ptx.sreg.tid.x")
            return builder.call(fn, [])
        return types.int32(), codegen

    @cuda.jit(target="cpu")
    def kernel(out):
        out[0] = tid_x()  # <- the call

    report(lambda: kernel[1, 1](np.zeros(1, np.int32)))
    still_works()
    """
    out = run_script(body)
    assert "RAISED LoweringError" in out, out
    assert f":{line_of(body, '# <- the call')}:" in out
    assert "llvm.nvvm.read.ptx.sreg.tid.x" in out and "STILL WORKS" in out


def test_inline_assembly_in_an_intrinsic_is_refused():
    body = """
    @intrinsic
    def tid_x(typingctx):
        def codegen(context, builder, signature, args):
            fnty = ir.FunctionType(ir.IntType(32), [])
            return builder.asm(fnty, "mov.u32 $0, %tid.x;", "=r", [], False)
        return types.int32(), codegen

    @cuda.jit(target="cpu")
    def kernel(out):
        out[0] = tid_x()  # <- the call

    report(lambda: kernel[1, 1](np.zeros(1, np.int32)))
    still_works()
    """
    out = run_script(body)
    assert "RAISED LoweringError" in out and "inline assembly" in out, out
    assert f":{line_of(body, '# <- the call')}:" in out and "STILL WORKS" in out


# --- runaway recursion -----------------------------------------------------------

RECURSION = """
@cuda.jit(device=True)
def down(n):
    if n == -1:
        return 0
    return down(n + 1) + 1  # <- recursive call

@cuda.jit(device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
"""


@pytest.mark.parametrize("boundscheck", [None, False])
def test_runaway_recursion_is_a_located_recursion_error(boundscheck):
    body = RECURSION + textwrap.dedent(
        f"""
    @cuda.jit(target="cpu", boundscheck={boundscheck})
    def kernel(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = down(out[i])

    report(lambda: kernel[1, 1](np.ones(1, np.int64)))
    report(lambda: kernel[1 << 9, 256](np.ones(1 << 17, np.int64)))  # every worker at once
    ok = np.full(4, -3, np.int64)
    kernel[1, 4](ok)  # a recursion that ends still runs
    print("ENDS", ok.tolist())
    still_works()
    """
    )
    out = run_script(body)
    line = line_of(body, "# <- recursive call")
    reports = [x for x in out.splitlines() if x.startswith("RAISED")]
    assert len(reports) == 2, out
    for text in reports:
        assert text.startswith("RAISED RecursionError"), out
        assert f"line {line}," in text and "'down(int64)'" in text
    assert "ENDS [2, 2, 2, 2]" in out and "STILL WORKS" in out


def test_recursion_that_ends_is_unchanged_with_barriers():
    body = RECURSION + textwrap.dedent(
        """
    @cuda.jit(target="cpu")
    def kernel(out):
        buf = cuda.shared.array(32, np.int64)
        t = cuda.threadIdx.x
        buf[t] = fib(t % 16)
        cuda.syncthreads()
        out[t] = buf[31 - t]

    out = np.zeros(32, np.int64)
    kernel[1, 32](out)
    print("FIB", out.tolist())
    """
    )
    out = run_script(body)

    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    assert f"FIB {[fib((31 - t) % 16) for t in range(32)]}" in out


# --- Ctrl-C ----------------------------------------------------------------------

SPIN = """
@cuda.jit(target="cpu")
def spin(x):
    i = cuda.grid(1)
    while x[0] == 0:
        x[1] += 1

@cuda.jit(target="cpu")
def spin_barrier(x):
    t = cuda.threadIdx.x
    while x[0] == 0:
        cuda.syncthreads()
        x[1 + t] += 1

def interrupted(kernel, grid, block, n):
    x = np.zeros(n)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    start = time.perf_counter()
    report(lambda: kernel[grid, block](x))
    print(f"AFTER {time.perf_counter() - start - 0.5:.3f}", flush=True)
    timer.join()
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the native SIGINT handler is Linux's")
@pytest.mark.parametrize(
    "launch",
    [
        "interrupted(spin, 1, 1, 4)",
        "interrupted(spin, 1 << 10, 256, 1 << 18)",  # parallel: the worker pool
        "interrupted(spin_barrier, 1, 64, 128)",  # coroutines
    ],
)
def test_ctrl_c_stops_a_spinning_kernel(launch):
    body = SPIN + launch + "\nstill_works()\n" + launch + "\nstill_works()\n"
    out = run_script(body, timeout=60)
    assert out.count("RAISED KeyboardInterrupt") == 2, out
    delays = [float(x.split()[1]) for x in out.splitlines() if x.startswith("AFTER")]
    assert len(delays) == 2 and max(delays) < 1.0, out
    assert out.count("STILL WORKS") == 2


@pytest.mark.skipif(sys.platform != "linux", reason="the native SIGINT handler is Linux's")
def test_ctrl_c_under_a_handler_that_does_not_raise():
    body = SPIN + textwrap.dedent(
        """
    seen = []
    signal.signal(signal.SIGINT, lambda sig, frame: seen.append(sig))
    interrupted(spin, 1, 1, 4)
    print("HANDLER SAW", seen)
    still_works()
    """
    )
    out = run_script(body, timeout=60)
    assert "RAISED LaunchError" in out and "was interrupted (SIGINT)" in out, out
    assert "HANDLER SAW [2]" in out and "STILL WORKS" in out


def test_cached_kernels_keep_the_guards(tmp_path):
    """A kernel loaded from the disk cache in a fresh process links against the support
    symbols too: its recursion guard and its Ctrl-C poll still work."""
    script = tmp_path / "cached_kernels.py"
    script.write_text(
        PRELUDE
        + RECURSION
        + textwrap.dedent(
            """
            @cuda.jit(target="cpu", cache=True)
            def kernel(out):
                out[0] = down(out[0])

            @cuda.jit(target="cpu", cache=True)
            def spin(x):
                while x[0] == 0:
                    x[1] += 1

            report(lambda: kernel[1, 1](np.ones(1, np.int64)))
            threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
            report(lambda: spin[1, 1](np.zeros(2)))
            hits = [sum(k.stats.cache_hits.values()) for k in (kernel, spin)]
            print("HITS", *hits)
            still_works()
            """
        )
    )
    env = dict(os.environ, CUJIT_CACHE_DIR=str(tmp_path / "cache"), PYTHONFAULTHANDLER="1")
    env.pop("CUJIT_TARGET", None)
    outs = []
    for _ in range(2):  # the second process loads both kernels from the cache
        proc = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        outs.append(proc.stdout)
    assert any((tmp_path / "cache").rglob("*")), "nothing was cached"
    assert "HITS 0 0" in outs[0] and "HITS 1 1" in outs[1], outs
    for out in outs:
        assert "RAISED RecursionError" in out and "'down(int64)'" in out, out
        assert "RAISED KeyboardInterrupt" in out and "STILL WORKS" in out, out


def test_first_compiles_in_threads_of_a_fresh_process():
    """Threads of a new process that compile their first kernels at once share one
    support module (two made at once crashed the process)."""
    script = textwrap.dedent(
        """
        import numpy as np
        from concurrent.futures import ThreadPoolExecutor
        from cujit import cuda

        @cuda.jit(target="cpu")
        def bump(x):
            x[0] += 1

        def run(x):
            bump[1, 1](x)
            return float(x[0])

        with ThreadPoolExecutor(max_workers=4) as pool:
            got = list(pool.map(run, [np.zeros(2) for _ in range(8)]))
        print(got)
        """
    )
    env = {**os.environ, "CUJIT_SHOW_INTERNALS": "1"}  # a failure shows where
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr[-4000:]
    assert out.stdout.strip() == str([1.0] * 8)
