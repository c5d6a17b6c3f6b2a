"""numba.cuda's library-facing modules served by cujit: ``np.numpy_support``
(``as_dtype``/``from_dtype``/``carray``/``farray``), ``compiler``'s compile functions,
and numba's datetime type objects in signatures."""

from __future__ import annotations

import ctypes
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from cujit import types
from cujit.cuda import compiler
from cujit.cuda.np import numpy_support as nps

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
HAS_NUMBA = importlib.util.find_spec("numba") is not None


@pytest.mark.parametrize(
    "dtype",
    [
        "int8",
        "uint16",
        "int32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "bool",
        "datetime64[D]",
        "timedelta64[ns]",
        "S7",
        "U3",
    ],
)
def test_as_dtype_inverts_from_dtype(dtype):
    dt = np.dtype(dtype)
    assert nps.as_dtype(nps.from_dtype(dt)) == dt


def test_record_round_trip():
    dt = np.dtype([("a", np.int32), ("b", np.float64), ("c", np.int16, (2, 3))], align=True)
    rec = nps.from_dtype(dt)
    assert isinstance(rec, types.Record)
    assert nps.as_dtype(rec) == dt
    assert nps.as_dtype(types.NestedArray(types.float32, (4,))) == np.dtype((np.float32, (4,)))


def test_as_dtype_refuses_what_has_no_dtype():
    with pytest.raises(NotImplementedError, match="cannot be represented"):
        nps.as_dtype(types.float32[:])
    with pytest.raises(NotImplementedError):
        nps.as_dtype(types.Tuple((types.int32, types.int32)))


@pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")
def test_as_dtype_of_numba_type_objects():
    import numba

    assert nps.as_dtype(numba.complex128) == np.dtype(np.complex128)
    assert nps.as_dtype(numba.types.NPDatetime("s")) == np.dtype("datetime64[s]")


@pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")
def test_numba_datetime_types_in_signatures():
    from numba.np.numpy_support import from_dtype

    d = from_dtype(np.dtype("datetime64[D]"))
    m = from_dtype(np.dtype("timedelta64[ms]"))
    sig = types.parse_signature((d, m[:]))
    assert sig.args[0] == nps.from_dtype(np.dtype("datetime64[D]"))
    assert sig.args[1] == types.Array(nps.from_dtype(np.dtype("timedelta64[ms]")), 1, "A")


def test_carray_and_farray_view_memory_behind_a_pointer():
    data = np.arange(6, dtype=np.float32) * 1.5 - 2.0
    ptr = data.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    c = nps.carray(ptr, (2, 3))
    np.testing.assert_array_equal(c, data.reshape(2, 3))
    f = nps.farray(ptr, (3, 2))
    np.testing.assert_array_equal(f, data.reshape(2, 3).T)
    c[1, 2] = 99.0  # a view, not a copy
    assert data[5] == 99.0
    by_address = nps.carray(data.ctypes.data, 6, dtype=np.float32)
    np.testing.assert_array_equal(by_address, data)
    with pytest.raises(TypeError, match="explicit dtype"):
        nps.carray(ctypes.c_void_p(data.ctypes.data), 6)
    with pytest.raises(TypeError, match="mismatching dtype"):
        nps.carray(ptr, 6, dtype=np.int32)


def test_compiler_module_compiles_ptx():
    def add(x, y):
        return x + y

    ptx, ret = compiler.compile_ptx(add, (types.uint32, types.float64), device=True)
    assert ret == types.float64
    assert ".visible .func" in ptx and "add.f64" in ptx


def test_drop_in_resolves_the_modules_to_cujit():
    code = (
        "import cujit; cujit.install_numba_drop_in()\n"
        "from numba.cuda.np.numpy_support import as_dtype\n"
        "from numba.cuda.np import numpy_support\n"
        "from numba.cuda.compiler import compile_ptx\n"
        "from numba.cuda.extending import typeof_impl, core_models\n"
        "from numba.cuda.cudaimpl import lower\n"
        "from numba.cuda import cgutils\n"
        "import cujit.cuda.np.numpy_support as own, cujit.extending as ext\n"
        "assert as_dtype is own.as_dtype and numpy_support is own\n"
        "assert typeof_impl is ext.typeof_impl and lower is ext.lower_builtin\n"
        "assert core_models.StructModel is ext.models.StructModel\n"
        "print(cgutils.create_struct_proxy.__module__, compile_ptx.__module__)\n"
    )
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cujit.codegen.struct_proxy", "cujit.compile_api"]
