"""Cache-hinted loads and stores through pointers (types.CPointer arguments): the
element ``p[i]`` names, moved with the cache operator on the CUDA target (in the PTX
here, run where a GPU is present) and plainly on the CPU target."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, types
from cujit.diagnostics import TypingError
from cujit.types import from_dtype

LOADS = ("ldca", "ldcg", "ldcs", "ldlu", "ldcv")
STORES = ("stcg", "stcs", "stwb", "stwt")
DTYPES = (np.int8, np.uint16, np.int32, np.uint64, np.float16, np.float32, np.float64)


def _kernel(load: str, store: str):
    ld, st = getattr(cuda, load), getattr(cuda, store)

    def k(src, dst, n):
        i = cuda.grid(1)
        if i < n:
            st(dst, n - 1 - i, ld(src, i) + 1)

    return k


def _sig(dtype):
    p = types.CPointer(from_dtype(np.dtype(dtype)))
    return types.void(p, p, types.int64)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pointer_ptx_has_the_cache_operators(dtype):
    bits = np.dtype(dtype).itemsize * 8
    for load, store in zip(LOADS, STORES * 2, strict=False):
        ptx, _ = cuda.compile_ptx(_kernel(load, store), _sig(dtype))
        assert f"ld.global.{load[2:]}.b{bits}" in ptx, (load, dtype)
        assert f"st.global.{store[2:]}.b{bits}" in ptx, (store, dtype)


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("dtype", (np.int8, np.uint64, np.float16, np.float64))
def test_pointer_loads_and_stores_move_the_elements(target, dtype):
    n = 37
    src = ((np.arange(n) * 3) % 101).astype(dtype)
    expect = (src + 1).astype(dtype)[::-1]
    for load, store in zip(LOADS, STORES * 2, strict=False):
        poison = np.full(n, 77, dtype)
        kernel = cuda.jit(_sig(dtype), target=target)(_kernel(load, store))
        if target == "cuda":
            d_src, d_dst = cuda.to_device(src), cuda.to_device(poison)
            kernel[2, 32](d_src.device_ctypes_pointer.value, d_dst.device_ctypes_pointer.value, n)
            got = d_dst.copy_to_host()
        else:
            got = poison
            kernel[2, 32](src.ctypes.data, got.ctypes.data, n)
        assert np.array_equal(got, expect), (load, store)


def test_a_pointer_takes_one_integer_index():
    def tuple_index(p):
        cuda.stcg(p, (0, 1), 1)

    with pytest.raises(TypingError, match="Pointers only support scalar indexing, got tuple of 2"):
        cuda.compile_ptx(tuple_index, types.void(types.CPointer(types.int32)))

    def float_index(p):
        cuda.stcg(p, 0, cuda.ldcg(p, 1.5))

    with pytest.raises(TypingError, match="float64 is not a valid index"):
        cuda.compile_ptx(float_index, types.void(types.CPointer(types.int32)))


def test_a_pointer_to_complex_is_refused():
    def k(p, out):
        out[0] = cuda.ldcs(p, 0)

    with pytest.raises(TypingError, match="ldcs requires array of integer or float type"):
        cuda.compile_ptx(k, types.void(types.CPointer(types.complex64), types.complex64[::1]))
