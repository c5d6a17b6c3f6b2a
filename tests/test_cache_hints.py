"""Cache-hinted loads and stores (cuda.ldca ... cuda.stwt): plain loads and stores on the
CPU target, PTX ld/st with the cache operator on the CUDA target (checked in the PTX
here, run on the GPU where one is present)."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError

LOADS = ("ldca", "ldcg", "ldcs", "ldlu", "ldcv")
STORES = ("stcg", "stcs", "stwb", "stwt")
DTYPES = (np.int8, np.uint16, np.int32, np.uint64, np.float32, np.float64)


def _copy_kernel(load: str, store: str):
    ld, st = getattr(cuda, load), getattr(cuda, store)

    def k(x, y, m):
        i = cuda.grid(1)
        if i < x.size:
            st(y, i, ld(x, i) + 1)
            st(m, (i, 1), ld(m, (i, 0)))

    return k


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_load_and_store_moves_the_element(target, dtype):
    # STORES * 2 is longer than LOADS: every load meets a store, every store a load.
    for load, store in zip(LOADS, STORES * 2, strict=False):
        x = (np.arange(50) % 100).astype(dtype)
        y = np.zeros_like(x)
        m = np.stack([x * 2, np.zeros_like(x)], axis=1)
        cuda.jit(target=target)(_copy_kernel(load, store))[2, 32](x, y, m)
        assert np.array_equal(y, (x + 1).astype(dtype)), (load, store)
        assert np.array_equal(m[:, 1], m[:, 0]), (load, store)


@pytest.mark.parametrize("load,store", list(zip(LOADS, STORES * 2, strict=False)))
def test_ptx_has_the_cache_operators(load, store):
    ptx, _ = cuda.compile_ptx(
        _copy_kernel(load, store), "void(float64[::1], float64[::1], int8[:, ::1])"
    )
    assert f"ld.global.{load[2:]}.b64" in ptx and f"st.global.{store[2:]}.b64" in ptx
    assert f"ld.global.{load[2:]}.b8" in ptx and f"st.global.{store[2:]}.b8" in ptx


def test_a_store_marks_the_array_written():
    def k(x, y):
        cuda.stcs(y, 0, cuda.ldcs(x, 0))

    spec = cuda.jit(target="cpu")(k)
    x, y = np.ones(1), np.zeros(1)
    spec[1, 1](x, y)
    assert y[0] == 1.0
    assert next(iter(spec.overloads.values())).result.written == (False, True)


def test_wrong_arguments_are_typing_errors():
    def bad_dtype(x):
        x[0] = cuda.ldcg(x, 0).real

    with pytest.raises(TypingError, match="ldcg requires array of integer or float type"):
        cuda.jit(target="cpu")(bad_dtype)[1, 1](np.zeros(1, np.complex64))

    def bad_index(x):
        cuda.stcg(x, 0, 1.0)

    with pytest.raises(TypingError, match="Expected 2 indices, got a scalar"):
        cuda.jit(target="cpu")(bad_index)[1, 1](np.zeros((2, 2)))

    def float_index(x):
        cuda.stcg(x, 1.0, 1.0)

    with pytest.raises(TypingError, match="float64 is not a valid index"):
        cuda.jit(target="cpu")(float_index)[1, 1](np.zeros(2))

    def long_index(x):
        x[0] = cuda.ldcv(x, (0, 1))

    with pytest.raises(TypingError, match="Expected 1 indices, got 2"):
        cuda.jit(target="cpu")(long_index)[1, 1](np.zeros(2))
