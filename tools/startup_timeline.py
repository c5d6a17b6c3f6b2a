"""Where a fresh process's time goes, from ``import`` to the first finished saxpy (the
start-up of bench/launch_bench.py's ``fresh_process``), step by step, beside the same
steps through raw cuda.bindings with a prebuilt cubin (its floor).

    PYTHONPATH=src python3 tools/startup_timeline.py [-n 7] [--hold] [--warmup-marks]
        [--jit-floor] [--json out.json]

Per configuration (cujit as shipped, ``CUJIT_VARIANTS_LAZY=0``, ``CUJIT_WARMUP=0``,
and the floor), N fresh processes run, the configurations taking turns; each prints the
time since its start at every step, and this prints each step's median gap from the
step before.  This process never starts CUDA itself (the floor's cubin is compiled in a
child): on the H200 a process's ``cuInit`` is about 100 ms faster while another process
has the device open, which ``--hold`` arranges for every configuration alike.
``exit`` is the whole process's wall time seen from here (a variant still compiling in
a thread is waited for by the interpreter's exit).  ``--warmup-marks`` adds a
configuration that also marks, from inside the child, when the warm-up thread starts
and ends each of its steps (importing the stages, loading libNVVM and nvJitLink, the
tiny kernel's compile) and the main thread's compile of the saxpy.  ``--jit-floor``
adds launch_bench's JIT floor: the same raw process compiling cujit's LLVM IR for the
saxpy with libNVVM and nvJitLink at the launch, its steps marked.  Needs a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")

CUJIT = r"""
import os, sys, time
t0 = time.perf_counter()
marks = []
def mark(name):
    marks.append((name, time.perf_counter() - t0))
import numpy as np
mark("import numpy")
from cujit import cuda
mark("import cujit")
name = "saxpy_" + os.urandom(4).hex()
src = f'''
@cuda.jit
def {name}(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
'''
ns = {"cuda": cuda}
exec(compile(src, "<saxpy>", "exec"), ns)
saxpy = ns[name]
mark("define kernel")
x = cuda.to_device(np.ones(1 << 20, np.float32))
mark("to_device (driver start)")
o = cuda.device_array_like(x)
mark("device_array_like")
saxpy[4096, 256](np.float32(2.0), x, x, o)
mark("first launch (compile)")
cuda.synchronize()
mark("synchronize")
assert (o.copy_to_host() == 3.0).all()
print(repr(marks))
"""


# --warmup-marks: the warm-up thread's own steps, marked from inside the child.  Importing
# the pipeline and the library loader to wrap them moves a few milliseconds of import onto
# the main thread, so this runs as a configuration of its own beside the unmarked ones.
WARMUP_MARKS = r"""
import threading
import cujit.pipeline as _pipeline
import cujit.ptx.libs as _libs
wmarks, mmarks = [], []
def _in_warmup():
    return threading.current_thread().name.startswith("cujit-warmup")  # and its loader
def _in_main():
    return threading.current_thread() is threading.main_thread()
def _marked(mod, attr, label, marks=wmarks, here=_in_warmup):
    inner = getattr(mod, attr)
    def call(*args, **kwargs):  # each label once: its thread's first call
        mine = here() and label not in dict(marks)
        if mine:
            marks.append((label, time.perf_counter() - t0))
        try:
            return inner(*args, **kwargs)
        finally:
            if mine:
                marks.append((label + ": done", time.perf_counter() - t0))
    setattr(mod, attr, call)
_marked(_pipeline, "import_stages", "import the stages")
_marked(_libs, "nvvm_module", "load libNVVM")
_marked(_libs, "nvjitlink_module", "load nvJitLink")
_marked(_pipeline, "compile_kernel", "compile the tiny kernel")
_marked(_pipeline, "compile_kernel", "main thread: compile saxpy", mmarks, _in_main)
import cujit.startup as _startup
_marked(_startup, "run_before_init", "main thread: cuInit next", mmarks, _in_main)
_marked(_startup, "run_arch_known", "main thread: device known, the context next", mmarks, _in_main)
"""
WARMUP_LABEL = "cujit, warm-up thread marked"


def cujit_marked() -> str:
    """CUJIT with WARMUP_MARKS: its last line prints (the main script's marks, the
    warm-up thread's marks followed by those of the main thread's first compile)."""
    at = CUJIT.index('mark("import cujit")\n') + len('mark("import cujit")\n')
    code = CUJIT[:at] + WARMUP_MARKS + CUJIT[at:]
    return code.replace("print(repr(marks))", "print(repr((marks, wmarks + mmarks)))")


def floor_script(tmp: str) -> str:
    """FLOOR for cujit's saxpy, its cubin compiled here and its parameters laid out as
    bench/launch_bench.py lays them out."""
    sys.path.insert(0, os.path.join(HERE, "..", "bench"))
    import launch_bench

    return launch_bench.fresh_floor_script(tmp)


# --hold: a process that keeps the device open (a CUDA context) while the others run
HOLDER = """
import sys
from cuda.bindings import driver as d
d.cuInit(0)
ctx = d.cuDevicePrimaryCtxRetain(d.cuDeviceGet(0)[1])[1]
d.cuCtxSetCurrent(ctx)
print("ready", flush=True)
sys.stdin.read()
"""


def run(code: str, env: dict) -> tuple[list, float]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-600:])
    marks = eval(proc.stdout.strip().splitlines()[-1])  # noqa: S307 -- our own child's repr
    return marks, wall  # marks: a list, or with --warmup-marks (main, warm-up thread)


def summarise(samples: list) -> dict:
    if isinstance(samples[0][0], tuple):  # --warmup-marks: the main thread's, the thread's
        out = summarise([(main, wall) for (main, _), wall in samples])
        thread: dict = {}
        for (_, wmarks), _ in samples:
            for name, at in wmarks:
                thread.setdefault(name, []).append(at)
        out["warmup_thread_at_ms"] = {
            name: 1e3 * statistics.median(at)
            for name, at in thread.items()
            if len(at) == len(samples)
        }
        return out
    names = [name for name, _ in samples[0][0]]
    steps = {}
    for k, name in enumerate(names):
        at = [marks[k][1] for marks, _ in samples]
        gaps = [marks[k][1] - (marks[k - 1][1] if k else 0.0) for marks, _ in samples]
        steps[name] = {
            "gap_ms": 1e3 * statistics.median(gaps),
            "at_ms": 1e3 * statistics.median(at),
        }
    return {"steps": steps, "exit_ms": 1e3 * statistics.median(w for _, w in samples)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument(
        "--hold",
        action="store_true",
        help="keep a process with a CUDA context alive while the processes run",
    )
    ap.add_argument(
        "--jit-floor",
        action="store_true",
        help="add launch_bench's JIT floor (the saxpy's LLVM IR compiled at the launch)",
    )
    ap.add_argument(
        "--warmup-marks",
        action="store_true",
        help="add a configuration that also marks the warm-up thread's steps",
    )
    opts = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    run(CUJIT, env)  # writes any missing bytecode
    configs = {
        "cujit": dict(env),
        "cujit, CUJIT_VARIANTS_LAZY=0": dict(env, CUJIT_VARIANTS_LAZY="0"),
        "cujit, CUJIT_WARMUP=0": dict(env, CUJIT_WARMUP="0"),
    }
    floor_label = "floor (raw bindings, prebuilt cubin)"
    holder = None
    with tempfile.TemporaryDirectory() as tmp:
        codes = {label: CUJIT for label in configs}
        if opts.warmup_marks:
            codes[WARMUP_LABEL] = cujit_marked()
            configs[WARMUP_LABEL] = dict(env)
        codes[floor_label] = _timed_floor(floor_script_from_child(tmp, env))
        configs[floor_label] = env
        if opts.jit_floor:
            jit_label = "JIT floor (raw bindings, the LLVM IR compiled at the launch)"
            script = floor_script_from_child(tmp, env, "jit_floor_script")
            codes[jit_label] = _timed_floor(script, JIT_FLOOR_MARKS)
            configs[jit_label] = env
        if opts.hold:
            holder = subprocess.Popen(
                [sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            holder.stdout.readline()
        try:
            samples: dict = {label: [] for label in configs}
            for _ in range(opts.n):  # the configurations interleaved: the machine drifts
                for label, run_env in configs.items():
                    samples[label].append(run(codes[label], run_env))
        finally:
            if holder is not None:
                holder.communicate(b"", timeout=60)
    out = {label: summarise(v) for label, v in samples.items()}
    out["held"] = bool(opts.hold)
    print_rows(out)
    if opts.json:
        # and each process's own marks, for looking at one run's steps together
        out["samples"] = samples
        with open(opts.json, "w") as fh:
            json.dump(out, fh, indent=1)


def print_rows(out: dict) -> None:
    for label, row in out.items():
        if label == "held":
            continue
        print(f"\n{label}: exit {row['exit_ms']:.1f} ms")
        for name, step in row["steps"].items():
            print(f"  {name:28} +{step['gap_ms']:7.1f} ms   at {step['at_ms']:7.1f} ms")
        for name, at in row.get("warmup_thread_at_ms", {}).items():
            print(f"    marked: {name:42} at {at:7.1f} ms")


def jit_floor_script(tmp: str) -> str:
    """launch_bench's JIT floor for cujit's saxpy (its LLVM IR compiled by libNVVM and
    nvJitLink at the launch), with the compile and the load marked apart."""
    sys.path.insert(0, os.path.join(HERE, "..", "bench"))
    import launch_bench

    script = launch_bench.fresh_jit_floor_script(tmp)
    one = "module = ok(drv.cuModuleLoadData(cubin_of(ir)))\n"
    split = "cubin = cubin_of(ir)\nmodule = ok(drv.cuModuleLoadData(cubin))\n"
    if one not in script:
        raise RuntimeError("launch_bench's JIT floor changed: mark its steps here again")
    return script.replace(one, split)


def floor_script_from_child(tmp: str, env: dict, make: str = "floor_script") -> str:
    """``make`` (``floor_script`` or ``jit_floor_script``) run in a child process: the
    compile reads the device's architecture, and a CUDA context left in this process
    would make every later child's ``cuInit`` faster than a lone process's."""
    code = f"import sys; sys.path.insert(0, {HERE!r}); import startup_timeline as t; "
    code += f"sys.stdout.write(t.{make}({tmp!r}))"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-600:])
    return proc.stdout


JIT_FLOOR_MARKS = {
    "import numpy as np\n": "import numpy",
    "from cuda.bindings import driver as drv\n": "import cuda.bindings",
    "ok(drv.cuInit(0))\n": "cuInit",
    "ok(drv.cuCtxSetCurrent(ctx))\n": "primary context",
    "ok(drv.cuMemcpyHtoD(dx, x.ctypes.data, x.nbytes))\n": "alloc + copy in",
    "warm.join()": "wait for the warm-up thread",
    "cubin = cubin_of(ir)\n": "compile (libNVVM + nvJitLink)",
    "function = ok(drv.cuModuleGetFunction(module, ": "load cubin",
    "ok(drv.cuCtxSynchronize())\n": "synchronize",
}


def _timed_floor(script: str, marks: dict | None = None) -> str:
    """launch_bench's floor script with a mark after each step (``marks``: the text
    that ends a step, and the step's name)."""
    marks = marks or {
        "import numpy as np\n": "import numpy",
        "from cuda.bindings import driver as drv\n": "import cuda.bindings",
        "ok(drv.cuInit(0))\n": "cuInit",
        "ok(drv.cuCtxSetCurrent(ctx))\n": "primary context",
        "ok(drv.cuMemcpyHtoD(dx, x.ctypes.data, x.nbytes))\n": "alloc + copy in",
        "function = ok(drv.cuModuleGetFunction(module, ": "load cubin",
        "ok(drv.cuCtxSynchronize())\n": "synchronize",
    }
    head = "marks = []\ndef mark(name):\n    marks.append((name, time.perf_counter() - t0))\n"
    script = script.replace("t0 = time.perf_counter()\n", "t0 = time.perf_counter()\n" + head, 1)
    for text, name in marks.items():
        at = script.index(text)
        end = script.index("\n", at) + 1
        script = script[:end] + f"mark({name!r})\n" + script[end:]
    return script.replace("print(elapsed)", "print(repr(marks))")


if __name__ == "__main__":
    main()
