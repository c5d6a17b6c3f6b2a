"""Speed of generated code: the same kernels in cujit, numba-cuda and CUDA C, one run.

    PYTHONPATH=src python3 bench/kernel_bench.py [--only NAME,...]   (on a GPU machine)

Each kernel is written once as Python source text (``*_PY`` below) and exec'd twice, with
``cuda`` bound to ``cujit.cuda`` and to ``numba.cuda``, so both compilers see the same
code; its CUDA C twin (``*_C``, ``extern "C" __global__``, plain pointers and ``int``
indices, as one would write it by hand) is compiled by NVRTC through ``cupy.RawKernel``
and is the anchor.  The three share the algorithm, the block shape and the grid.

Kernels (``KERNELS``): saxpy over 2^26 float32; a 2048x2048 float32 matrix product
through 16x16 shared-memory tiles; a shared-memory block reduction with one atomic add
per block over 2^26 float32 (grid-stride loop, 8 blocks of 256 per multiprocessor); an
8192x8192 float32 transpose through a padded 32x33 shared tile (blocks of 32x8); one
8192x8192 float64 Jacobi step (5-point stencil, boundary copied); Black-Scholes call and
put over 2^24 float64 (cumulative normal through ``erf``); and the nine of
``kernel_bench_more.py``: axpby, GELU, complex multiply, n-body, CSR SpMV, a 3-D 7-point
stencil, a shared-memory histogram, a warp-shuffle row softmax, a 1-D convolution.

Inputs are rotated past the L2: where one set of a kernel's arrays is smaller than twice
the L2 (the device's attribute), the timed launches cycle through enough copies of them
(at most 256) to exceed it.  Besides cujit (coarsening and the 32-bit index variant on,
as shipped), ``cujit_plain`` is the kernel as written, ``jit(coarsen=False,
index32=False)``; the ratio table gives each kernel's variant (coarsened by k, 32-bit
indices, or the rule that failed) and the gain plain/variant.

Per kernel and implementation: inputs from ``np.random.default_rng(SEED)`` (never zeros)
copied to the device once (cujit's and numba's ``to_device``, ``cupy.asarray``); outputs
poisoned with NaN; one launch checked against NumPy (relative 2-norm of the error,
float32 1e-5, float64 1e-12); then WARMUP launches, then the median over REPS samples,
each PER_SAMPLE back-to-back launches between two CUDA events recorded on the legacy
default stream through cuda.bindings (one timer for all three; all three launch on that
stream).  Reported: ms per launch, GB/s from the bytes the algorithm must move (or
GFLOP/s for the matrix product), the floor (those bytes at the device-to-device copy rate
measured in the same run), registers per thread, and the ratios cujit/C and numba/C
(above 1: slower than C).

Prints a table and saves everything to bench/results/kernel_bench-<date>.json (also to
$OUT when set, with the cujit and numba-cuda PTX of each kernel beside it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
from datetime import datetime, timezone

import numpy as np

# numba-cuda 0.30 (an anchor) still calls np.row_stack, which NumPy 2.5 removed; give it
# the alias it expects so the anchor runs at all.  cujit does not use it.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
sys.path.insert(0, SRC)
sys.path.insert(0, HERE)

import kernel_bench_more as more  # noqa: E402 -- beside this file, found through HERE

SEED = 20261130
WARMUP = 3  # launches before the timed samples
REPS = 20  # timed samples; the median is reported
PER_SAMPLE = 10  # back-to-back launches between the two events of one sample
BLOCKS_PER_SM = 8  # reduction grid: 8 blocks of 256 threads fill a multiprocessor
IMPLS = ("cujit", "cujit_plain", "numba_cuda", "cuda_c")
MAX_SETS = 256  # input copies cycled through to get past the L2
FP32_LANES_PER_SM = 128  # sm_90

# ---------------------------------------------------------------------------------------
# The kernels: Python text (exec'd with ``cuda``, ``math``, ``float32``, ``float64`` and
# the constants bound) and its CUDA C twin.

SAXPY_PY = """
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]
"""
SAXPY_C = r"""
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out,
                                 int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * x[i] + y[i];
}
"""

TILE = 16
MATMUL_PY = """
def matmul(a, b, c):
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    n = a.shape[0]
    kdim = a.shape[1]
    m = b.shape[1]
    acc = float32(0.0)
    for t in range((kdim + TILE - 1) // TILE):
        k = t * TILE + tx
        sa[ty, tx] = a[row, k] if row < n and k < kdim else float32(0.0)
        k = t * TILE + ty
        sb[ty, tx] = b[k, col] if k < kdim and col < m else float32(0.0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += sa[ty, kk] * sb[kk, tx]
        cuda.syncthreads()
    if row < n and col < m:
        c[row, col] = acc
"""
MATMUL_C = r"""
#define TILE 16
extern "C" __global__ void matmul(const float* a, const float* b, float* c,
                                  int n, int kdim, int m) {
    __shared__ float sa[TILE][TILE];
    __shared__ float sb[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int col = blockIdx.x * TILE + tx;
    int row = blockIdx.y * TILE + ty;
    float acc = 0.0f;
    for (int t = 0; t < (kdim + TILE - 1) / TILE; ++t) {
        int k = t * TILE + tx;
        sa[ty][tx] = (row < n && k < kdim) ? a[row * kdim + k] : 0.0f;
        k = t * TILE + ty;
        sb[ty][tx] = (k < kdim && col < m) ? b[k * m + col] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; ++kk)
            acc += sa[ty][kk] * sb[kk][tx];
        __syncthreads();
    }
    if (row < n && col < m)
        c[row * m + col] = acc;
}
"""

RBLOCK = 256
REDUCE_PY = """
def reduce_sum(x, total):
    buf = cuda.shared.array(RBLOCK, float32)
    tid = cuda.threadIdx.x
    acc = float32(0.0)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        acc += x[i]
        i += stride
    buf[tid] = acc
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        cuda.atomic.add(total, 0, buf[0])
"""
REDUCE_C = r"""
#define RBLOCK 256
extern "C" __global__ void reduce_sum(const float* x, float* total, int n) {
    __shared__ float buf[RBLOCK];
    int tid = threadIdx.x;
    float acc = 0.0f;
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += stride)
        acc += x[i];
    buf[tid] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (tid < s)
            buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(total, buf[0]);
}
"""

TDIM, TROWS = 32, 8  # transpose: a 32x32 tile (padded to 33 columns), blocks of 32x8
TPAD = TDIM + 1  # a name of its own: neither compiler takes `TDIM + 1` in a shared shape
TRANSPOSE_PY = """
def transpose(a, out):
    tile = cuda.shared.array((TDIM, TPAD), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bx = cuda.blockIdx.x * TDIM
    by = cuda.blockIdx.y * TDIM
    rows = a.shape[0]
    cols = a.shape[1]
    x = bx + tx
    for j in range(0, TDIM, TROWS):
        y = by + ty + j
        if y < rows and x < cols:
            tile[ty + j, tx] = a[y, x]
    cuda.syncthreads()
    x = by + tx
    for j in range(0, TDIM, TROWS):
        y = bx + ty + j
        if y < cols and x < rows:
            out[y, x] = tile[tx, ty + j]
"""
TRANSPOSE_C = r"""
#define TDIM 32
#define TROWS 8
extern "C" __global__ void transpose(const float* a, float* out, int rows, int cols) {
    __shared__ float tile[TDIM][TDIM + 1];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int bx = blockIdx.x * TDIM;
    int by = blockIdx.y * TDIM;
    int x = bx + tx;
    for (int j = 0; j < TDIM; j += TROWS) {
        int y = by + ty + j;
        if (y < rows && x < cols)
            tile[ty + j][tx] = a[y * cols + x];
    }
    __syncthreads();
    x = by + tx;
    for (int j = 0; j < TDIM; j += TROWS) {
        int y = bx + ty + j;
        if (y < cols && x < rows)
            out[y * rows + x] = tile[tx][ty + j];
    }
}
"""

JACOBI_PY = """
def jacobi(u, out):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    n = u.shape[0]
    m = u.shape[1]
    if i < n and j < m:
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            out[i, j] = u[i, j]
        else:
            out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
"""
JACOBI_C = r"""
extern "C" __global__ void jacobi(const double* u, double* out, int n, int m) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < m) {
        if (i == 0 || j == 0 || i == n - 1 || j == m - 1)
            out[i * m + j] = u[i * m + j];
        else
            out[i * m + j] = 0.25 * (u[(i - 1) * m + j] + u[(i + 1) * m + j]
                                     + u[i * m + j - 1] + u[i * m + j + 1]);
    }
}
"""

RSQRT2 = 0.7071067811865476  # 1/sqrt(2), the same literal in both texts
BLACK_SCHOLES_PY = """
def black_scholes(S, K, T, r, v, call, put):
    i = cuda.grid(1)
    if i < S.size:
        s = S[i]
        k = K[i]
        t = T[i]
        sq = math.sqrt(t)
        d1 = (math.log(s / k) + (r + 0.5 * v * v) * t) / (v * sq)
        d2 = d1 - v * sq
        c1 = 0.5 * (1.0 + math.erf(d1 * RSQRT2))
        c2 = 0.5 * (1.0 + math.erf(d2 * RSQRT2))
        disc = k * math.exp(-r * t)
        call[i] = s * c1 - disc * c2
        put[i] = disc * (1.0 - c2) - s * (1.0 - c1)
"""
BLACK_SCHOLES_C = r"""
#define RSQRT2 0.7071067811865476
extern "C" __global__ void black_scholes(const double* S, const double* K, const double* T,
                                         double r, double v, double* call, double* put,
                                         int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double s = S[i];
        double k = K[i];
        double t = T[i];
        double sq = sqrt(t);
        double d1 = (log(s / k) + (r + 0.5 * v * v) * t) / (v * sq);
        double d2 = d1 - v * sq;
        double c1 = 0.5 * (1.0 + erf(d1 * RSQRT2));
        double c2 = 0.5 * (1.0 + erf(d2 * RSQRT2));
        double disc = k * exp(-r * t);
        call[i] = s * c1 - disc * c2;
        put[i] = disc * (1.0 - c2) - s * (1.0 - c1);
    }
}
"""

CONSTANTS = {
    "TILE": TILE,
    "RBLOCK": RBLOCK,
    "TDIM": TDIM,
    "TROWS": TROWS,
    "TPAD": TPAD,
    "RSQRT2": RSQRT2,
}


def _poison(shape, dtype) -> np.ndarray:
    return np.full(shape, np.nan, dtype)


def _erf(x: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erf

        return erf(x)
    except ImportError:  # slow, exact enough: the C library's erf element by element
        return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)


def black_scholes_ref(S, K, T, r, v):
    sq = np.sqrt(T)
    d1 = (np.log(S / K) + (r + 0.5 * v * v) * T) / (v * sq)
    d2 = d1 - v * sq
    c1 = 0.5 * (1.0 + _erf(d1 * RSQRT2))
    c2 = 0.5 * (1.0 + _erf(d2 * RSQRT2))
    disc = K * np.exp(-r * T)
    return S * c1 - disc * c2, disc * (1.0 - c2) - S * (1.0 - c1)


class Kernel:
    """One benchmark kernel: its texts, launch shape, inputs, reference and costs.

    ``make(rng, sms)`` returns (args, grid, block, c_extra): the Python-level arguments
    (host arrays and NumPy scalars, outputs poisoned or, for an accumulator, zeroed), the
    launch shape, and the trailing ``int`` sizes the C twin takes.  ``reference(args)``
    gives {argument index: expected array}.
    """

    def __init__(
        self,
        name,
        py_src,
        c_src,
        make,
        reference,
        tol,
        nbytes,
        flops=None,
        rate="GB/s",
        elementwise=False,
    ):
        self.name, self.py_src, self.c_src = name, py_src, c_src
        self.make, self.reference, self.tol = make, reference, tol
        self.nbytes, self.flops, self.rate = nbytes, flops, rate
        self.elementwise = elementwise  # in the elementwise geomean


def _saxpy_make(rng, sms):
    n = 1 << 26
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    return [np.float32(1.75), x, y, _poison(n, np.float32)], (n + 255) // 256, 256, [np.int32(n)]


MM_N = 2048


def _matmul_make(rng, sms):
    a = rng.standard_normal((MM_N, MM_N), dtype=np.float32)
    b = rng.standard_normal((MM_N, MM_N), dtype=np.float32)
    grid = ((MM_N + TILE - 1) // TILE, (MM_N + TILE - 1) // TILE)
    return (
        [a, b, _poison((MM_N, MM_N), np.float32)],
        grid,
        (TILE, TILE),
        [np.int32(MM_N), np.int32(MM_N), np.int32(MM_N)],
    )


def _reduce_make(rng, sms):
    n = 1 << 26
    x = rng.random(n, dtype=np.float32) + np.float32(0.5)  # in [0.5, 1.5): no cancellation
    return [x, np.zeros(1, np.float32)], sms * BLOCKS_PER_SM, RBLOCK, [np.int32(n)]


TR_N = 8192


def _transpose_make(rng, sms):
    a = rng.standard_normal((TR_N, TR_N), dtype=np.float32)
    return (
        [a, _poison((TR_N, TR_N), np.float32)],
        (TR_N // TDIM, TR_N // TDIM),
        (TDIM, TROWS),
        [np.int32(TR_N), np.int32(TR_N)],
    )


JA_N = 8192
JA_BLOCK = (32, 8)


def _jacobi_make(rng, sms):
    u = rng.standard_normal((JA_N, JA_N))
    grid = ((JA_N + JA_BLOCK[0] - 1) // JA_BLOCK[0], (JA_N + JA_BLOCK[1] - 1) // JA_BLOCK[1])
    return [u, _poison((JA_N, JA_N), np.float64)], grid, JA_BLOCK, [np.int32(JA_N), np.int32(JA_N)]


def _jacobi_ref(args):
    u = args[0]
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return {1: out}


BS_N = 1 << 24


def _bs_make(rng, sms):
    S = rng.uniform(5.0, 30.0, BS_N)
    K = rng.uniform(1.0, 100.0, BS_N)
    T = rng.uniform(0.25, 10.0, BS_N)
    return (
        [
            S,
            K,
            T,
            np.float64(0.02),
            np.float64(0.30),
            _poison(BS_N, np.float64),
            _poison(BS_N, np.float64),
        ],
        (BS_N + 127) // 128,
        128,
        [np.int32(BS_N)],
    )


def _bs_ref(args):
    call, put = black_scholes_ref(*args[:5])
    return {5: call, 6: put}


KERNELS = {
    k.name: k
    for k in (
        Kernel(
            "saxpy",
            SAXPY_PY,
            SAXPY_C,
            _saxpy_make,
            lambda a: {3: np.float64(a[0]) * a[1] + a[2]},
            1e-5,
            12 * (1 << 26),
            elementwise=True,
        ),
        Kernel(
            "matmul",
            MATMUL_PY,
            MATMUL_C,
            _matmul_make,
            lambda a: {2: a[0].astype(np.float64) @ a[1].astype(np.float64)},
            1e-5,
            3 * 4 * MM_N * MM_N,
            flops=2 * MM_N**3,
            rate="GFLOP/s",
        ),
        Kernel(
            "reduce_sum",
            REDUCE_PY,
            REDUCE_C,
            _reduce_make,
            lambda a: {1: np.array([a[0].sum(dtype=np.float64)])},
            1e-5,
            4 * (1 << 26),
        ),
        Kernel(
            "transpose",
            TRANSPOSE_PY,
            TRANSPOSE_C,
            _transpose_make,
            lambda a: {1: a[0].T},
            1e-5,
            2 * 4 * TR_N * TR_N,
        ),
        Kernel(
            "jacobi",
            JACOBI_PY,
            JACOBI_C,
            _jacobi_make,
            _jacobi_ref,
            1e-12,
            2 * 8 * JA_N * JA_N,
            flops=4 * (JA_N - 2) ** 2,
        ),
        Kernel(
            "black_scholes",
            BLACK_SCHOLES_PY,
            BLACK_SCHOLES_C,
            _bs_make,
            _bs_ref,
            1e-12,
            5 * 8 * BS_N,
            elementwise=True,
        ),
        *more.kernels(Kernel),
    )
}


def python_kernel(kernel: Kernel, cuda_module):
    """``kernel``'s Python text exec'd with ``cuda`` bound to ``cuda_module``: the plain
    function (not yet jitted)."""
    ns = {
        "cuda": cuda_module,
        "math": math,
        "float32": cuda_module.float32,
        "float64": cuda_module.float64,
        "int32": cuda_module.int32,
        **CONSTANTS,
        **more.CONSTANTS,
    }
    exec(compile(kernel.py_src, f"<kernel_bench {kernel.name}>", "exec"), ns)
    return ns[kernel.name]


# ---------------------------------------------------------------------------------------
# The three implementations: device copies, launch, copy back, registers, PTX.


class _NumbaApiImpl:
    """What cujit and numba-cuda share: the numba.cuda API of module ``self.cuda``."""

    label = ""

    def build(self, kernel):
        return self.cuda.jit(python_kernel(kernel, self.cuda))

    def device(self, a):
        return self.cuda.to_device(a) if isinstance(a, np.ndarray) else a

    def launcher(self, kern, grid, block, dargs, c_extra):
        cfg = kern[grid, block]
        return lambda: cfg(*dargs)

    def host(self, d):
        return d.copy_to_host()

    def sync(self):
        self.cuda.synchronize()


class CujitImpl(_NumbaApiImpl):
    label = "cujit"

    def __init__(self):
        from cujit import cuda

        self.cuda = cuda

    def regs(self, kern):
        from cuda.bindings import driver as drv

        spec = next(iter(kern.overloads.values()))
        spec = spec.coarse.wide if spec.coarse is not None and spec.coarse.wide else spec
        module = _ok(drv.cuModuleLoadData(spec.result.cubin))
        try:
            func = _ok(drv.cuModuleGetFunction(module, spec.result.symbol.encode()))
            return _ok(
                drv.cuFuncGetAttribute(drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, func)
            )
        finally:
            drv.cuModuleUnload(module)

    def ptx(self, kern):
        spec = next(iter(kern.overloads.values()))
        wide = spec.coarse.wide if spec.coarse is not None else None
        return (wide or spec).result.ptx

    def variant(self, kern):
        """Which form the timed launches ran: coarsened by k, or why not."""
        from cujit.coarsen import describe

        spec = next(iter(kern.overloads.values()))
        k = getattr(spec.coarse, "k", None)  # None: the 32-bit index variant's plan
        if spec.coarse is not None and spec.coarse.wide is not None:
            return f"coarsened x{k}" if k else "32-bit indices (docs/index32.md)"
        if spec.coarse is not None:
            return ("coarsenable" if k else "32-bit index variant") + ", but the facts failed"
        return describe(spec.result.outputs["passes"])


class CujitPlainImpl(CujitImpl):
    label = "cujit_plain"

    def build(self, kernel):
        return self.cuda.jit(python_kernel(kernel, self.cuda), coarsen=False, index32=False)


class NumbaImpl(_NumbaApiImpl):
    label = "numba_cuda"

    def __init__(self):
        from numba import cuda

        self.cuda = cuda

    def regs(self, kern):
        return next(iter(kern.overloads.values())).regs_per_thread

    def ptx(self, kern):
        return next(iter(kern.inspect_asm().values()))


class CupyImpl:
    label = "cuda_c"

    def __init__(self):
        import cupy

        self.cupy = cupy

    def build(self, kernel):
        return self.cupy.RawKernel(kernel.c_src, kernel.name)

    def device(self, a):
        return self.cupy.asarray(a) if isinstance(a, np.ndarray) else a

    def launcher(self, kern, grid, block, dargs, c_extra):
        grid = grid if isinstance(grid, tuple) else (grid,)
        block = block if isinstance(block, tuple) else (block,)
        args = tuple(dargs) + tuple(c_extra)
        return lambda: kern(grid, block, args)

    def host(self, d):
        return self.cupy.asnumpy(d)

    def sync(self):
        self.cupy.cuda.runtime.deviceSynchronize()

    def regs(self, kern):
        return kern.num_regs

    def ptx(self, kern):
        return None


IMPL_CLASSES = {
    "cujit": CujitImpl,
    "cujit_plain": CujitPlainImpl,
    "numba_cuda": NumbaImpl,
    "cuda_c": CupyImpl,
}


# ---------------------------------------------------------------------------------------
# Timing: CUDA events on the legacy default stream, through cuda.bindings.


def _ok(result):
    err = result[0]
    if int(err) != 0:
        raise RuntimeError(f"CUDA driver call failed: {err!r}")
    return result[1] if len(result) == 2 else result[1:] or None


class EventTimer:
    """Two events on the primary context of device 0 (the context all three use)."""

    def __init__(self):
        from cuda.bindings import driver as drv

        self.drv = drv
        _ok(drv.cuInit(0))
        self.dev = _ok(drv.cuDeviceGet(0))
        self.ctx = _ok(drv.cuDevicePrimaryCtxRetain(self.dev))
        _ok(drv.cuCtxSetCurrent(self.ctx))
        self.start = _ok(drv.cuEventCreate(0))
        self.end = _ok(drv.cuEventCreate(0))
        self.stream = drv.CUstream(0)

    def attribute(self, name: str) -> int:
        return _ok(
            self.drv.cuDeviceGetAttribute(
                getattr(self.drv.CUdevice_attribute, "CU_DEVICE_ATTRIBUTE_" + name), self.dev
            )
        )

    def sample(self, launch, count: int) -> float:
        """Milliseconds per launch over ``count`` back-to-back launches."""
        drv = self.drv
        _ok(drv.cuCtxSetCurrent(self.ctx))
        _ok(drv.cuEventRecord(self.start, self.stream))
        for _ in range(count):
            launch()
        _ok(drv.cuEventRecord(self.end, self.stream))
        _ok(drv.cuEventSynchronize(self.end))
        return _ok(drv.cuEventElapsedTime(self.start, self.end)) / count

    def time(self, launch, sync) -> dict:
        for _ in range(WARMUP):
            launch()
        sync()
        samples = [self.sample(launch, PER_SAMPLE) for _ in range(REPS)]
        return {
            "ms": statistics.median(samples),
            "min_ms": min(samples),
            "max_ms": max(samples),
            "samples_ms": samples,
        }

    def copy_rate(self, nbytes: int = 1 << 30) -> dict:
        """Device-to-device copy (cuMemcpyDtoDAsync) of ``nbytes`` of random data:
        bytes read + written per second, the practical ceiling of a streaming kernel."""
        drv = self.drv
        _ok(drv.cuCtxSetCurrent(self.ctx))
        src = _ok(drv.cuMemAlloc(nbytes))
        dst = _ok(drv.cuMemAlloc(nbytes))
        try:
            host = np.random.default_rng(SEED).random(nbytes // 8)
            _ok(drv.cuMemcpyHtoD(src, host.ctypes.data, nbytes))

            def launch():
                _ok(drv.cuMemcpyDtoDAsync(dst, src, nbytes, self.stream))

            t = self.time(launch, lambda: _ok(drv.cuCtxSynchronize()))
            t["bytes_moved"] = 2 * nbytes
            t["GB_per_s"] = 2 * nbytes / (t["ms"] * 1e-3) / 1e9
            return t
        finally:
            drv.cuMemFree(src)
            drv.cuMemFree(dst)


# ---------------------------------------------------------------------------------------


def rel_err(got: np.ndarray, want: np.ndarray) -> float:
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    denom = float(np.linalg.norm(want.ravel()))
    diff = float(np.linalg.norm((got - want).ravel()))
    return diff / denom if denom else diff


def run_impl(impl, kernel: Kernel, sets, grid, block, c_extra, expected, timer) -> dict:
    """Build, check, time one implementation of one kernel; every step recorded.
    ``sets``: one or more copies of the arguments, cycled through by the timed launches."""
    out: dict = {}
    t0 = time.perf_counter()
    kern = impl.build(kernel)
    dsets = [[impl.device(a) for a in args] for args in sets]
    dargs = dsets[0]
    launch = impl.launcher(kern, grid, block, dargs, c_extra)
    launch()  # the first launch compiles (cujit, numba) or loads (CuPy) the kernel
    impl.sync()
    out["first_launch_s"] = time.perf_counter() - t0
    errs = {str(i): rel_err(impl.host(dargs[i]), want) for i, want in expected.items()}
    err = max(errs.values())
    out["check"] = {
        "rel_err": err,
        "per_output": errs,
        "tol": kernel.tol,
        "ok": bool(err <= kernel.tol),
    }
    if len(dsets) > 1:
        launchers = [impl.launcher(kern, grid, block, d, c_extra) for d in dsets]
        turn = [0]

        def launch():
            turn[0] = (turn[0] + 1) % len(launchers)
            launchers[turn[0]]()

    out["input_sets"] = len(dsets)
    for key, fn in (("regs", impl.regs), ("ptx", impl.ptx)):
        try:
            value = fn(kern)
            if value is not None:
                out[key] = int(value) if key == "regs" else value
        except Exception as exc:
            out[key] = f"unavailable: {type(exc).__name__}: {exc}"[:160]
    t = timer.time(launch, impl.sync)
    out.update(t)
    try:  # after the timed launches, which chose (and compiled) the variant
        value = impl.variant(kern) if hasattr(impl, "variant") else None
        if value is not None:
            out["variant"] = value
    except Exception as exc:
        out["variant"] = f"unavailable: {type(exc).__name__}: {exc}"[:160]
    if kernel.flops and kernel.rate == "GFLOP/s":
        out["GFLOP_per_s"] = kernel.flops / (t["ms"] * 1e-3) / 1e9
    out["GB_per_s"] = kernel.nbytes / (t["ms"] * 1e-3) / 1e9
    return out


def input_sets(args, l2_bytes: int) -> list:
    """``args`` and copies of it, enough that their arrays together exceed twice the L2."""
    size = sum(a.nbytes for a in args if isinstance(a, np.ndarray))
    count = 1 if not size or size >= 2 * l2_bytes else min(MAX_SETS, -(-2 * l2_bytes // size))

    def fresh():
        return [a.copy() if isinstance(a, np.ndarray) else a for a in args]

    copies = [fresh() for _ in range(count - 1)]
    return [args, *copies]


def bench_kernel(kernel: Kernel, impls: dict, timer, sms: int, l2_bytes: int) -> dict:
    rng = np.random.default_rng(SEED)
    args, grid, block, c_extra = kernel.make(rng, sms)
    expected = kernel.reference(args)
    sets = input_sets(args, l2_bytes)
    row: dict = {"grid": grid, "block": block, "bytes": kernel.nbytes}
    if kernel.flops:
        row["flops"] = kernel.flops
    for label in IMPLS:
        impl = impls.get(label)
        if isinstance(impl, str) or impl is None:
            row[label] = impl or "unavailable: not loaded"
            continue
        try:
            with warnings.catch_warnings():  # numba warns about grid sizes and copies
                warnings.simplefilter("ignore")
                row[label] = run_impl(impl, kernel, sets, grid, block, c_extra, expected, timer)
        except Exception as exc:  # one implementation's failure must not lose the rest
            row[label] = f"unavailable: {type(exc).__name__}: {str(exc)[-300:]}"
        finally:
            try:
                impl.sync()
            except Exception:
                pass
    return row


def versions(impls: dict) -> dict:
    from importlib import metadata

    out = {"python": platform.python_version(), "numpy": np.__version__}
    for dist in (
        "numba",
        "numba-cuda",
        "cupy-cuda13x",
        "cupy-cuda12x",
        "cuda-bindings",
        "nvidia-nvvm",
        "nvidia-nvjitlink",
        "nvidia-cuda-nvrtc",
    ):
        try:
            out[dist] = metadata.version(dist)
        except Exception:
            pass
    try:
        from cuda.bindings import driver as drv

        out["cuda_driver"] = _ok(drv.cuDriverGetVersion())
    except Exception as exc:
        out["cuda_driver"] = f"unavailable: {exc}"[:120]
    try:
        import cupy

        out["nvrtc"] = cupy.cuda.nvrtc.getVersion()
    except Exception as exc:
        out["nvrtc"] = f"unavailable: {exc}"[:120]
    try:
        out["cujit_commit"] = (
            subprocess.run(
                ["git", "-C", HERE, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
            or "unknown"
        )
    except Exception:
        out["cujit_commit"] = "unknown"
    return out


# ---------------------------------------------------------------------------------------
# Printing.


def one_line(v) -> str:
    return " ".join(str(v).split())


def _ms(cell) -> float | None:
    return cell.get("ms") if isinstance(cell, dict) else None


def _ratio(a, b) -> str:
    return f"{a / b:6.2f}" if a and b else f"{'n/a':>6}"


def floor_ms(kernel: Kernel, results: dict) -> float | None:
    """The kernel's bytes at the measured copy rate; for a float32 kernel with a flop
    count, at least its flops at the fp32 peak (the matrix product)."""
    ceiling = results.get("copy_ceiling")
    rate = ceiling.get("GB_per_s") if isinstance(ceiling, dict) else None
    if not rate:
        return None
    floor = kernel.nbytes / (rate * 1e9) * 1e3
    peak = results.get("fp32_peak_GFLOP_per_s")
    if kernel.rate == "GFLOP/s" and peak:
        floor = max(floor, kernel.flops / (peak * 1e9) * 1e3)
    return floor


def print_table(results: dict) -> None:  # noqa: C901 -- one row format per result kind (error, timing, ratio); a bench report, not compiler code
    ceiling = results.get("copy_ceiling")
    ceil_rate = ceiling.get("GB_per_s") if isinstance(ceiling, dict) else None
    if ceil_rate:
        print(f"device-to-device copy: {ceil_rate:.0f} GB/s (read + write), the floor below")
    else:
        print(f"device-to-device copy: {one_line(ceiling)}")
    peak = results.get("fp32_peak_GFLOP_per_s")
    if peak:
        print(f"fp32 peak (multiprocessors x 128 lanes x 2 x top clock): {peak:.0f} GFLOP/s")
    print(
        f"\n{'kernel':14} {'impl':11} {'ms':>8} {'rate':>14} {'floor ms':>9} {'regs':>5}"
        f" {'check':>16} {'x C':>6}"
    )
    notes = []
    for name, row in results["kernels"].items():
        if isinstance(row, str):
            print(f"{name:14} {one_line(row)}")
            continue
        kernel = KERNELS[name]
        c_ms = _ms(row.get("cuda_c"))
        floor = f"{floor_ms(kernel, results):9.3f}" if floor_ms(kernel, results) else f"{'n/a':>9}"
        for label in IMPLS:
            cell = row.get(label)
            if not isinstance(cell, dict):
                print(f"{name:14} {label:11} {'n/a':>8}")
                notes.append(f"  {name} {label}: {one_line(cell)[:300]}")
                continue
            if kernel.rate == "GFLOP/s":
                rate = f"{cell['GFLOP_per_s']:8.0f} GFLOP/s"
            else:
                rate = f"{cell['GB_per_s']:9.0f} GB/s"
            chk = cell["check"]
            check = f"{'ok' if chk['ok'] else 'FAILED'} {chk['rel_err']:.1e}"
            regs = cell.get("regs")
            regs = f"{regs:5d}" if isinstance(regs, int) else f"{'?':>5}"
            print(
                f"{name:14} {label:11} {cell['ms']:8.3f} {rate:>14} {floor} {regs}"
                f" {check:>16} {_ratio(cell['ms'], c_ms)}"
            )
            floor = f"{'':9}"
    ratio_table(results)
    for line in notes:
        print(line)


def _geomean(values) -> float | None:
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def ratio_table(results: dict) -> None:
    """cujit/C, numba/C, cujit/numba, the coarsening gain (plain/cujit), the share of the
    copy ceiling cujit reaches, and cujit's variant, per kernel; geomeans over all and
    over the elementwise kernels (``results["geomean"]``)."""
    print(
        f"\n{'kernel':14} {'cujit/C':>8} {'numba/C':>8} {'cujit/numba':>12} {'gain':>6}"
        f" {'of copy':>8}  variant"
    )
    rows = []
    for name, row in results["kernels"].items():
        if isinstance(row, str):
            continue
        c_ms, cj, plain, nb = (
            _ms(row.get(k)) for k in ("cuda_c", "cujit", "cujit_plain", "numba_cuda")
        )
        floor = floor_ms(KERNELS[name], results)
        share = f"{floor / cj:8.0%}" if floor and cj and KERNELS[name].rate == "GB/s" else ""
        cell = row.get("cujit")
        variant = cell.get("variant", "") if isinstance(cell, dict) else ""
        print(
            f"{name:14} {_ratio(cj, c_ms):>8} {_ratio(nb, c_ms):>8} {_ratio(cj, nb):>12}"
            f" {_ratio(plain, cj):>6} {share:>8}  {one_line(variant)[:90]}"
        )
        ratios = [cj / c_ms if cj and c_ms else None, nb / c_ms if nb and c_ms else None]
        ratios.append(cj / nb if cj and nb else None)
        rows.append((KERNELS[name].elementwise, ratios))
    geo = {}
    for scope, keep in (("all", lambda e: True), ("elementwise", lambda e: e)):
        picked = [r for e, r in rows if keep(e)]
        geo[scope] = {
            key: _geomean([r[k] for r in picked])
            for k, key in enumerate(("cujit_over_c", "numba_over_c", "cujit_over_numba"))
        }
        geo[scope]["kernels"] = len(picked)
        g = geo[scope]
        print(
            f"{'geomean ' + scope[:6]:14} {_ratio(g['cujit_over_c'], 1.0):>8}"
            f" {_ratio(g['numba_over_c'], 1.0):>8} {_ratio(g['cujit_over_numba'], 1.0):>12}"
            f"  (over {g['kernels']} kernels)"
        )
    results["geomean"] = geo


def main(argv=None) -> None:  # noqa: C901 -- argument handling and one section per compiler measured; a bench driver read top to bottom
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated kernels to run, of: " + ", ".join(KERNELS) + " (default: all)",
    )
    opts = parser.parse_args(argv)
    names = [n for n in opts.only.split(",") if n] or list(KERNELS)
    unknown = [n for n in names if n not in KERNELS]
    if unknown:
        parser.error(f"unknown kernels {unknown}; kernels are {', '.join(KERNELS)}")

    results: dict = {
        "date": datetime.now(timezone.utc).isoformat(),
        "machine": platform.node(),
        "kernels_run": names,
        "method": {
            "warmup": WARMUP,
            "reps": REPS,
            "per_sample": PER_SAMPLE,
            "seed": SEED,
            "timer": "cuda.bindings events, stream 0",
        },
    }
    try:
        results["gpu"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except Exception:
        results["gpu"] = "unknown"

    impls: dict = {}
    for label in IMPLS:
        try:
            impls[label] = IMPL_CLASSES[label]()
        except Exception as exc:
            impls[label] = f"unavailable: {type(exc).__name__}: {exc}"[:200]
    results["versions"] = versions(impls)

    timer, sms = None, 132
    try:
        timer = EventTimer()
        sms = timer.attribute("MULTIPROCESSOR_COUNT")
        # fp32 peak: 128 FMA lanes per multiprocessor on sm_90, 2 flops each, top clock
        results["fp32_peak_GFLOP_per_s"] = (
            sms * FP32_LANES_PER_SM * 2 * timer.attribute("CLOCK_RATE") * 1e3 / 1e9
        )
    except Exception as exc:
        results["timer"] = f"unavailable: {type(exc).__name__}: {exc}"[:300]
    results["multiprocessors"] = sms
    l2 = 60 << 20
    try:
        l2 = timer.attribute("L2_CACHE_SIZE") if timer else l2
    except Exception:
        pass
    results["l2_bytes"] = l2
    try:
        results["copy_ceiling"] = timer.copy_rate() if timer else "unavailable: no timer"
    except Exception as exc:
        results["copy_ceiling"] = f"unavailable: {type(exc).__name__}: {exc}"[:300]

    results["kernels"] = {}
    for name in names:
        try:
            if timer is None:
                raise RuntimeError("no event timer")
            results["kernels"][name] = bench_kernel(KERNELS[name], impls, timer, sms, l2)
        except Exception as exc:  # one kernel's failure must not lose the others
            results["kernels"][name] = f"unavailable: {type(exc).__name__}: {exc}"[:300]
        print(f"[{name} done]", flush=True)

    # The PTX goes to its own file, not into the JSON.
    ptx = {}
    for name, row in results["kernels"].items():
        for label in IMPLS:
            cell = row.get(label) if isinstance(row, dict) else None
            if isinstance(cell, dict) and isinstance(cell.get("ptx"), str):
                if not cell["ptx"].startswith("unavailable"):
                    ptx[f"{name} {label}"] = cell.pop("ptx")

    print(
        f"\n{results['gpu']}  "
        + ", ".join(f"{k} {v}" for k, v in results["versions"].items() if k != "cujit_commit")
    )
    try:
        print_table(results)
    except Exception as exc:
        print(f"cannot print the table: {type(exc).__name__}: {exc}")

    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    path = os.path.join(HERE, "results", f"kernel_bench-{stamp}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(results, fh, indent=1, default=str)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, os.path.basename(path)), "w") as fh:
            json.dump(results, fh, indent=1, default=str)
        with open(os.path.join(out, f"kernel_bench_ptx-{stamp}.txt"), "w") as fh:
            for key, text in ptx.items():
                fh.write(f"//// {key}\n{text}\n")
    print("saved", path)


if __name__ == "__main__":
    main()
