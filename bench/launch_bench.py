"""Launch and start-up costs of cujit beside its anchors, measured in one run.

    PYTHONPATH=src python3 bench/launch_bench.py [--only PART,...]   (on a GPU machine)

Rows:
- host time per launch of an empty-bodied kernel with 1, 4 and 16 arguments, device
  arrays and scalars: cujit; the same cubin launched through raw ``cuLaunchKernel``
  (cuda.bindings packing the arguments); numba-cuda; CuPy RawKernel (CUDA C);
- a new kernel in a warm process, compiled to a loaded cubin and launched once, for a
  set of kernels (``WARM_KERNELS``: saxpy and kernels of tests/kernels.py): cujit vs
  numba-cuda, each round a new renamed function; per kernel the toolchain's floor beside
  it (libNVVM + nvJitLink alone on that kernel's LLVM IR); the geometric mean of the
  numba/cujit ratios;
- a fresh process from ``import`` to the first finished saxpy launch: cujit vs numba-cuda,
  and the floor: a process that only starts the driver, copies the input in, loads a
  cubin compiled beforehand by this process and launches it through cuda.bindings;
- a cache hit in a fresh process (``cache=True``, entry written by an earlier process):
  from the first launch call to its finished launch (key, read, load, launch, sync),
  cujit vs numba-cuda's own ``cache=True``;
- ``import`` time of the package in a fresh process.

Every kernel compiled for a compile-time row has a name no earlier run used: on a
machine with a CUDA driver, PTX seen before (in any process) can come back from a disk
cache in milliseconds, which is not the cost of a new kernel.  The warm-compile rows run
each compiler in a child process of its own.

Prints a table with ratios and saves everything to bench/results/launch-<date>.json.
``--only warm_compile,fresh_process`` runs only the parts named (of ``PARTS``).
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import json
import os
import platform
import secrets
import statistics
import string
import subprocess
import sys
import textwrap
import time
import types as pytypes
import warnings
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
REPEATS = 15


def per_launch(launch_once, sync) -> float:
    """Median over REPEATS of host seconds per launch, N_LAUNCH back-to-back launches."""
    return interleaved({"only": (launch_once, sync)})["only"]


def interleaved(tools: dict) -> dict:
    """Host seconds per launch for each of ``tools`` (name -> (launch_once, sync)),
    measured in REPEATS rounds; each round times N_LAUNCH back-to-back launches of every
    tool in turn, the order rotating from round to round, so that the machine's drift
    (clock ramps, other work) falls on all tools alike.  Returns each tool's median, and
    under ``"rounds"`` every round's seconds per launch (for ratios taken round by round)."""
    for launch_once, sync in tools.values():
        for _ in range(200):
            launch_once()
        sync()
    names = list(tools)
    rounds = {name: [] for name in names}
    for r in range(REPEATS):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            launch_once, sync = tools[name]
            start = time.perf_counter()
            for _ in range(N_LAUNCH):
                launch_once()
            rounds[name].append((time.perf_counter() - start) / N_LAUNCH)
            sync()
    out = {name: statistics.median(v) for name, v in rounds.items()}
    out["rounds"] = rounds
    return out


def round_ratio(rounds: dict, a: str, b: str) -> float | None:
    """Median over rounds of a's time / b's time in the same round."""
    if a not in rounds or b not in rounds:
        return None
    return statistics.median(x / y for x, y in zip(rounds[a], rounds[b], strict=True))


def k1(x):
    if x.size < 0:
        x[0] = 0


def k4(a, x, y, out):
    if x.size < 0:
        out[0] = a * x[0] + y[0]


def k16(a0, a1, a2, a3, a4, a5, a6, a7, x0, x1, x2, x3, x4, x5, x6, x7):
    if x0.size < 0:
        x0[0] = (
            a0
            + a1
            + a2
            + a3
            + a4
            + a5
            + a6
            + a7
            + x1[0]
            + x2[0]
            + x3[0]
            + x4[0]
            + x5[0]
            + x6[0]
            + x7[0]
        )


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


# ctypes type per parameter kind of cujit.abi, for cuda.bindings' (values, types) packing;
# a half travels as its 16 bits.
RAW_CTYPES = {
    "ptr": ctypes.c_void_p,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float16": ctypes.c_uint16,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
}


def raw_params(spec, args, pointer=None) -> tuple[list, list[str]]:  # noqa: C901 -- mirrors cujit.abi's flattening per argument kind to check it independently; the copy must stay literal
    """The values a raw ``cuLaunchKernel`` of ``spec``'s cubin takes for ``args``, and
    their kinds: the ABI's flat layout of the argument types (``cujit.abi.param_kinds``),
    reduced to the parameters a launch passes (``spec.record.passed``, the compiler's
    launch record), checked against ``spec.param_kinds``.

    ``pointer(array)`` gives an array's pointer value (default: ``array.device_ptr``);
    extents and strides are read from the array itself, so host arrays with a
    ``pointer`` that stands for their device copies work too.
    """
    from cujit import abi
    from cujit.types.core import Array, Scalar, Tuple

    pointer = pointer or (lambda a: a.device_ptr)
    values: list = []
    kinds: list[str] = []

    def add(t, a):  # noqa: C901 -- one branch per ABI parameter kind (pointer, half, float, int), as cujit.abi orders them
        if isinstance(t, Tuple):
            for item_type, item in zip(t.items, a, strict=True):
                add(item_type, item)
            return
        ks = abi.param_kinds(t)
        if isinstance(t, Array):
            extra = len(ks) - 1
            if ks[0] != abi.POINTER or extra not in (t.ndim, 2 * t.ndim):
                raise ValueError(f"unexpected parameter kinds {ks} for {t}")
            vals = [pointer(a)] + [int(n) for n in a.shape]
            if extra == 2 * t.ndim:
                vals += [int(n) for n in a.strides]
        elif isinstance(t, Scalar):
            vals = [complex(a).real, complex(a).imag] if len(ks) == 2 else [a]
        else:
            raise ValueError(f"no raw parameters for {t}")
        for kind, v in zip(ks, vals, strict=True):
            if kind == abi.POINTER:
                pass
            elif kind == "float16":
                v = int(np.float16(v).view(np.uint16))
            elif kind.startswith("float"):
                v = float(v)
            else:
                v = int(v)
            values.append(v)
            kinds.append(kind)

    for t, a in zip(spec.arg_types, args, strict=True):
        add(t, a)
    kept = spec.record.passed
    if not all(kept):  # as cujit.abi.keep: only the parameters the kernel still takes
        if len(kept) != len(kinds):
            raise ValueError(f"kept mask of {len(kept)} for {len(kinds)} parameters")
        values = [v for v, k in zip(values, kept, strict=True) if k]
        kinds = [k for k, keep in zip(kinds, kept, strict=True) if keep]
    if kinds != list(spec.param_kinds):
        raise ValueError(
            f"raw parameter kinds {kinds} differ from the specialisation's {list(spec.param_kinds)}"
        )
    return values, kinds


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


def _raw_tool(kern, args):
    """Raw cuLaunchKernel of the kernel's own cubin, cuda.bindings packing the values."""
    from cuda.bindings import driver as drv

    spec = next(iter(kern.overloads.values()))
    err, module = drv.cuModuleLoadData(spec.result.cubin)
    assert err == 0, err
    err, func = drv.cuModuleGetFunction(module, spec.record.symbol.encode())
    assert err == 0, err
    values, kinds = raw_params(spec, args)
    params = (tuple(values), tuple(RAW_CTYPES[k] for k in kinds))
    stream = drv.CUstream(0)
    return lambda: drv.cuLaunchKernel(func, 1, 1, 1, 32, 1, 1, 0, stream, params, 0)


def _numba_tool(fn):
    from numba import cuda as ncuda

    nk = ncuda.jit(fn)
    nargs = args_for(fn, ncuda)
    nk[1, 32](*nargs)
    ncuda.synchronize()
    return (lambda: nk[1, 32](*nargs)), ncuda.synchronize


def _cupy_tool(name, args):
    import cupy

    ck = cupy.RawModule(code=CUPY_SRC).get_function(name)
    cargs = tuple(
        cupy.asarray(a.copy_to_host()) if hasattr(a, "device_ptr") else np.float32(a) for a in args
    ) + (np.int64(1024),)
    ck((1,), (32,), cargs)
    cupy.cuda.runtime.deviceSynchronize()
    return (lambda: ck((1,), (32,), cargs)), cupy.cuda.runtime.deviceSynchronize


def _launch_tools(fn, cuda) -> tuple[dict, dict]:
    """The launches measured for one kernel (name -> (launch_once, sync)), and the
    anchors that could not be set up (name -> why)."""
    kern = cuda.jit(fn)
    args = args_for(fn, cuda)
    kern[1, 32](*args)
    cuda.synchronize()
    cfg = kern[1, 32]
    tools = {
        "cujit": (lambda: kern[1, 32](*args), cuda.synchronize),
        "cujit_config_reused": (lambda: cfg(*args), cuda.synchronize),
    }
    missing = {}
    anchors = {
        "raw_bindings": lambda: (_raw_tool(kern, args), cuda.synchronize),
        "numba_cuda": lambda: _numba_tool(fn),
        "cupy_rawkernel": lambda: _cupy_tool(fn.__name__, args),
    }
    for label, make in anchors.items():
        try:
            tools[label] = make()
        except Exception as exc:  # anchor missing: say so in the table
            missing[label] = f"unavailable: {type(exc).__name__}: {exc}"[:120]
    return tools, missing


def bench_launches() -> dict:
    """Per kernel (1, 4, 16 arguments), every tool measured round by round
    (``interleaved``); ``cujit_over_raw`` is the median of the rounds' ratios."""
    from cujit import cuda

    rows = {}
    warm = cuda.jit(k1)  # a second of launches first: the first row must not pay the ramp-up
    wargs = args_for(k1, cuda)
    deadline = time.perf_counter() + 1.0
    while time.perf_counter() < deadline:
        warm[1, 32](*wargs)
    cuda.synchronize()
    for fn in (k1, k4, k16):
        tools, missing = _launch_tools(fn, cuda)
        row = interleaved(tools)
        rounds = row.pop("rounds")
        row.update(missing)
        row["cujit_over_raw"] = round_ratio(rounds, "cujit", "raw_bindings")
        row["rounds"] = rounds
        nargs = fn.__code__.co_argcount
        rows[f"launch {fn.__name__} ({nargs} args)"] = row
    return rows


# The kernel set of the warm-compile rows: saxpy first (its numbers keep the earlier
# runs' JSON keys), then kernels of tests/kernels.py with shared memory, atomics, 2-D
# indexing, libdevice math and Python integer semantics.
WARM_KERNELS = (
    "saxpy",
    "matmul_shared_tiles",
    "reduce_shared_atomic",
    "stencil_boundaries",
    "math_functions",
    "python_int_semantics",
)
WARM_ROUNDS = 5  # timed rounds per kernel and compiler, after one discarded warm-up round
_serial = itertools.count()
# In every kernel name this run makes: on a machine with a CUDA driver a PTX module seen
# before (in any process) can come back from a cache, so no name may repeat across runs.
RUN_TOKEN = secrets.token_hex(3)


def renamed(pyfunc, tag: str):
    """A new function object with ``pyfunc``'s code under a name never used before in
    this run (the kernel's symbol comes from the code's name)."""
    name = f"{pyfunc.__name__}_{tag}{RUN_TOKEN}_{next(_serial)}"
    code = pyfunc.__code__
    fields = {"co_name": name}
    if hasattr(code, "co_qualname"):
        fields["co_qualname"] = name
    fn = pytypes.FunctionType(
        code.replace(**fields), pyfunc.__globals__, name, pyfunc.__defaults__, pyfunc.__closure__
    )
    fn.__qualname__ = name
    fn.__kwdefaults__ = pyfunc.__kwdefaults__
    return fn


def _compile_rounds(
    make_fn, mod, host_args, grid, block, shmem, between=None
) -> tuple[list, object]:
    """Seconds per round (a new function, jit, first launch, synchronize), warm-up
    round first, and the last round's kernel; ``between(kernel)``, when given, runs
    after each round, outside its time."""
    dargs = [mod.to_device(a) if isinstance(a, np.ndarray) else a for a in host_args]
    mod.synchronize()
    times, kern = [], None
    with warnings.catch_warnings():  # numba warns of small grids at each new kernel's launch
        warnings.simplefilter("ignore")
        for _ in range(WARM_ROUNDS + 1):
            fn = make_fn()
            start = time.perf_counter()
            kern = mod.jit(fn)
            kern[grid, block, 0, shmem](*dargs)
            mod.synchronize()
            times.append(time.perf_counter() - start)
            if between is not None:
                between(kern)
    return times, kern


def loaded_libraries(words) -> list[str] | str:
    """Paths of the shared libraries mapped into this process whose file name holds one of
    ``words`` (case-insensitive): which libNVVM / nvJitLink the compiles went through."""
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split(None, 5)[5].strip() for line in fh if len(line.split(None, 5)) == 6}
        names = {p: os.path.basename(p).lower() for p in paths}
        return sorted(
            p
            for p, n in names.items()
            if n.startswith("lib") and ".so" in n and any(w in n for w in words)
        )
    except Exception as exc:
        return f"unavailable: {type(exc).__name__}: {exc}"[:160]


def bench_warm_compile_isolated() -> dict:
    """``bench_warm_compile`` with each compiler in a process of its own: what ran before
    in one process (CuPy's import, the other compiler's libraries) changes a compile's
    time, so neither shares a process with anything but its own warm-up round."""
    out: dict = {"kernels": {}, "isolation": "one child process per compiler"}
    for label in ("cujit", "numba_cuda"):
        try:
            _, text = _run(
                [sys.executable, os.path.abspath(__file__), "--child", f"warm_compile:{label}"],
                _env(),
            )
            child = json.loads(text.splitlines()[-1])
        except Exception as exc:
            child = {
                "kernels": {
                    name: {label: f"unavailable: {one_line(str(exc))}"[:160]}
                    for name in WARM_KERNELS
                }
            }
        out.setdefault("method", child.get("method"))
        out[f"toolchain_libraries_{label}"] = child.get("toolchain_libraries")
        kernels = child.get("kernels")
        if not isinstance(kernels, dict):
            kernels = {name: {label: kernels} for name in WARM_KERNELS}
        for name, row in kernels.items():
            merged = out["kernels"].setdefault(name, {})
            if isinstance(row, dict):
                merged.update(row)
            else:
                merged[label] = row
    return _summarise_warm(out)


def bench_warm_compile(which=("cujit", "numba_cuda")) -> dict:  # noqa: C901 -- one block per compiler measured (cujit, numba-cuda, toolchain floor), each optional
    """New kernels in a warm process: per kernel of WARM_KERNELS and per compiler, a new
    function object each round (renamed: nothing cached, no module name seen twice),
    compiled to a loaded module, launched once on device arrays, synchronised; median
    of WARM_ROUNDS after one discarded warm-up round.  Beside it the toolchain floor
    (libNVVM + nvJitLink alone) on the same kernel's LLVM IR, timed after each cujit
    round on that round's IR: the two interleaved, as the machine drifts (a floor timed
    once after all the rounds moved by up to a third between runs)."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    tests = os.path.join(HERE, "..", "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    out: dict = {
        "method": (
            f"per kernel and compiler: {WARM_ROUNDS} rounds after one discarded "
            "warm-up round, each a new renamed function: jit, first launch on device "
            "arrays from the case's setup, synchronize; seconds.  'cujit' and "
            "'numba_cuda' (first_in_process = saxpy's warm-up round, later_median = "
            "its median) and 'toolchain_floor' are saxpy's, under the earlier runs' "
            "keys; 'kernels' holds the whole set (saxpy there is tests/kernels.py's, "
            "10000 elements; runs up to launch-20261130-095003 launched 1<<20)"
        ),
        "kernels": {},
    }
    try:
        from kernels import CASES
    except Exception as exc:
        out["kernels"] = f"unavailable: {type(exc).__name__}: {exc}"[:160]
        for label in ("cujit", "numba_cuda", "toolchain_floor"):
            out[label] = out["kernels"]
        return out
    by_name = {c.name: c for c in CASES}
    compilers = {}
    if "cujit" in which:
        try:
            from cujit import cuda

            compilers["cujit"] = (cuda, lambda f: renamed(f, "cujit"))
        except Exception as exc:
            compilers["cujit"] = f"unavailable: {type(exc).__name__}: {exc}"[:160]
    if "numba_cuda" in which:
        try:
            from compile_bench import numba_function
            from numba import cuda as ncuda

            # compile_bench's rebinding (cuda and the type names mean numba's) of a
            # renamed copy
            compilers["numba_cuda"] = (ncuda, lambda f: numba_function(renamed(f, "numba"), ncuda))
        except Exception as exc:
            compilers["numba_cuda"] = f"unavailable: {type(exc).__name__}: {exc}"[:160]

    for name in WARM_KERNELS:
        row: dict = {}
        try:
            case = by_name[name]
            host_args, grid, block, shmem = case.setup(np.random.default_rng(0))
            pyfunc = case.kernel.py_func
        except Exception as exc:
            out["kernels"][name] = f"unavailable: {type(exc).__name__}: {exc}"[:160]
            continue
        floors: list = []  # the toolchain alone on each cujit round's IR, right after it
        floor_error = "no cujit kernel compiled"
        floor_failed: list = []  # a floor that fails leaves cujit's rounds measured

        def floor_after(kern, floors=floors, failed=floor_failed):
            if failed:
                return
            try:
                spec = next(iter(kern.overloads.values()))
                floors.append(toolchain_floor(spec, kern._options().arch, reps=1))
            except Exception as exc:
                failed.append(f"unavailable: {type(exc).__name__}: {exc}"[:160])

        for label, comp in compilers.items():
            if isinstance(comp, str):
                row[label] = comp
                continue
            mod, make = comp
            try:
                times, kern = _compile_rounds(
                    lambda: make(pyfunc),  # noqa: B023 -- called within this iteration
                    mod,
                    host_args,
                    grid,
                    block,
                    shmem,
                    between=floor_after if label == "cujit" else None,
                )
                row[label] = statistics.median(times[1:])
                row[f"{label}_warmup"] = times[0]
                row[f"{label}_rounds"] = times[1:]
            except Exception as exc:
                row[label] = f"unavailable: {type(exc).__name__}: {exc}"[:160]
                if label == "cujit":  # no cujit round: no IR for a floor
                    floor_error = row[label]
        if "cujit" in which:
            if floor_failed:
                row["toolchain_floor"] = floor_failed[0]
            elif len(floors) > 1:  # the warm-up round's floor is dropped, as its compile is
                row["toolchain_floor"] = statistics.median(floors[1:])
                row["toolchain_floor_rounds"] = floors[1:]
                if isinstance(row.get("cujit"), float):  # each round against its own floor
                    pairs = zip(floors[1:], row["cujit_rounds"], strict=True)
                    row["floor_over_cujit_by_round"] = statistics.median(f / c for f, c in pairs)
            else:
                row["toolchain_floor"] = floor_error
        out["kernels"][name] = row
    out["toolchain_libraries"] = loaded_libraries(("nvvm", "nvjitlink", "nvrtc", "ptx"))
    return _summarise_warm(out)


def _summarise_warm(out: dict) -> dict:
    """Ratios, their geometric mean, and saxpy's row under the earlier runs' keys."""
    for row in out["kernels"].values():
        if (
            isinstance(row, dict)
            and isinstance(row.get("cujit"), float)
            and isinstance(row.get("numba_cuda"), float)
        ):
            row["ratio_numba_over_cujit"] = row["numba_cuda"] / row["cujit"]
    ratios = [
        r["ratio_numba_over_cujit"]
        for r in out["kernels"].values()
        if isinstance(r, dict) and "ratio_numba_over_cujit" in r
    ]
    out["geomean_numba_over_cujit"] = statistics.geometric_mean(ratios) if ratios else None
    out["geomean_over"] = len(ratios)

    # saxpy under the keys of the earlier runs
    sax = out["kernels"].get("saxpy")
    for label in ("cujit", "numba_cuda"):
        if isinstance(sax, dict) and isinstance(sax.get(label), float):
            out[label] = {"first_in_process": sax[f"{label}_warmup"], "later_median": sax[label]}
        else:
            out[label] = sax.get(label) if isinstance(sax, dict) else "unavailable: no saxpy row"
    out["toolchain_floor"] = (
        sax.get("toolchain_floor") if isinstance(sax, dict) else "unavailable: no saxpy row"
    )
    return out


def toolchain_floor(spec, arch, reps: int = 5) -> float:
    """libNVVM (LLVM IR -> PTX) + nvJitLink (PTX -> cubin) alone on a kernel's LLVM IR:
    what any compile of that kernel through them costs, median of ``reps``.  Each round
    renames the kernel: the same module twice can come back faster than a new one."""
    from cujit.ptx import compile_ptx, link_cubin

    llvm, symbol = spec.result.outputs["llvm"], spec.record.symbol
    times = []
    for rep in range(reps):
        module = llvm.replace(f'@"{symbol}"', f'@"{symbol}_floor{RUN_TOKEN}{rep}"')
        assert module != llvm
        start = time.perf_counter()
        link_cubin(compile_ptx(module, arch), arch)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


FRESH_KERNEL = """@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
"""
FRESH_N, FRESH_GRID, FRESH_BLOCK = 1 << 20, 4096, 256  # FRESH's size and launch shape
FRESH = (
    textwrap.dedent("""
import time
t0 = time.perf_counter()
import numpy as np
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack  # for the numba-cuda anchor under NumPy 2.5
from {mod} import cuda
""")
    + FRESH_KERNEL
    + textwrap.dedent("""
x = cuda.to_device(np.ones(1 << 20, np.float32))
o = cuda.device_array_like(x)
saxpy[4096, 256](np.float32(2.0), x, x, o)
cuda.synchronize()
print(time.perf_counter() - t0)
""").lstrip("\n")
)

# The floor of FRESH: the same work through cuda.bindings alone, the cubin compiled
# beforehand by the parent.  The output is checked after the clock stops.  Its parts:
# the driver calls' check, the driver's start with the copy in, and the launch of the
# loaded ``function`` with its result checked (FRESH_JIT_FLOOR shares them).
_FLOOR_OK = """

def ok(result):
    if int(result[0]) != 0:
        raise SystemExit(f"CUDA driver call failed: {result[0]!r}")
    return result[1] if len(result) > 1 else None

"""
_FLOOR_START = """
ok(drv.cuInit(0))
dev = ok(drv.cuDeviceGet(0))
ctx = ok(drv.cuDevicePrimaryCtxRetain(dev))
ok(drv.cuCtxSetCurrent(ctx))
x = np.ones($n, np.float32)
dx = ok(drv.cuMemAlloc(x.nbytes))
do = ok(drv.cuMemAlloc(x.nbytes))
ok(drv.cuMemcpyHtoD(dx, x.ctypes.data, x.nbytes))
"""
_FLOOR_LAUNCH = """buffers = (int(dx), int(do))
values = tuple(buffers[v[1]] if isinstance(v, tuple) else v for v in $values)
types = tuple(getattr(ctypes, name) for name in $ctypes_names)
ok(drv.cuLaunchKernel(function, $grid, 1, 1, $block, 1, 1, 0, drv.CUstream(0),
                      (values, types), 0))
ok(drv.cuCtxSynchronize())
elapsed = time.perf_counter() - t0
out = np.empty_like(x)
ok(drv.cuMemcpyDtoH(out.ctypes.data, do, out.nbytes))
if not (out == np.float32(2.0) * x + x).all():
    raise SystemExit("wrong saxpy result: the parameters do not match the kernel")
print(elapsed)
"""
FRESH_FLOOR = string.Template(
    """
import time
t0 = time.perf_counter()
import ctypes
import numpy as np
from cuda.bindings import driver as drv
"""
    + _FLOOR_OK
    + _FLOOR_START
    + """with open($cubin, "rb") as fh:
    module = ok(drv.cuModuleLoadData(fh.read()))
function = ok(drv.cuModuleGetFunction(module, $symbol))
"""
    + _FLOOR_LAUNCH
)


def _fresh_floor_parts() -> tuple:
    """FRESH's saxpy compiled here with cujit: its specialisation, the parameters a
    launch passes (laid out by ``raw_params``; the child's two device buffers stand in
    as ``("buf", 0)`` for x and ``("buf", 1)`` for the output), and its ctypes."""
    from cujit import cuda
    from cujit.types import typeof

    ns = {"cuda": cuda}
    exec(FRESH_KERNEL, ns)
    kernel = ns["saxpy"]
    hx, hout = np.ones(FRESH_N, np.float32), np.empty(FRESH_N, np.float32)
    args = (np.float32(2.0), hx, hx, hout)
    spec = kernel.compile(tuple(typeof(a) for a in args))
    values, kinds = raw_params(spec, args, pointer=lambda a: ("buf", 0 if a is hx else 1))
    names = tuple(RAW_CTYPES[k].__name__ for k in kinds)
    return spec, tuple(values), names, tuple(kernel._options().arch)


def fresh_floor_script(tmpdir: str) -> str:
    """FRESH_FLOOR for FRESH's saxpy: compiled here with cujit, its cubin written under
    ``tmpdir``."""
    spec, values, ctypes_names, _ = _fresh_floor_parts()
    path = os.path.join(tmpdir, f"{spec.record.symbol}.cubin")
    with open(path, "wb") as fh:
        fh.write(spec.result.cubin)
    return FRESH_FLOOR.substitute(
        n=FRESH_N,
        grid=FRESH_GRID,
        block=FRESH_BLOCK,
        cubin=repr(path),
        symbol=repr(spec.record.symbol.encode()),
        values=repr(values),
        ctypes_names=repr(ctypes_names),
    )


# The floor of a JIT that types a kernel at its first launch, as cujit does: FRESH_FLOOR
# with the saxpy's LLVM IR (cujit's, under a name of the process's own, so that nvJitLink's
# cache has nothing) compiled by libNVVM and nvJitLink at the launch, and beside the
# driver's start a thread that loads both libraries and compiles cujit's warm-up kernel,
# as cujit's warm-up does.  What it leaves out of cujit: the import, the front end, and
# every Python step between.
FRESH_JIT_FLOOR = string.Template(
    """
import time
t0 = time.perf_counter()
import ctypes
import os
import threading
import numpy as np
from cuda.bindings import driver as drv

NVVM_OPTS, LINK_OPTS = $nvvm_opts, $link_opts
"""
    + _FLOOR_OK
    + """
def cubin_of(ir):
    from cuda.bindings import nvjitlink, nvvm
    prog = nvvm.create_program()
    nvvm.add_module_to_program(prog, ir, len(ir), "m")
    nvvm.compile_program(prog, len(NVVM_OPTS), NVVM_OPTS)
    ptx = bytearray(nvvm.get_compiled_result_size(prog))
    nvvm.get_compiled_result(prog, ptx)
    nvvm.destroy_program(prog)
    ptx = bytes(ptx).rstrip(b"\\0")
    handle = nvjitlink.create(len(LINK_OPTS), LINK_OPTS)
    nvjitlink.add_data(handle, nvjitlink.InputType.PTX, ptx, len(ptx), "m.ptx")
    nvjitlink.complete(handle)
    cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
    nvjitlink.get_linked_cubin(handle, cubin)
    nvjitlink.destroy(handle)
    return bytes(cubin)


warm = threading.Thread(target=cubin_of, args=($tiny_ir,))
warm.start()"""
    + _FLOOR_START
    + """warm.join()
symbol = $symbol + os.urandom(4).hex().encode()
with open($ir, "rb") as fh:
    ir = fh.read().replace(b'@"' + $symbol + b'"', b'@"' + symbol + b'"')
module = ok(drv.cuModuleLoadData(cubin_of(ir)))
function = ok(drv.cuModuleGetFunction(module, symbol))
"""
    + _FLOOR_LAUNCH
)


def fresh_jit_floor_script(tmpdir: str) -> str:
    """FRESH_JIT_FLOOR for FRESH's saxpy: its LLVM IR written under ``tmpdir``, the
    warm-up kernel's beside it in the script, and the toolchain's options as cujit's
    compile of FRESH passes them."""
    from cujit import pipeline, warmup
    from cujit.options import Options
    from cujit.ptx.nvvm import DEFAULT_OPTIONS
    from cujit.types import int32

    spec, values, ctypes_names, arch = _fresh_floor_parts()
    path = os.path.join(tmpdir, f"{spec.record.symbol}.ll")
    with open(path, "w") as fh:
        fh.write(spec.result.outputs["llvm"])
    tiny = pipeline.compile_kernel(
        warmup._tiny_kernel, (int32[::1],), Options(arch=arch), stop_after="llvm"
    )
    return FRESH_JIT_FLOOR.substitute(
        nvvm_opts=repr(DEFAULT_OPTIONS.to_args(arch)),
        link_opts=repr([f"-arch=sm_{''.join(str(part) for part in arch)}"]),
        tiny_ir=repr(tiny.outputs["llvm"].encode()),
        n=FRESH_N,
        grid=FRESH_GRID,
        block=FRESH_BLOCK,
        ir=repr(path),
        symbol=repr(spec.record.symbol.encode()),
        values=repr(values),
        ctypes_names=repr(ctypes_names),
    )


def _env(**extra) -> dict:
    """The child processes' environment: cujit from this tree, and bytecode caching on,
    as in an installed package (a PYTHONDONTWRITEBYTECODE=1 machine would time
    compiling cujit's sources in every process)."""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), **extra)
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


# A fresh process's time spreads over ~100 ms on the H200: 5 rounds left the median
# uncertain by about 15 ms.
FRESH_ROUNDS = 11


def set_fresh_rounds(rounds: int) -> None:
    """``--fresh-rounds``: more processes per tool where a host's spread asks for them."""
    global FRESH_ROUNDS
    if rounds < 1:
        raise SystemExit("--fresh-rounds must be at least 1")
    FRESH_ROUNDS = rounds


def bench_fresh_process() -> dict:
    """FRESH per tool, FRESH_ROUNDS processes each, the tools and the floor interleaved
    round by round (the machine drifts); cujit with its warm-up (the default) and
    without.  The floor's cubin is compiled here first, so this process holds a CUDA
    context while every child runs, the same for each: a child's ``cuInit`` takes about
    100 ms less on the H200 while another process has the device open (bench/NOTES.md)."""
    import tempfile

    env = _env()
    runs = [
        ("cujit", "cujit", env),
        ("cujit_no_warmup", "cujit", _env(CUJIT_WARMUP="0")),
        ("numba_cuda", "numba", env),
    ]
    samples: dict = {label: [] for label, _, _ in runs}
    walls: dict = {label: [] for label, _, _ in runs}  # the whole process, seen from here
    with tempfile.TemporaryDirectory() as tmp:
        # The floor: cuInit, primary context, allocation and copy-in, a prebuilt cubin
        # loaded and launched, synchronised; no compiler at all.
        # The JIT floor: the same with the kernel's IR compiled at the launch
        # (FRESH_JIT_FLOOR), the libraries loaded and warmed beside the driver's start.
        floors = {}
        for label, make in (
            ("raw_bindings_floor", fresh_floor_script),
            ("jit_floor", fresh_jit_floor_script),
        ):
            try:
                floors[label] = make(tmp)
                runs.append((label, None, env))
                samples[label], walls[label] = [], []
            except Exception as exc:
                samples[label] = f"unavailable: {type(exc).__name__}: {str(exc)[-200:]}"
        for _ in range(FRESH_ROUNDS):
            for label, mod, run_env in runs:
                if isinstance(samples[label], str):
                    continue
                try:
                    if mod is None:
                        script = floors[label]
                    else:  # a kernel name of its own per process: nothing from a cache
                        script = FRESH.format(mod=mod).replace(
                            "saxpy", f"saxpy_{secrets.token_hex(4)}"
                        )
                    wall, text = _py(script, run_env)
                    samples[label].append(float(text))
                    walls[label].append(wall)
                except Exception as exc:
                    samples[label] = f"unavailable: {exc}"[:160]
    out = {label: v if isinstance(v, str) else statistics.median(v) for label, v in samples.items()}
    # A variant compiling in a thread at the first result is waited for by the exit: the
    # process's wall time (its interpreter's start included) says what that costs.
    for label, v in walls.items():
        if v and not isinstance(samples[label], str) and not label.endswith("_floor"):
            out[f"{label}_process_wall"] = statistics.median(v)
    out["samples"] = samples
    return out


CACHED = textwrap.dedent("""
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
""")


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
                env = _env(
                    CUJIT_CACHE_DIR=os.path.join(tmp, "cujit"),
                    NUMBA_CACHE_DIR=os.path.join(tmp, "numba"),
                )
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
    for label, stmt in (
        ("cujit", "import cujit"),
        ("cujit_cuda", "from cujit import cuda"),
        ("numba_cuda", "from numba import cuda"),
        ("cuda_bindings_driver", "import cuda.bindings.driver"),
    ):
        try:
            out[label] = statistics.median(_py(stmt, env)[0] for _ in range(5)) - base
        except Exception as exc:
            out[label] = f"unavailable: {exc}"[:160]
    return out


def fmt(v, scale, unit):
    return f"{v * scale:9.2f} {unit}" if isinstance(v, float) else f"{'n/a':>12}"


def one_line(v) -> str:
    """A value (an "unavailable: ..." message, often a traceback's tail) on one line."""
    return " ".join(str(v).split())


def ratio(a, b, spec="10.2f", suffix=""):
    """a / b formatted (then ``suffix``), or n/a in as many columns."""
    if isinstance(a, float) and isinstance(b, float) and b:
        return format(a / b, spec) + suffix
    width = int(spec.split(".")[0] or 0)
    return "n/a".rjust(width + len(suffix))


def print_launch(rows) -> None:
    print(
        f"{'host us per launch':28} {'cujit':>12} {'raw':>12} {'numba':>12} {'cupy':>12}"
        f" {'cujit/raw':>10} {'by round':>9}"
    )
    for name, row in rows.items():
        by_round = row.get("cujit_over_raw")
        by_round = f"{by_round:9.2f}" if isinstance(by_round, float) else f"{'n/a':>9}"
        print(
            f"{name:28} {fmt(row['cujit'], 1e6, 'us')} {fmt(row.get('raw_bindings'), 1e6, 'us')}"
            f" {fmt(row.get('numba_cuda'), 1e6, 'us')} {fmt(row.get('cupy_rawkernel'), 1e6, 'us')}"
            f" {ratio(row['cujit'], row.get('raw_bindings'))} {by_round}"
        )
        for key in ("raw_bindings", "numba_cuda", "cupy_rawkernel"):
            if isinstance(row.get(key), str):
                print(f"  {key}: {one_line(row[key])}")


def ms(v, width: int = 9) -> str:
    """Seconds as milliseconds in ``width`` columns, or n/a."""
    return f"{v * 1e3:{width}.2f}" if isinstance(v, float) else f"{'n/a':>{width}}"


def print_warm_compile(wc) -> None:
    print(
        f"\nnew kernel in a warm process: compile + load + first launch + sync, ms "
        f"(median of {WARM_ROUNDS} new functions after a warm-up round)"
    )
    print(
        f"{'kernel':22} {'cujit':>9} {'numba':>9} {'numba/cujit':>12} {'floor':>9}"
        f" {'floor/cujit':>12} {'by round':>9} {'1st cujit':>10} {'1st numba':>10}"
    )
    kernels = wc.get("kernels")
    if isinstance(kernels, str):
        print(f"  {one_line(kernels)}")
        return
    notes = []
    for name, row in kernels.items():
        if isinstance(row, str):
            print(f"{name:22} {one_line(row)}")
            continue
        paired = row.get("floor_over_cujit_by_round")
        by_round = f"{paired:.2f}" if isinstance(paired, float) else "-"
        print(
            f"{name:22} {ms(row.get('cujit'))} {ms(row.get('numba_cuda'))}"
            f" {ratio(row.get('numba_cuda'), row.get('cujit'), '11.2f', 'x')}"
            f" {ms(row.get('toolchain_floor'))}"
            f" {ratio(row.get('toolchain_floor'), row.get('cujit'), '12.2f')}"
            f" {by_round:>9}"
            f" {ms(row.get('cujit_warmup'), 10)} {ms(row.get('numba_cuda_warmup'), 10)}"
        )
        notes += [
            f"  {name} {k}: {one_line(row[k])}"
            for k in ("cujit", "numba_cuda", "toolchain_floor")
            if isinstance(row.get(k), str)
        ]
    geo = wc.get("geomean_numba_over_cujit")
    if isinstance(geo, float):
        print(f"geomean numba/cujit over {wc.get('geomean_over')} kernels: {geo:.2f}x")
    print("floor/cujit: target at least 0.87 (cujit within 1.15x of the toolchain alone)")
    for line in notes:
        print(line)


def print_cache_hit(ch) -> None:
    for label, v in ch.items():
        if isinstance(v, dict):
            print(
                f"cache hit, fresh process, first launch done, {label:10}: "
                f"{v['hit_median'] * 1e3:8.2f} ms (miss {v['miss'] * 1e3:.1f} ms)"
            )
        else:
            print(f"cache hit, {label}: {one_line(v)}")


def print_import(imp) -> None:
    print(
        "import time (minus interpreter start): "
        + ", ".join(f"{k} {fmt(v, 1e3, 'ms')}" for k, v in imp.items())
    )


def print_fresh(fp) -> None:
    print(f"\nfresh process, import -> first saxpy done (median of {FRESH_ROUNDS}):")
    names = {
        "cujit": "cujit",
        "cujit_no_warmup": "cujit, CUJIT_WARMUP=0",
        "numba_cuda": "numba-cuda",
        "raw_bindings_floor": "raw cuda.bindings, prebuilt cubin (floor)",
        "jit_floor": "raw bindings, IR compiled at the launch (JIT floor)",
    }
    samples = fp.get("samples", {})
    for key, v in fp.items():
        if key == "samples":
            continue
        spread = samples.get(key)
        quartiles = ""
        if isinstance(spread, list) and len(spread) >= 2:
            cuts = statistics.quantiles(spread)
            quartiles = "  (quartiles " + " / ".join(f"{1e3 * q:.1f}" for q in cuts) + ")"
        print(
            f"  {names.get(key, key):44} {fmt(v, 1e3, 'ms')}"
            + (f"  {one_line(v)}" if isinstance(v, str) else quartiles)
        )
    numba = fp.get("numba_cuda")
    floor = fp.get("raw_bindings_floor")
    print(
        f"  cujit/floor {ratio(fp.get('cujit'), floor, '.2f', 'x')} (target at most 1.25x);"
        f" JIT floor/floor {ratio(fp.get('jit_floor'), floor, '.2f', 'x')};"
        f" cujit/JIT floor {ratio(fp.get('cujit'), fp.get('jit_floor'), '.2f', 'x')};"
        f" numba/cujit {ratio(numba, fp.get('cujit'), '.2f', 'x')}"
    )


PARTS = {  # name: (measure, print)
    "launch": (bench_launches, print_launch),
    "warm_compile": (bench_warm_compile_isolated, print_warm_compile),
    "fresh_process": (bench_fresh_process, print_fresh),
    "cache_hit": (bench_cache_hit, print_cache_hit),
    "import": (bench_import, print_import),
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated parts to run, of: " + ", ".join(PARTS) + " (default: all)",
    )
    parser.add_argument(
        "--fresh-rounds",
        type=int,
        default=FRESH_ROUNDS,
        help=f"fresh processes per tool in fresh_process (default {FRESH_ROUNDS})",
    )
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)  # warm_compile:<label>
    opts = parser.parse_args(argv)
    set_fresh_rounds(opts.fresh_rounds)
    if opts.child:
        part, label = opts.child.split(":")
        assert part == "warm_compile", opts.child
        print(json.dumps(bench_warm_compile((label,))))
        return
    parts = [p for p in opts.only.split(",") if p] or list(PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown parts {unknown}; parts are {', '.join(PARTS)}")

    results = {
        "date": datetime.now(timezone.utc).isoformat(),
        "fresh_rounds": FRESH_ROUNDS,
        "python": platform.python_version(),
        "machine": platform.node(),
        "parts": parts,
    }
    try:
        results["gpu"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        ).stdout.strip()
    except Exception:
        results["gpu"] = "unknown"
    for part in parts:
        try:
            results[part] = PARTS[part][0]()
        except Exception as exc:  # one part's failure must not lose the others
            results[part] = f"unavailable: {type(exc).__name__}: {exc}"[:300]

    print(f"\n{results['gpu']}  python {results['python']}")
    for part in parts:
        value = results[part]
        try:
            if isinstance(value, str):
                print(f"{part}: {one_line(value)}")
            else:
                PARTS[part][1](value)
        except Exception as exc:
            print(f"{part}: cannot print: {type(exc).__name__}: {exc}")
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
