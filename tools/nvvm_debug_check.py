"""Does a libNVVM accept cujit's debug info?  Compiles kernels with ``debug=True`` (and
``lineinfo=True``) to PTX, each in its own child process, so that a libNVVM that crashes
on the debug metadata (CUDA 13.0's died with SIGSEGV on an ``llvm.dbg.declare`` of a
bool or float16 parameter's slot) is reported as that kernel's failure.

    python tools/nvvm_debug_check.py                       the libNVVM cujit finds
    python tools/nvvm_debug_check.py --libnvvm PATH/libnvvm.so.4 [-k float16]

Kernels: one per scalar parameter type (the parameter copied through two locals), a
float16 kernel with shared and local arrays, and every kernel of tests/kernels.py,
tests/kernels_device.py and tests/kernels_types.py.  No GPU is needed.  Exit status 0
when every compile succeeded.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCALARS = (
    "boolean int8 int16 int32 int64 uint8 uint16 uint32 uint64 "
    "float16 bfloat16 float32 float64 complex64 complex128"
).split()

_PRELOAD = """
import ctypes, os, sys
if sys.argv[1]:
    ctypes.CDLL(sys.argv[1], mode=os.RTLD_GLOBAL)  # found by name before any other
"""
_SCALAR = """
from cujit import cuda
from cujit.cuda import types
T = getattr(types, sys.argv[2])
def copy(x, out):
    y = x
    z = y
    out[0] = z
for level in ("debug", "lineinfo"):
    cuda.compile_ptx(copy, (T, T[:]), opt=False, **{level: True})
"""
_SHARED_HALF = """
import numpy as np
from cujit import cuda
from cujit.cuda import types
def shared_half(data):
    shared_arr = cuda.shared.array(32, dtype=np.float16)
    local_arr = cuda.local.array(32, dtype=np.float16)
    idx = cuda.grid(1)
    if idx < 32:
        shared_arr[idx] = data + idx
        local_arr[idx] = data * 2 + idx
    cuda.syncthreads()
    if idx == 0:
        result = np.float16(0)
        for i in range(32):
            result += shared_arr[i] + local_arr[i]
cuda.compile_ptx(shared_half, (types.float16,), debug=True, opt=False)
"""
_CASE = """
sys.path.insert(0, sys.argv[3])
import importlib
import numpy as np
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import typeof
module, name = sys.argv[2].split(":")
cases = {c.name: c for c in getattr(importlib.import_module(module), sys.argv[4])}
case = cases[name]
args, *_ = case.setup(np.random.default_rng(0))
for level in ("debug", "lineinfo"):
    compile_kernel(case.kernel.py_func, tuple(typeof(a) for a in args),
                   Options(**{level: True}), stop_after="ptx")
"""
_MODULES = (
    ("kernels", "CASES"),
    ("kernels_device", "DEVICE_CASES"),
    ("kernels_types", "TYPE_CASES"),
)


def _jobs() -> list[tuple[str, str, list[str]]]:
    """(label, program, its arguments after the libNVVM path)."""
    jobs = [(f"scalar parameter {t}", _SCALAR, [t]) for t in SCALARS]
    jobs.append(("float16 shared-memory kernel", _SHARED_HALF, []))
    sys.path.insert(0, str(ROOT / "tests"))
    import importlib

    for module, attr in _MODULES:
        for case in getattr(importlib.import_module(module), attr):
            ref = f"{module}:{case.name}"
            jobs.append((ref, _CASE, [ref, str(ROOT / "tests"), attr]))
    return jobs


def _run(program: str, libnvvm: str, args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), CUJIT_CACHE="0")
    env.pop("CUJIT_TARGET", None)
    return subprocess.run(
        [sys.executable, "-c", _PRELOAD + program, libnvvm, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libnvvm", default="", help="load this libnvvm.so first")
    parser.add_argument("-k", default="", help="only the kernels whose label has this")
    ns = parser.parse_args()
    failed = 0
    for label, program, args in _jobs():
        if ns.k not in label:
            continue
        proc = _run(program, ns.libnvvm, args)
        if proc.returncode == 0:
            print(f"ok      {label}")
            continue
        failed += 1
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        last = (proc.stderr.strip().splitlines() or [""])[-1][:200]
        print(f"FAILED  {label} ({how}) {last}")
    print(f"{failed} failed" if failed else "all compiled")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
