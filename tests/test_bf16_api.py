"""bfloat16 as numba.cuda spells it: ``cuda.bf16``'s names, ``is_bfloat16_supported``,
ml_dtypes' bfloat16 arrays and scalar type in kernels, and the numba drop-in's modules."""

from __future__ import annotations

import ast
import importlib.util
import pathlib

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import bf16

ml_dtypes = pytest.importorskip("ml_dtypes")


def _numba_names(module: str, variable: str) -> list[str] | None:
    """A list assigned in numba-cuda's source, read without importing numba-cuda."""
    spec = importlib.util.find_spec("numba_cuda")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = pathlib.Path(spec.submodule_search_locations[0], "numba", "cuda", module)
    if not path.exists():
        return None
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == variable:
            return [ast.literal_eval(e) for e in node.value.elts]
    return None


def test_bf16_has_numba_cudas_names():
    names = _numba_names("bf16.py", "__all__")
    if names is None:
        pytest.skip("numba-cuda's source is not installed")
    wanted = set(names) - {"typing_registry", "target_registry"}  # numba's own registries
    assert wanted <= set(dir(bf16)), sorted(wanted - set(dir(bf16)))
    assert bf16.bfloat16 is cuda.bfloat16 is bf16.nv_bfloat16


def test_cuda_spellings_are_the_same_objects():
    from cujit.cuda._internal import cuda_bf16

    assert cuda_bf16.__hadd is bf16.hadd
    assert cuda_bf16.__float2bfloat16_rz is bf16.float32_to_bfloat16_rz
    assert cuda_bf16.__bfloat162ull_ru is bf16.bfloat16_to_uint64_ru
    assert cuda_bf16.__ushort_as_bfloat16 is bf16.uint16_as_bfloat16
    assert cuda_bf16.htanh_approx is bf16.htanh_approx
    assert cuda_bf16.nv_bfloat16 is cuda.bfloat16


def test_placeholders_refuse_host_calls():
    with pytest.raises(RuntimeError, match="inside a @cuda.jit kernel"):
        bf16.hadd(1.0, 2.0)


def test_is_bfloat16_supported_on_the_cpu_target(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    assert cuda.is_bfloat16_supported() is True


@pytest.mark.gpu
def test_is_bfloat16_supported_follows_the_compute_capability(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cuda")
    cc = cuda.gpus[0].compute_capability
    assert cuda.is_bfloat16_supported() is (tuple(cc) >= (8, 0))


def kernel(arr_in, arr_in2, arr_out):
    i = cuda.grid(1)
    if i < arr_in.size:
        arr_out[i] = 2 * arr_in[i] + 4 * arr_in2[i] + ml_dtypes.bfloat16(3.0)


HALF = ml_dtypes.bfloat16(0.5)  # a global bfloat16 scalar is a constant of the kernel


def scale(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * HALF + x[i]


TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("target", TARGETS)
def test_ml_dtypes_arrays_and_scalar_type(target):
    jit = cuda.jit(target="cpu") if target == "cpu" else cuda.jit
    x = np.asarray([1, 2, 3, 4, 5.5], dtype=ml_dtypes.bfloat16)
    y = np.arange(5, dtype=np.int64)
    out = np.full(5, np.nan, dtype=ml_dtypes.bfloat16)
    jit(kernel)[1, 32](x, y, out)
    want = 2 * x.astype(np.float64) + 4 * y + 3  # small integers: exact in bfloat16
    np.testing.assert_array_equal(out.astype(np.float64), want)

    v = np.asarray(np.linspace(-3, 3, 37), dtype=ml_dtypes.bfloat16)
    res = np.full(v.size, np.nan, dtype=ml_dtypes.bfloat16)
    jit(scale)[1, 64](res, v)
    # each op rounds to bfloat16: ml_dtypes does the same (float32, then nearest-even)
    half = v * HALF
    np.testing.assert_array_equal(res.view(np.uint16), (half + v).view(np.uint16))


def test_typeof_of_bfloat16_values():
    from cujit.types import Array, bfloat16, typeof

    a = np.zeros((3, 4), dtype=ml_dtypes.bfloat16)
    assert typeof(a) == Array(bfloat16, 2, "C")
    assert typeof(ml_dtypes.bfloat16(1.5)) == bfloat16
    assert bfloat16.dtype == np.dtype(ml_dtypes.bfloat16)


def test_drop_in_resolves_the_bf16_modules():
    from cujit import numba_drop_in

    assert numba_drop_in.cuda_module("numba.cuda.bf16") is bf16
    internal = numba_drop_in.cuda_module("numba.cuda._internal.cuda_bf16")
    assert internal is not None and internal.nv_bfloat16 is cuda.bfloat16
    assert numba_drop_in.cuda_module("numba.cuda._internal.no_such_module") is None
    api = numba_drop_in.cuda_module("numba.cuda.api")
    assert api.is_bfloat16_supported is cuda.is_bfloat16_supported
    assert api.to_device is cuda.to_device  # the rest of the host API


def widen(out, s, t):
    out[0] = cuda.float32(s)
    out[1] = cuda.float32(s + t)


@pytest.mark.parametrize("target", TARGETS)
def test_bfloat16_scalar_arguments(target):
    jit = cuda.jit(target="cpu") if target == "cpu" else cuda.jit
    out = np.full(2, np.nan, np.float32)
    k = jit(widen)
    k[1, 1](out, ml_dtypes.bfloat16(1.5), ml_dtypes.bfloat16(-0.3125))
    np.testing.assert_array_equal(out, [1.5, 1.1875])
    k[1, 1](out, ml_dtypes.bfloat16(2.0), ml_dtypes.bfloat16(3.0))  # the launcher's path
    np.testing.assert_array_equal(out, [2.0, 5.0])


class _BfloatCAIExporter:
    """Exports bfloat16 as CuPy does: a ``<V2`` typestr, the real dtype on ``.dtype``."""

    def __init__(self, host: np.ndarray):
        self.host = host  # host memory stands in for device memory: nothing reads it
        self.dtype = np.dtype(ml_dtypes.bfloat16)
        self.__cuda_array_interface__ = {
            "shape": host.shape,
            "typestr": "<V2",
            "descr": [("", "<V2")],
            "data": (host.ctypes.data, False),
            "strides": None,
            "version": 3,
        }


def test_cuda_array_interface_bfloat16_keeps_its_dtype(monkeypatch):
    from cujit.runtime import interop
    from cujit.types import Array, bfloat16, typeof

    monkeypatch.setattr(interop, "_pointer_device", lambda ptr: 0)
    obj = _BfloatCAIExporter(np.zeros((2, 3), np.uint16))
    assert typeof(obj) == Array(bfloat16, 2, "C")
    view = interop._cai_view(obj, obj.__cuda_array_interface__)
    assert view.dtype == np.dtype(ml_dtypes.bfloat16) and view.shape == (2, 3)
