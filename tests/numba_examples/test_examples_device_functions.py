"""A conformance suite of numba.cuda programs as numba's users write them (see
examples_check.py for how they run on both targets): device functions (one
function on the CPU and the GPU, Black-Scholes)."""

from __future__ import annotations

import math
from math import pi

import numpy as np
from examples_check import (
    assert_matches,
    poisoned,
    rng,
    target_fixture,  # noqa: F401 (the target fixture)
)

from cujit import cuda

# -- 10. One function on the CPU and the GPU (numba-cuda docs, examples: "Calling a
#        function on the CPU and GPU"; doc_examples/test_cpu_gpu_compat.py).  The
#        original decorates business_logic with numba.jit; here it is a device
#        function, callable from Python as well. -------------------------------------


@cuda.jit(device=True)
def business_logic(x, y, z):
    return 4 * z * (2 * x - (4 * y) / 2 * pi)


def test_cpu_gpu_compat(target):
    X = cuda.to_device(np.array([1, 10, 234]))
    Y = cuda.to_device(np.array([2, 2, 4014]))
    Z = cuda.to_device(np.array([3, 14, 2211]))
    results = cuda.to_device(poisoned(3, np.float64))

    @cuda.jit
    def f(res, xarr, yarr, zarr):
        tid = cuda.grid(1)
        if tid < len(xarr):
            res[tid] = business_logic(xarr[tid], yarr[tid], zarr[tid])

    f.forall(len(X))(results, X, Y, Z)
    expect = [
        business_logic.py_func(x, y, z)
        for x, y, z in zip(X.copy_to_host(), Y.copy_to_host(), Z.copy_to_host(), strict=True)
    ]
    assert_matches(results.copy_to_host(), np.array(expect))


# -- 17. Black-Scholes with a device function (numba's examples,
#        blackscholes/blackscholes_cuda.py; math.* in kernels) ------------------------

RISKFREE = 0.02
VOLATILITY = 0.30
A1 = 0.31938153
A2 = -0.356563782
A3 = 1.781477937
A4 = -1.821255978
A5 = 1.330274429
RSQRT2PI = 0.39894228040143267794


@cuda.jit(device=True)
def cnd_cuda(d):
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (
        RSQRT2PI * math.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    )
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


def cnd_numpy(d):
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret_val = RSQRT2PI * np.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return np.where(d > 0, 1.0 - ret_val, ret_val)


def test_black_scholes(target):
    @cuda.jit
    def black_scholes_cuda(callResult, putResult, S, X, T, R, V):
        i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
        if i >= S.shape[0]:
            return
        sqrtT = math.sqrt(T[i])
        d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
        d2 = d1 - V * sqrtT
        cndd1 = cnd_cuda(d1)
        cndd2 = cnd_cuda(d2)
        expRT = math.exp((-1.0 * R) * T[i])
        callResult[i] = S[i] * cndd1 - X[i] * expRT * cndd2
        putResult[i] = X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1)

    r = rng()
    n = 4000
    S = r.uniform(5.0, 30.0, n)
    X = r.uniform(1.0, 100.0, n)
    T = r.uniform(0.25, 10.0, n)
    blockdim = 1024, 1
    griddim = math.ceil(n / blockdim[0]), 1
    d_call = cuda.to_device(poisoned(n, np.float64))
    d_put = cuda.to_device(poisoned(n, np.float64))
    black_scholes_cuda[griddim, blockdim](
        d_call, d_put, cuda.to_device(S), cuda.to_device(X), cuda.to_device(T), RISKFREE, VOLATILITY
    )
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (RISKFREE + 0.5 * VOLATILITY * VOLATILITY) * T) / (VOLATILITY * sqrtT)
    d2 = d1 - VOLATILITY * sqrtT
    expRT = np.exp(-RISKFREE * T)
    call = S * cnd_numpy(d1) - X * expRT * cnd_numpy(d2)
    put = X * expRT * (1.0 - cnd_numpy(d2)) - S * (1.0 - cnd_numpy(d1))
    assert_matches(d_call.copy_to_host(), call)
    assert_matches(d_put.copy_to_host(), put)
