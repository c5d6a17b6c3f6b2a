"""Device functions' numba inspection (``cujit.device_inspection``): ``compile_device``,
``inspect_llvm``, ``inspect_asm``, and what is refused (``inspect_sass``, a launch)."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, float32, int32
from cujit.diagnostics import LaunchError


@cuda.jit(device=True)
def scaled_sum(x, y):
    return x * 3 + y


def test_compile_device_names_the_symbol_its_code_defines():
    c = scaled_sum.compile_device((int32, int32))
    sym = c.fndesc.mangled_name
    assert "scaled_sum" in sym
    # int32 * 3 + int32 is an int64 (numba's integer rules): a visible i64 function
    assert f'define i64 @"{sym}"(i32 %"x", i32 %"y")' in scaled_sum.inspect_llvm((int32, int32))
    assert f".visible .func  (.param .b64 func_retval0) {sym}(" in scaled_sum.inspect_asm(
        (int32, int32)
    )


def test_return_type_is_inferred_per_signature():
    assert str(scaled_sum.compile_device((int32, int32)).return_type) == "int64"
    assert str(scaled_sum.compile_device((float32, float32)).return_type).startswith("float")


def test_declared_return_type_is_kept():
    c = scaled_sum.compile_device((float32, float32), return_type=float32)
    assert str(c.signature) == "float32(float32, float32)"


def test_each_signature_compiles_once():
    a = scaled_sum.compile_device((int32, int32))
    assert scaled_sum.compile_device((int32, int32)) is a
    assert scaled_sum.compile_device((float32, float32)) is not a


def test_sass_of_a_device_function_is_refused():
    with pytest.raises(RuntimeError, match="Cannot inspect SASS of a device function"):
        scaled_sum.inspect_sass((int32, int32))


def test_launching_a_device_function_is_refused_as_numba_does():
    with pytest.raises(RuntimeError, match="Cannot compile a device function as a kernel") as e:
        scaled_sum[1, 1]()
    assert isinstance(e.value, LaunchError)


def test_the_function_still_runs_from_kernels():
    @cuda.jit(target="cpu")
    def k(out, a, b):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = scaled_sum(a[i], b[i])

    a = np.arange(1, 9, dtype=np.float32)
    b = np.linspace(-2, 2, 8).astype(np.float32)
    out = np.full(8, np.nan, dtype=np.float32)
    k[1, 8](out, a, b)
    np.testing.assert_allclose(out, a * 3 + b, rtol=1e-6)
