"""``import cujit`` and ``from cujit import cuda`` stay light: nothing heavy loads
until a kernel is compiled or launched (issue 6; the measured time is in bench/)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# Modules that cost tens of milliseconds each, or load native CUDA libraries.
HEAVY = ("numpy", "llvmlite", "cuda.bindings", "cuda.pathfinder", "cuda.core", "numba")
# cujit's own modules that pull those in: the compiler's stages and the runtime.
LATE = (
    "cujit.pipeline",
    "cujit.bytecode",
    "cujit.infer",
    "cujit.codegen",
    "cujit.ptx",
    "cujit.runtime",
    "cujit.cache",
    "cujit.targets",
)


def modules_after(code: str) -> list[str]:
    """The modules loaded in a fresh interpreter after running ``code``."""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def heavy_in(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY + LATE)]


def test_import_cujit_and_cuda_loads_nothing_heavy():
    assert heavy_in(modules_after("import cujit\nfrom cujit import cuda")) == []


def test_decorating_a_kernel_loads_nothing_heavy():
    code = """
from cujit import cuda, float32

@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

@cuda.jit(cache=True)
def cached(x):
    x[0] = 1

sig = float32(float32, float32[:])  # numba's type objects work without numpy too
"""
    assert heavy_in(modules_after(code)) == []


def test_types_still_reach_numpy_when_asked():
    code = (
        "from cujit import float32, int64\nassert float32.dtype.itemsize == 4\n"
        "assert repr(int64(7)) == 'np.int64(7)'"
    )
    assert "numpy" in modules_after(code)


def test_the_host_api_looks_up_without_the_compiler_or_vector_types():
    """``cuda.to_device`` and its kind run before the driver starts, in a fresh process's
    critical path: looking them up imports their runtime module and no compiler."""
    loaded = modules_after(
        "from cujit import cuda\n"
        "cuda.to_device, cuda.device_array_like, cuda.synchronize, cuda.stream"
    )
    assert "cujit.runtime.memory" in loaded
    compiler = [m for m in loaded if m.startswith(LATE[:5]) or m == "cujit.vector_types"]
    assert compiler == []
    assert "cujit.vector_types" in modules_after("from cujit import cuda\ncuda.float4")


def test_a_compile_without_vector_types_does_not_make_them():
    """The forty vector classes are made when a program names one (``cuda.float4``),
    not by the compiler's stages: a saxpy compile leaves them unmade."""
    code = """
from cujit import cuda, float32, pipeline
from cujit.options import Options

def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

pipeline.import_stages()
pipeline.compile_kernel(saxpy, (float32, float32[::1], float32[::1], float32[::1]),
                        Options(arch=(9, 0)), stop_after="llvm")
"""
    assert "cujit.vector_types" not in modules_after(code)
