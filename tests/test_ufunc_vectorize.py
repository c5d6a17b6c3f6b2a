"""cuda.vectorize against NumPy: loop selection, broadcasting, out=, scalars, device
operands, lazy loops; on the CPU target here and the CUDA target under the gpu marker."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cujit import cuda
from cujit.ufunc import vectorize
from cujit.ufunc.arrays import arrays_for

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
RNG = np.random.default_rng(14)


@cuda.jit(device=True)
def _scale(x):
    return x * 3 + 1


def _saxpy_body(a, x, y):
    return a * x + y


def _hypot_body(x, y):
    return math.sqrt(x * x + y * y) + _scale(x)


@pytest.fixture(scope="module", params=TARGETS)
def target(request):
    return request.param


@pytest.fixture(scope="module")
def hyp(target):
    return vectorize(["float32(float32, float32)", "float64(float64, float64)"], target=target)(
        _hypot_body
    )


def _ref_hyp(x, y):
    return np.sqrt(x * x + y * y) + (x * 3 + 1)


def _close(got, want, dtype):
    tol = 1e-6 if np.dtype(dtype) == np.float32 else 1e-12
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    assert np.linalg.norm(got - want) <= tol * max(np.linalg.norm(want), 1.0)


def test_host_arrays_pick_the_first_safe_loop(hyp):
    x, y = RNG.random(1000).astype(np.float32) + 0.5, RNG.random(1000).astype(np.float32)
    got = hyp(x, y)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    _close(got, _ref_hyp(x, y), np.float32)
    # int32 does not cast safely to float32, so the float64 loop serves it (as NumPy)
    xi = np.arange(1, 50, dtype=np.int32)
    got = hyp(xi, xi)
    assert got.dtype == np.float64
    _close(got, _ref_hyp(xi.astype(np.float64), xi.astype(np.float64)), np.float64)


def test_broadcasting_and_python_scalars(hyp):
    x = RNG.random((6, 1, 5)) + 0.25
    y = RNG.random((4, 1))
    got = hyp(x, y)
    _close(got, _ref_hyp(x, y), np.float64)
    # a Python float beside float32 arrays keeps float32 (weak scalar, NEP 50)
    xf = x.astype(np.float32)
    got = hyp(xf, 2.0)
    assert got.dtype == np.float32 and got.shape == xf.shape
    _close(got, _ref_hyp(xf.astype(np.float64), 2.0), np.float32)


def test_all_scalars_give_a_scalar_and_0d_arrays(hyp):
    got = hyp(3.0, 4.0)
    assert np.ndim(got) == 0 and np.asarray(got).dtype == np.float64
    assert abs(float(got) - (5.0 + 10.0)) < 1e-12
    got = hyp(np.array(3.0), np.float64(4.0))
    assert np.ndim(got) == 0 and abs(float(got) - 15.0) < 1e-12


def test_out_and_noncontiguous_operands(hyp, target):
    x = RNG.random((8, 10)) + 0.1
    y = RNG.random((10, 8)).T  # Fortran-ordered view: the strided kernel reads it
    out = np.full((8, 10), np.nan)
    res = hyp(x, y, out=out)
    assert res is out
    _close(out, _ref_hyp(x, y), np.float64)
    out32 = np.full((8, 10), np.nan, np.float32)  # float64 result cast into float32 out
    hyp(x, y, out32)
    _close(out32, _ref_hyp(x, y), np.float32)


def test_device_operands_stay_on_the_device(hyp, target):
    mem = arrays_for(target)
    x, y = RNG.random(3000).astype(np.float32) + 0.5, RNG.random(3000).astype(np.float32)
    dx, dy = mem.to_device(x), mem.to_device(y)
    got = hyp(dx, dy)
    assert mem.is_device(got)
    _close(mem.to_host(got), _ref_hyp(x, y), np.float32)
    dout = mem.to_device(np.full(3000, np.nan, np.float32))
    assert hyp(dx, y, out=dout) is dout  # a host operand beside device ones is copied in
    _close(mem.to_host(dout), _ref_hyp(x, y), np.float32)


def test_stream_argument(hyp, target):
    stream = cuda.stream() if target == "cuda" else 0
    x = RNG.random(500) + 1
    got = hyp(x, x, stream=stream)
    _close(got, _ref_hyp(x, x), np.float64)


def test_lazy_ufunc_compiles_a_loop_per_input_types(target):
    saxpy = vectorize(target=target)(_saxpy_body)
    assert saxpy.ntypes == 0
    x = RNG.random(777).astype(np.float32)
    y = RNG.random(777).astype(np.float32)
    got = saxpy(np.float32(2.5), x, y)
    assert got.dtype == np.float32
    _close(got, 2.5 * x.astype(np.float64) + y, np.float32)
    xi = np.arange(1, 100, dtype=np.int64)
    got = saxpy(3, xi, xi)
    assert got.dtype == np.int64 and np.array_equal(got, 4 * xi)
    assert saxpy.ntypes == 2
    saxpy(4, xi, xi)
    assert saxpy.ntypes == 2  # the int64 loop again


def test_integer_loops_and_empty_arrays(target):
    @vectorize(["int32(int32, int32)"], target=target)
    def clamp_add(a, b):
        s = a + b
        if s > 100:
            return 100
        return s

    a = np.arange(-60, 60, dtype=np.int32)
    got = clamp_add(a, a[::-1].copy() * 2)
    assert np.array_equal(got, np.minimum(a + a[::-1] * 2, 100))
    empty = clamp_add(np.zeros(0, np.int32), np.int16(3))
    assert empty.shape == (0,) and empty.dtype == np.int32


def test_device_true_gives_a_device_function(target):
    poly = vectorize(["float64(float64)"], device=True)(lambda v: v * v - 2.0)

    @cuda.jit(target=target)
    def kern(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = poly(x[i])

    x = RNG.random(64)
    mem = arrays_for(target)
    dx, dout = mem.to_device(x), mem.to_device(np.full(64, np.nan))
    kern[1, 64](dx, dout)
    _close(mem.to_host(dout), x * x - 2.0, np.float64)


def test_cuda_namespace_serves_the_decorators():
    assert cuda.vectorize is vectorize
    assert callable(cuda.guvectorize) and callable(cuda.reduce) and callable(cuda.Reduce)


def test_repeated_device_calls_reuse_the_launch_and_stay_right(hyp, target):
    mem = arrays_for(target)
    out = mem.to_device(np.full(300, np.nan, np.float32))
    for seed in range(3):  # the same kinds of operands: the cached launch, new data
        x = np.random.default_rng(seed).random(300).astype(np.float32) + 0.5
        assert hyp(mem.to_device(x), np.float32(seed), out=out) is out
        _close(mem.to_host(out), _ref_hyp(x.astype(np.float64), float(seed)), np.float32)
    x64 = RNG.random(300) + 0.5  # float64 operands: another loop, its own launch
    out64 = mem.to_device(np.full(300, np.nan))
    hyp(mem.to_device(x64), 1.5, out=out64)
    _close(mem.to_host(out64), _ref_hyp(x64, 1.5), np.float64)
    with pytest.raises(TypeError, match="could not be coerced"):  # checks still run
        hyp(mem.to_device(x64), 1.5, out=mem.to_device(np.zeros(300, np.int32)))


def test_in_place_output_aliasing_an_input(hyp, target):
    mem = arrays_for(target)
    x = RNG.random(5000) + 0.5  # several unrolled steps per thread and a tail
    y = RNG.random(5000)
    dx = mem.to_device(x)
    assert hyp(dx, mem.to_device(y), out=dx) is dx
    _close(mem.to_host(dx), _ref_hyp(x, y), np.float64)


def test_cuda_target_takes_cai_and_cuda_dlpack_operands_as_device_arrays():
    mem = arrays_for("cuda")  # classification only: nothing here touches a GPU

    class DLPack:
        def __init__(self, kind):
            self.kind = kind

        def __dlpack_device__(self):
            return (self.kind, 0)

    class CAI:
        __cuda_array_interface__ = ()  # only its presence matters

    assert mem.is_device(CAI()) and mem.is_device(DLPack(2)) and mem.is_device(DLPack(13))
    assert not mem.is_device(DLPack(1)) and not mem.is_device(np.ones(3))
