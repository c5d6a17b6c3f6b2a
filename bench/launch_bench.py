"""Launch and start-up costs of cujit beside its anchors, measured in one run.

    PYTHONPATH=src python3 bench/launch_bench.py            (on a GPU machine)

Rows:
- host time per launch of an empty-bodied kernel with 1, 4 and 16 arguments, device
  arrays and scalars: cujit; the same cubin launched through raw ``cuLaunchKernel``
  (cuda.bindings packing the arguments); numba-cuda; CuPy RawKernel (CUDA C);
- a new kernel in a warm process, compiled to a loaded cubin and launched once:
  cujit vs numba-cuda;
  beside it, the toolchain's floor: libNVVM + nvJitLink alone on that kernel's LLVM IR;
- a fresh process from ``import`` to the first finished saxpy launch: cujit vs numba-cuda;
- a cache hit in a fresh process (``cache=True``, entry written by an earlier process):
  from the first launch call to its finished launch (key, read, load, launch, sync),
  cujit vs numba-cuda's own ``cache=True``;
- ``import`` time of the package in a fresh process.

Prints a table with ratios and saves everything to bench/results/launch-<date>.json.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timezone

import numpy as np

# numba-cuda 0.30 (the anchor) still calls np.row_stack, which NumPy 2.5 removed; the
# GPU machine's image has NumPy 2.5.  Give it the alias it expects (same function) so the
# anchor runs at all; cujit does not use it.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
sys.path.insert(0, SRC)

N_LAUNCH = 5000
REPEATS = 7


def per_launch(launch_once, sync) -> float:
    """Median over REPEATS of host seconds per launch, N_LAUNCH back-to-back launches."""
    for _ in range(200):
        launch_once()
    sync()
    samples = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(N_LAUNCH):
            launch_once()
        samples.append((time.perf_counter() - start) / N_LAUNCH)
        sync()
    return statistics.median(samples)


# Kernel bodies never true at run time, so the launch cost dominates; the compiler
# cannot remove them (they depend on the arguments).
def k1(x):
    if x.size < 0:
        x[0] = 0


def k4(a, x, y, out):
    if x.size < 0:
        out[0] = a * x[0] + y[0]


def k16(a0, a1, a2, a3, a4, a5, a6, a7, x0, x1, x2, x3, x4, x5, x6, x7):
    if x0.size < 0:
        x0[0] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + x1[0] + x2[0] + x3[0] + x4[0] \
            + x5[0] + x6[0] + x7[0]


def args_for(fn, mod, n=1024):
    """Python-level args: float32 scalars then float32 device arrays made by ``mod``."""
    import inspect

    names = list(inspect.signature(fn).parameters)
    out = []
    for name in names:
        if name.startswith("a"):
            out.append(np.float32(1.5))
        else:
            out.append(mod.to_device(np.random.default_rng().random(n, dtype=np.float32)))
    return out


CUPY_SRC = r"""
extern "C" __global__ void k1(float* x, long long n) { if (n < 0) x[0] = 0; }
extern "C" __global__ void k4(float a, float* x, float* y, float* out, long long n) {
    if (n < 0) out[0] = a * x[0] + y[0]; }
extern "C" __global__ void k16(float a0, float a1, float a2, float a3, float a4, float a5,
    float a6, float a7, float* x0, float* x1, float* x2, float* x3, float* x4, float* x5,
    float* x6, float* x7, long long n) {
    if (n < 0) x0[0] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + x1[0] + x2[0] + x3[0]
        + x4[0] + x5[0] + x6[0] + x7[0]; }
"""


def bench_launches() -> dict:
    from cuda.bindings import driver as drv

    from cujit import cuda

    rows = {}
    warm = cuda.jit(k1)  # a second of launches first: the first row must not pay the ramp-up
    wargs = args_for(k1, cuda)
    deadline = time.perf_counter() + 1.0
    while time.perf_counter() < deadline:
        warm[1, 32](*wargs)
    cuda.synchronize()
    for fn in (k1, k4, k16):
        name = fn.__name__
        row = {}
        kern = cuda.jit(fn)
        args = args_for(fn, cuda)
        kern[1, 32](*args)
        cuda.synchronize()
        row["cujit"] = per_launch(lambda: kern[1, 32](*args), cuda.synchronize)
        cfg = kern[1, 32]
        row["cujit_config_reused"] = per_launch(lambda: cfg(*args), cuda.synchronize)

        # raw cuLaunchKernel of the same cubin, the bindings packing the values
        spec = next(iter(kern.overloads.values()))
        err, module = drv.cuModuleLoadData(spec.result.cubin)
        assert err == 0, err
        err, func = drv.cuModuleGetFunction(module, spec.result.symbol.encode())
        assert err == 0, err
        values, ctypes_types = [], []
        for a in args:
            if hasattr(a, "device_ptr"):  # a C-contiguous array: pointer and extent
                values += [a.device_ptr, a.shape[0]]
                ctypes_types += [ctypes.c_void_p, ctypes.c_int64]
            else:
                values.append(float(a))
                ctypes_types.append(ctypes.c_float)
        params = (tuple(values), tuple(ctypes_types))
        stream = drv.CUstream(0)

        def raw():
            drv.cuLaunchKernel(func, 1, 1, 1, 32, 1, 1, 0, stream, params, 0)

        row["raw_bindings"] = per_launch(raw, cuda.synchronize)
        try:
            from numba import cuda as ncuda

            nk = ncuda.jit(fn)
            nargs = args_for(fn, ncuda)
            nk[1, 32](*nargs)
            ncuda.synchronize()
            row["numba_cuda"] = per_launch(lambda: nk[1, 32](*nargs), ncuda.synchronize)
        except Exception as exc:  # anchor missing: say so in the table
            row["numba_cuda"] = f"unavailable: {type(exc).__name__}: {exc}"[:120]
        try:
            import cupy

            ck = cupy.RawModule(code=CUPY_SRC).get_function(name)
            cargs = []
            for a in args:
                cargs.append(cupy.asarray(a.copy_to_host()) if hasattr(a, "device_ptr")
                             else np.float32(a))
            cargs.append(np.int64(1024))
            ck((1,), (32,), tuple(cargs))
            cupy.cuda.runtime.deviceSynchronize()
            row["cupy_rawkernel"] = per_launch(lambda: ck((1,), (32,), tuple(cargs)),
                                               cupy.cuda.runtime.deviceSynchronize)
        except Exception as exc:
            row["cupy_rawkernel"] = f"unavailable: {type(exc).__name__}: {exc}"[:120]
        rows[f"launch {name} ({len(args)} args)"] = row
    return rows


def bench_warm_compile() -> dict:
    """A new kernel in a warm process: compile, load, launch once, synchronize."""
    from cujit import cuda

    src = textwrap.dedent('''
    def saxpy_{tag}(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i] + y[i]
    ''')
    x = np.random.default_rng().random(1 << 20, dtype=np.float32)
    out = {}
    for label, mod_name in (("cujit", "cujit"), ("numba_cuda", "numba")):
        try:
            mod = __import__(mod_name, fromlist=["cuda"]).cuda
            dx, dy, dout = mod.to_device(x), mod.to_device(x), mod.to_device(x)
            times = []
            for rep in range(4):  # first is the process's first compile: report separately
                ns = {"cuda": mod}
                exec(src.format(tag=f"{label}{rep}"), ns)
                fn = ns[f"saxpy_{label}{rep}"]
                start = time.perf_counter()
                k = mod.jit(fn)
                k[(x.size + 255) // 256, 256](np.float32(2.0), dx, dy, dout)
                mod.synchronize()
                times.append(time.perf_counter() - start)
            out[label] = {"first_in_process": times[0], "later_median": statistics.median(times[1:])}
            if label == "cujit":
                out["toolchain_floor"] = toolchain_floor(next(iter(k.overloads.values())),
                                                         k._options().arch)
        except Exception as exc:
            out[label] = f"unavailable: {type(exc).__name__}: {exc}"[:120]
    return out


def toolchain_floor(spec, arch) -> float:
    """libNVVM (LLVM IR -> PTX) + nvJitLink (PTX -> cubin) alone on a kernel's LLVM IR:
    what any compile of that kernel through them costs, median of 5.  Each round renames
    the kernel: the same module twice can come back faster than a new one."""
    from cujit.ptx import compile_ptx, link_cubin

    llvm, symbol = spec.result.outputs["llvm"], spec.result.symbol
    times = []
    for rep in range(5):
        module = llvm.replace(f'@"{symbol}"', f'@"{symbol}_floor{rep}"')
        assert module != llvm
        start = time.perf_counter()
        link_cubin(compile_ptx(module, arch), arch)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


FRESH = textwrap.dedent('''
import time
t0 = time.perf_counter()
import numpy as np
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack  # for the numba-cuda anchor under NumPy 2.5
from {mod} import cuda
@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
x = cuda.to_device(np.ones(1 << 20, np.float32))
o = cuda.device_array_like(x)
saxpy[4096, 256](np.float32(2.0), x, x, o)
cuda.synchronize()
print(time.perf_counter() - t0)
''')


def _env(**extra) -> dict:
    """The child processes' environment: cujit from this tree, and bytecode caching on,
    as in an installed package (a PYTHONDONTWRITEBYTECODE=1 machine would time
    compiling cujit's sources in every process)."""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _py(code: str, env=None) -> tuple[float, str]:
    return _run([sys.executable, "-c", code], env)


def _run(argv, env=None) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-400:])
    return wall, proc.stdout.strip()


def bench_fresh_process() -> dict:
    env = _env()
    out = {}
    for label, mod in (("cujit", "cujit"), ("numba_cuda", "numba")):
        try:
            samples = [float(_py(FRESH.format(mod=mod), env)[1]) for _ in range(3)]
            out[label] = statistics.median(samples)
        except Exception as exc:
            out[label] = f"unavailable: {exc}"[:160]
    return out


CACHED = textwrap.dedent('''
import time
import numpy as np
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack  # for the numba-cuda anchor under NumPy 2.5
from {mod} import cuda

@cuda.jit(cache=True)
def saxpy_cached(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

x = cuda.to_device(np.ones(1 << 20, np.float32))  # the driver's start, outside the timing
o = cuda.device_array_like(x)
cuda.synchronize()
t0 = time.perf_counter()
saxpy_cached[4096, 256](np.float32(2.0), x, x, o)
cuda.synchronize()
print(time.perf_counter() - t0)
''')


def bench_cache_hit() -> dict:
    """First launch of a cached kernel in a fresh process: the first run writes the
    entry, the median of three later runs is the hit."""
    import tempfile

    out = {}
    for label, mod in (("cujit", "cujit"), ("numba_cuda", "numba")):
        try:
            with tempfile.TemporaryDirectory() as tmp:
                script = os.path.join(tmp, f"cached_{label}.py")  # numba caches file-backed code
                with open(script, "w") as fh:
                    fh.write(CACHED.format(mod=mod))
                env = _env(CUJIT_CACHE_DIR=os.path.join(tmp, "cujit"),
                           NUMBA_CACHE_DIR=os.path.join(tmp, "numba"))
                miss = float(_run([sys.executable, script], env)[1])
                hits = [float(_run([sys.executable, script], env)[1]) for _ in range(3)]
            out[label] = {"miss": miss, "hit_median": statistics.median(hits)}
        except Exception as exc:
            out[label] = f"unavailable: {exc}"[:160]
    return out


def bench_import() -> dict:
    env = _env()
    base = statistics.median(_py("pass", env)[0] for _ in range(5))
    out = {"python_startup": base}
    for label, stmt in (("cujit", "import cujit"), ("cujit_cuda", "from cujit import cuda"),
                        ("numba_cuda", "from numba import cuda"),
                        ("cuda_bindings_driver", "import cuda.bindings.driver")):
        try:
            out[label] = statistics.median(_py(stmt, env)[0] for _ in range(5)) - base
        except Exception as exc:
            out[label] = f"unavailable: {exc}"[:160]
    return out


def fmt(v, scale, unit):
    return f"{v * scale:9.2f} {unit}" if isinstance(v, float) else f"{'n/a':>12}"


def main() -> None:
    results = {"date": datetime.now(timezone.utc).isoformat(), "python": platform.python_version(),
               "machine": platform.node()}
    try:
        import subprocess as sp
        results["gpu"] = sp.run(["nvidia-smi", "--query-gpu=name,driver_version",
                                 "--format=csv,noheader"], capture_output=True,
                                text=True).stdout.strip()
    except Exception:
        results["gpu"] = "unknown"
    results["launch"] = bench_launches()
    results["warm_compile"] = bench_warm_compile()
    results["fresh_process"] = bench_fresh_process()
    results["cache_hit"] = bench_cache_hit()
    results["import"] = bench_import()

    print(f"\n{results['gpu']}  python {results['python']}")
    print(f"{'host us per launch':28} {'cujit':>12} {'raw':>12} {'numba':>12} {'cupy':>12}"
          f" {'cujit/raw':>10}")
    for name, row in results["launch"].items():
        ratio = row["cujit"] / row["raw_bindings"]
        print(f"{name:28} {fmt(row['cujit'], 1e6, 'us')} {fmt(row['raw_bindings'], 1e6, 'us')}"
              f" {fmt(row['numba_cuda'], 1e6, 'us')} {fmt(row['cupy_rawkernel'], 1e6, 'us')}"
              f" {ratio:10.2f}")
    wc = results["warm_compile"]
    for label in ("cujit", "numba_cuda"):
        v = wc[label]
        if isinstance(v, dict):
            print(f"new kernel, warm process, {label:10}: first {v['first_in_process'] * 1e3:8.1f} ms"
                  f", later {v['later_median'] * 1e3:8.1f} ms")
        else:
            print(f"new kernel, warm process, {label}: {v}")
    if isinstance(wc.get("toolchain_floor"), float):
        print(f"  libNVVM + nvJitLink alone on that kernel: {wc['toolchain_floor'] * 1e3:8.1f} ms")
    for label, v in results["cache_hit"].items():
        if isinstance(v, dict):
            print(f"cache hit, fresh process, first launch done, {label:10}: "
                  f"{v['hit_median'] * 1e3:8.2f} ms (miss {v['miss'] * 1e3:.1f} ms)")
        else:
            print(f"cache hit, {label}: {v}")
    fp = results["fresh_process"]
    print("fresh process import->first saxpy done: " + ", ".join(
        f"{k} {fmt(v, 1e3, 'ms')}" for k, v in fp.items()))
    print("import time (minus interpreter start): " + ", ".join(
        f"{k} {fmt(v, 1e3, 'ms')}" for k, v in results["import"].items()))
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    path = os.path.join(HERE, "results", f"launch-{stamp}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(results, fh, indent=1)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, os.path.basename(path)), "w") as fh:
            json.dump(results, fh, indent=1)
    print("saved", path)


if __name__ == "__main__":
    main()
