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


def test_the_host_api_leaves_the_launch_path_for_later():
    """Before the driver starts, ``cuda.to_device`` and its kind load the memory part of
    the runtime only: the launch path, interop, graphs, events and pinned memory load at
    first use (or in the compiler's warm-up, beside the driver's start)."""
    loaded = modules_after(
        "from cujit import cuda\n"
        "cuda.to_device, cuda.device_array_like, cuda.synchronize, cuda.stream"
    )
    later = (
        "cujit.runtime.launch",
        "cujit.runtime.args",
        "cujit.runtime.interop",
        "cujit.runtime.graph",
        "cujit.runtime.event",
        "cujit.runtime.host",
        "cujit.runtime.module",
    )
    assert [m for m in later if m in loaded] == []
    assert "cujit.runtime.memory" in loaded and "cujit.runtime.context" in loaded


def test_the_runtime_names_resolve_from_their_modules():
    """Every name ``cujit.runtime`` lists is its submodule's object (the four named like
    a function are the submodules), found by attribute, by ``from ... import`` and by dir."""
    modules_after("""
import importlib
import cujit.runtime as rt
from cujit.runtime import launch, to_device, Graph
assert launch is importlib.import_module("cujit.runtime.launch")
assert to_device is importlib.import_module("cujit.runtime.memory").to_device
assert Graph is importlib.import_module("cujit.runtime.graph").Graph
for name in ("event", "graph", "launch", "stream", "args", "interop", "host"):
    assert getattr(rt, name) is importlib.import_module(f"cujit.runtime.{name}"), name
for module, names in rt._NAMES.items():
    sub = importlib.import_module(f"cujit.runtime.{module}")
    for name in names.split():
        assert getattr(rt, name) is getattr(sub, name), name
assert set(rt.__all__) == set(rt._WHERE) | set(rt._SUBMODULES)
assert set(rt.__all__) <= set(dir(rt))
try:
    rt.no_such_name
except AttributeError as exc:
    assert str(exc) == "module 'cujit.runtime' has no attribute 'no_such_name'", exc
else:
    raise AssertionError("no AttributeError")
""")


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


# cujit's modules that ``from cujit import cuda`` leaves for later: what few programs
# use (the compiler's entry points, foreign code, pickling, declared signatures' overload
# rules, hints for mistakes, device functions' compile results) and the rarer kinds of
# types, which the first compile imports (the warm-up's ``pipeline.import_stages``).
LAZY = (
    "cujit.abi",
    "cujit.compile_api",
    "cujit.cuda_view",
    "cujit.device_results",
    "cujit.foreign",
    "cujit.hints",
    "cujit.linking",
    "cujit.overloads",
    "cujit.pickling",
    "cujit.types.datetimes",
    "cujit.types.enums",
    "cujit.types.extension",
    "cujit.types.foreign",
    "cujit.types.fp8",
    "cujit.types.numba_names",
    "cujit.types.records",
)


def test_import_and_decorating_leave_the_rarer_modules_unloaded():
    code = """
from cujit import cuda

@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

@cuda.jit(device=True)
def twice(x):
    return 2 * x
"""
    loaded = set(modules_after(code))
    assert sorted(loaded & set(LAZY)) == []


def test_the_lazy_names_still_resolve():
    """What is imported on first use is still there, the same objects, listed by dir."""
    code = """
import sys
from cujit import cuda
from cujit.cuda import declare_device, CUSource
from cujit import compile_api, foreign, linking
assert callable(cuda.compile_ptx) and cuda.compile_ptx is compile_api.compile_ptx
assert cuda.compile is compile_api.compile and cuda.compile_all is compile_api.compile_all
assert declare_device is foreign.declare_device and CUSource is linking.CUSource
assert cuda.LTOIR is linking.LTOIR and cuda.LinkableCode is linking.LinkableCode
names = ("compile", "compile_all", "compile_for_current_device", "compile_ptx",
         "compile_ptx_for_current_device", "declare_device", "LTOIR", "Archive", "Cubin",
         "CUSource", "Fatbin", "LinkableCode", "Object", "PTXSource", "jit", "types")
assert set(names) <= set(dir(cuda)), set(names) - set(dir(cuda))

from cujit import types
from cujit.types import numba_names, fp8, records
assert set(["Record", "CPointer", "Integer", "fp8_e4m3", "ulonglong"]) <= set(dir(types))
assert types.Record is records.Record and types.fp8_e5m2 is fp8.fp8_e5m2
assert cuda.types.CPointer is numba_names.CPointer and types.ALIASES is numba_names.ALIASES
assert cuda.types.ulonglong is cuda.types.uint64 and cuda.types.intc is cuda.types.int32
assert isinstance(cuda.types.int32, cuda.types.Integer)
try:
    cuda.types.no_such_type
except AttributeError as exc:
    assert str(exc) == "module 'cujit.types' has no attribute 'no_such_type'", exc
else:
    raise AssertionError("no AttributeError")
try:
    cuda.no_such_name
except AttributeError as exc:
    assert str(exc) == "cujit.cuda has no attribute 'no_such_name'", exc
else:
    raise AssertionError("no AttributeError")
"""
    modules_after(code)


def test_the_rarer_kinds_type_in_a_fresh_process():
    """typeof and signatures meet records, strings, datetimes, enum members and
    pointers with their modules not yet imported."""
    code = """
import enum
import sys
import numpy as np
from cujit import cuda
from cujit.types import typeof, parse_signature, from_dtype

kinds = ("records", "datetimes", "enums", "numba_names", "foreign", "extension")
assert not [k for k in kinds if "cujit.types." + k in sys.modules]

class Color(enum.IntEnum):
    red = 1

rec = typeof(np.zeros(3, np.dtype([("a", np.int32), ("b", np.float64)])))
from cujit.types.records import Record, CharSeq
assert isinstance(rec.dtype, Record) and from_dtype(rec.dtype) is rec.dtype
assert isinstance(typeof(np.zeros(2, "S4")).dtype, CharSeq)
assert str(typeof(np.datetime64(1, "ns"))) == "datetime64[ns]"
assert str(typeof(Color.red)) == "IntEnumMember(Color, int64)"
sig = parse_signature("void(CPointer(float32), int32)")
assert sig.args[0] == cuda.types.CPointer(cuda.types.float32)
"""
    modules_after(code)


def test_the_lazy_names_through_the_numba_drop_in():
    code = """
import cujit
cujit.install_numba_drop_in()
from numba import cuda
from numba.cuda import compile_ptx, declare_device, CUSource
import cujit.cuda
from cujit import compile_api, foreign, linking
assert cuda is cujit.cuda and compile_ptx is compile_api.compile_ptx
assert declare_device is foreign.declare_device and CUSource is linking.CUSource
assert isinstance(cuda.types.float32, cuda.types.Float) and "Float" in dir(cuda.types)
"""
    modules_after(code)
