"""Debug info of float16 parameters (``jit(debug=True)``): libNVVM of CUDA 13.0 dies with
SIGSEGV on an ``llvm.dbg.declare`` of a parameter's ``half`` slot (as on one of an ``i1``
slot), so cujit describes such a parameter by its value (``llvm.dbg.value``).

The compile runs in a child process: a libNVVM that crashes takes the interpreter with
it, and the test must report that as a failure, not die."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import Array, float16, int32

SRC = Path(__file__).resolve().parents[1] / "src"

# A float16 kernel with shared and local arrays, built with debug info at -O0.
KERNEL = """
import numpy as np
from cujit import cuda

@cuda.jit(debug=True, opt=False)
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
"""


def half_param(x, out):
    y = x * x
    out[0] = y


def test_a_half_parameter_is_described_by_its_value():
    llvm = compile_kernel(
        half_param, (float16, Array(float16, 1, "C")), Options(debug=True), stop_after="llvm"
    ).outputs["llvm"]
    assert 'dbg.declare"(metadata half*' not in llvm
    var = re.search(r'^!(\d+) = !DILocalVariable\(arg: 1, [^\n]*name: "x"', llvm, re.M)
    assert var, "x keeps its DILocalVariable as argument 1"
    assert re.search(rf'dbg\.value"\(metadata half %"?[\w.]+"?, metadata !{var.group(1)}\b', llvm)
    # The body still reads x from its slot (a debugger sees later changes of it).
    assert re.search(r'= load half, half\* %"x\.1"', llvm)


def test_other_scalar_parameters_keep_their_declared_slots():
    llvm = compile_kernel(
        half_param, (int32, Array(int32, 1, "C")), Options(debug=True), stop_after="llvm"
    ).outputs["llvm"]
    assert re.search(r'dbg\.declare"\(metadata i32\* %"x\.1"', llvm)


def test_float16_shared_memory_kernel_compiles_in_a_child_process():
    script = KERNEL + textwrap.dedent(
        """
        from cujit.cuda import types
        ptx, _ = cuda.compile_ptx(shared_half.py_func, (types.float16,), debug=True, opt=False)
        assert ".section .debug_info" in ptx or ".section\\t.debug_info" in ptx, ptx[:400]
        llvm = shared_half.inspect_llvm((types.float16,))
        # Shared memory's pointers are generic (addrspacecast): no DWARF address class.
        assert "dwarfAddressSpace" not in llvm
        print("compiled", len(ptx))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
    )
    assert proc.returncode == 0, (
        f"exit status {proc.returncode} (negative: killed by a signal)\n{proc.stderr[-3000:]}"
    )
    assert "compiled" in proc.stdout
