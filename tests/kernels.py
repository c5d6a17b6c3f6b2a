"""The end-to-end kernel set: each case is a kernel, inputs, a launch shape and a
NumPy reference.  The same cases are compiled to cubins on every machine
(test_kernels_compile.py) and run on the GPU where there is one (test_kernels_gpu.py).

Inputs are fresh random values; outputs start poisoned (NaN or a sentinel) so an
element the kernel fails to write fails the comparison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from cujit import cuda, float32, int32, int64

POISON_INT = -77  # fits every signed type; unsigned outputs get 77


@dataclass
class Case:
    name: str
    kernel: object
    setup: Callable  # rng -> (args, grid, block, shmem)
    reference: Callable  # args (host copies of the inputs) -> {arg index: expected}
    rtol: float = 1e-6  # relative norm tolerance for floats; ints compare exactly


CASES: list[Case] = []


def case(setup, reference, rtol=1e-6):
    def register(kernel):
        CASES.append(Case(kernel.__name__, kernel, setup, reference, rtol))
        return kernel

    return register


def check(case: Case, got: dict, expected: dict) -> None:
    """Compare a run's outputs with the reference: ints exactly; floats and complex by
    relative norm of the difference, equal values (infinities included) and NaN in the
    same places counting as agreeing; a NaN the reference lacks (an unwritten poisoned
    element) fails."""
    for idx, ref in expected.items():
        out = np.asarray(got[idx])
        ref = np.asarray(ref)
        assert out.shape == ref.shape, f"{case.name}: output {idx} shape"
        if out.dtype.kind in "fc" or ref.dtype.kind in "fc":
            assert not np.isnan(out).any() or np.isnan(ref).any(), f"{case.name}: unwritten"
            o = out.astype(np.complex128)
            r = ref.astype(np.complex128)
            agree = (np.isnan(o) & np.isnan(r)) | (o == r)
            diff = np.where(agree, 0, o - np.where(agree, 0, r))
            scale = np.linalg.norm(np.where(np.isfinite(r), r, 0))
            err = np.linalg.norm(diff) / max(scale, 1e-300)
            assert err < case.rtol, f"{case.name}: output {idx} relative error {err:.3e}"
        else:
            np.testing.assert_array_equal(out, ref.astype(out.dtype), err_msg=case.name)


_cpu_kernels: dict = {}


def run_case(case: Case, where: str, target: str, rng, compare=None) -> None:
    """Run ``case`` on ``target`` ("cpu" or "cuda") with host or device arrays (``where``)
    and check its outputs against the reference (with ``compare``, default ``check``)."""
    from cujit.targets.cpu import memory as cpu_memory

    if target == "cuda":
        kernel, to_device, synchronize = case.kernel, cuda.to_device, cuda.synchronize
    else:
        kernel = _cpu_kernels.get(id(case))
        if kernel is None:
            kernel = _cpu_kernels[id(case)] = cuda.jit(case.kernel.py_func, target="cpu")
        to_device, synchronize = cpu_memory.to_device, cpu_memory.synchronize
    args, grid, block, shmem = case.setup(rng)
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = case.reference(inputs)
    if where == "host":
        kernel[grid, block, 0, shmem](*args)
        got = {i: args[i] for i in expected}
    else:
        dargs = [to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        kernel[grid, block, 0, shmem](*dargs)
        synchronize()
        got = {i: dargs[i].copy_to_host() for i in expected}
    (compare or check)(case, got, expected)


def poison(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.full(shape, np.nan, dtype)
    if dtype.kind == "b":
        return np.zeros(shape, dtype)
    return np.full(shape, POISON_INT if dtype.kind == "i" else 77, dtype)


# -- 1-D basics ---------------------------------------------------------------


def _saxpy_setup(rng):
    n = 10_000
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    return [np.float32(2.5), x, y, poison(n, np.float32)], (n + 255) // 256, 256, 0


@case(_saxpy_setup, lambda a: {3: a[0] * a[1].astype(np.float64) + a[2]})
@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


@case(_saxpy_setup, lambda a: {3: a[0] * a[1].astype(np.float64) + a[2]})
@cuda.jit("void(float32, float32[::1], float32[::1], float32[::1])")
def saxpy_eager(a, x, y, out):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < len(x):
        out[i] = a * x[i] + y[i]


def _pyint_setup(rng):
    n = 4096
    a = rng.integers(-1000, 1000, n).astype(np.int64)
    b = rng.integers(-50, 50, n).astype(np.int64)
    b[b == 0] = 7
    s = rng.integers(0, 20, n).astype(np.int64)
    return [a, b, s, poison((6, n), np.int64)], 16, 256, 0


def _pyint_ref(a):
    x, y, s = a[0], a[1], a[2]
    return {3: np.stack([x // y, x % y, x << s, x >> s, -x // 3, (x * 1_000_003) % 97])}


@case(_pyint_setup, _pyint_ref)
@cuda.jit
def python_int_semantics(x, y, s, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[0, i] = x[i] // y[i]
        out[1, i] = x[i] % y[i]
        out[2, i] = x[i] << s[i]
        out[3, i] = x[i] >> s[i]
        out[4, i] = -x[i] // 3
        out[5, i] = (x[i] * 1_000_003) % 97


def _pyfloat_setup(rng):
    n = 2048
    a = (rng.standard_normal(n) * 10).astype(np.float64)
    b = (rng.standard_normal(n) * 3).astype(np.float64)
    return [a, b, poison((3, n), np.float64)], 8, 256, 0


@case(_pyfloat_setup, lambda a: {2: np.stack([a[0] // a[1], a[0] % a[1], a[0] / a[1]])}, rtol=1e-12)
@cuda.jit
def python_float_floor(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = x[i] // y[i]
        out[1, i] = x[i] % y[i]
        out[2, i] = x[i] / y[i]


def _wrap_setup(rng):
    n = 512
    a = rng.integers(-128, 128, n).astype(np.int8)
    b = rng.integers(0, 2**31, n).astype(np.uint32)
    return [a, b, poison(n, np.int8), poison(n, np.uint32)], 2, 256, 0


@case(
    _wrap_setup,
    lambda a: {
        2: (a[0].astype(np.int64) * 3 + 100).astype(np.int8),
        3: (a[1].astype(np.uint64) * 5 + 3).astype(np.uint32),
    },
)
@cuda.jit
def integer_wraparound(a, b, out_a, out_b):
    i = cuda.grid(1)
    if i < a.size:
        out_a[i] = a[i] * 3 + 100
        out_b[i] = b[i] * 5 + 3


# -- control flow ---------------------------------------------------------------


def _loops_setup(rng):
    n = 1000
    x = rng.integers(1, 60, n).astype(np.int32)
    return [x, poison((4, n), np.int64)], 4, 256, 0


def _loops_ref(a):
    x = a[0]
    out = np.zeros((4, x.size), np.int64)
    for i, v in enumerate(x.tolist()):
        total = 0
        for k in range(v):  # break at the first multiple of 7 past 10
            if k > 10 and k % 7 == 0:
                break
            if k % 3 == 0:
                continue
            total += k
        out[0, i] = total
        steps, n = 0, v
        while n != 1 and steps < 1000:  # Collatz
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        out[1, i] = steps
        out[2, i] = sum(range(v, 0, -3))
        out[3, i] = sum(k * j for k in range(2, v, 5) for j in range(k))
    return {1: out}


@case(_loops_setup, _loops_ref)
@cuda.jit
def loops_break_continue(x, out):
    i = cuda.grid(1)
    if i >= x.size:
        return
    v = x[i]
    total = 0
    for k in range(v):
        if k > 10 and k % 7 == 0:
            break
        if k % 3 == 0:
            continue
        total += k
    out[0, i] = total
    steps = 0
    n = v
    while n != 1 and steps < 1000:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    out[1, i] = steps
    acc = 0
    for k in range(v, 0, -3):
        acc += k
    out[2, i] = acc
    acc = 0
    for k in range(2, v, 5):
        for j in range(k):
            acc += k * j
    out[3, i] = acc


def _logic_setup(rng):
    n = 700
    a = rng.standard_normal(n)
    b = rng.standard_normal(n)
    return [a, b, poison((3, n), np.int32)], 3, 256, 0


def _logic_ref(a):
    x, y = a[0], a[1]
    r0 = np.where((x > 0) & ~(y > 0) | (x < -1), 1, 0)
    r1 = np.where((-0.5 < x) & (x < 0.5) & (y > x), 2, 3)
    r2 = np.where(np.abs(x) > np.abs(y), 10, -10)
    return {2: np.stack([r0, r1, r2]).astype(np.int32)}


@case(_logic_setup, _logic_ref)
@cuda.jit
def logic_and_chains(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        a = x[i]
        b = y[i]
        out[0, i] = 1 if (a > 0 and not b > 0) or a < -1 else 0
        if -0.5 < a < 0.5 and b > a:
            out[1, i] = 2
        else:
            out[1, i] = 3
        out[2, i] = 10 if abs(a) > abs(b) else -10


# -- multi-dimensional grids and layouts ---------------------------------------


def _grid2_setup(rng):
    a = rng.standard_normal((37, 70))
    return [a, poison((37, 70), np.float64)], (3, 5), (16, 16), 0


@case(
    _grid2_setup,
    lambda a: {1: a[0] * 2 + np.arange(70)[None, :] - np.arange(37)[:, None]},
    rtol=1e-12,
)
@cuda.jit
def grid_2d(a, out):
    i, j = cuda.grid(2)
    n, m = a.shape
    if i < n and j < m:
        out[i, j] = a[i, j] * 2 + j - i


def _grid3_setup(rng):
    a = rng.standard_normal((9, 10, 11)).astype(np.float32)
    return [a, poison((9, 10, 11), np.float32)], (2, 2, 3), (8, 8, 4), 0


def _grid3_ref(a):
    idx = np.indices(a[0].shape)
    return {1: a[0] + idx[0] * 100 + idx[1] * 10 + idx[2]}


@case(_grid3_setup, _grid3_ref)
@cuda.jit
def grid_3d(a, out):
    i, j, k = cuda.grid(3)
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        out[i, j, k] = a[i, j, k] + float32(i * 100 + j * 10 + k)


def _layouts_setup(rng):
    c = rng.standard_normal((20, 30))
    f = np.asfortranarray(rng.standard_normal((20, 30)))
    s = rng.standard_normal((40, 90))[::2, ::3]
    return [c, f, s, poison((20, 30), np.float64)], 1, (32, 32), 0


@case(_layouts_setup, lambda a: {3: a[0] + 2 * a[1] + 3 * a[2] + a[0][-1, -1]}, rtol=1e-12)
@cuda.jit
def layouts_c_f_strided(c, f, s, out):
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = c[i, j] + 2 * f[i, j] + 3 * s[i, j] + c[-1, -1]


def _negidx_setup(rng):
    x = rng.standard_normal(300)
    return [x, poison(300, np.float64)], 2, 256, 0


@case(_negidx_setup, lambda a: {1: a[0][::-1] * a[0].ndim}, rtol=1e-12)
@cuda.jit
def negative_index_reverse(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[-1 - i] * x.ndim


# -- memory: shared, local, atomics -----------------------------------------------

TILE = 16


def _matmul_setup(rng):
    n, k, m = 70, 50, 90
    a = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal((k, m)).astype(np.float32)
    grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)
    return [a, b, poison((n, m), np.float32)], grid, (TILE, TILE), 0


@case(_matmul_setup, lambda a: {2: a[0].astype(np.float64) @ a[1]}, rtol=1e-5)
@cuda.jit
def matmul_shared_tiles(a, b, c):
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array(shape=(TILE, TILE), dtype=float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.x * TILE + tx
    col = cuda.blockIdx.y * TILE + ty
    acc = float32(0.0)
    for t in range((a.shape[1] + TILE - 1) // TILE):
        k = t * TILE + ty
        sa[tx, ty] = a[row, k] if row < a.shape[0] and k < a.shape[1] else float32(0)
        k = t * TILE + tx
        sb[tx, ty] = b[k, col] if k < b.shape[0] and col < b.shape[1] else float32(0)
        cuda.syncthreads()
        for kk in range(TILE):
            acc += sa[tx, kk] * sb[kk, ty]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


def _reduce_setup(rng):
    # 20 blocks of 256 threads: every thread strides 3 or 4 times, every block adds its
    # sum atomically (plain Python runs a block's threads one handover at a time).
    x = rng.standard_normal(20_000).astype(np.float32)
    return [x, np.zeros(1, np.float32)], 20, 256, 0


@case(_reduce_setup, lambda a: {1: np.array([a[0].astype(np.float64).sum()])}, rtol=1e-4)
@cuda.jit
def reduce_shared_atomic(x, total):
    buf = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    acc = float32(0)
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


def _dyn_setup(rng):
    x = rng.standard_normal(1024)
    return [x, poison(1024, np.float64)], 4, 256, 256 * 8


@case(_dyn_setup, lambda a: {1: a[0].reshape(4, 256)[:, ::-1].reshape(-1)}, rtol=1e-12)
@cuda.jit
def dynamic_shared_reverse(x, out):
    buf = cuda.shared.array(0, dtype=np.float64)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * cuda.blockDim.x
    buf[t] = x[base + t]
    cuda.syncthreads()
    out[base + t] = buf[cuda.blockDim.x - 1 - t]


BINS = 32


def _hist_setup(rng):
    x = rng.integers(0, 10_000, 50_000).astype(np.int32)
    return [x, np.zeros(BINS, np.int32), np.zeros(BINS, np.int64)], 64, 128, 0


def _hist_ref(a):
    h = np.bincount(a[0] % BINS, minlength=BINS)
    return {1: h.astype(np.int32), 2: h.astype(np.int64) * 2}


@case(_hist_setup, _hist_ref)
@cuda.jit
def histogram_atomics(x, hist32, hist64):
    start = cuda.grid(1)
    for i in range(start, x.shape[0], cuda.gridsize(1)):
        b = x[i] % BINS
        cuda.atomic.add(hist32, b, 1)
        cuda.atomic.add(hist64, b, 2)


def _stencil_setup(rng):
    u = rng.standard_normal((50, 60))
    return [u, poison((50, 60), np.float64)], (4, 4), (16, 16), 0


def _stencil_ref(a):
    u = a[0]
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return {1: out}


@case(_stencil_setup, _stencil_ref, rtol=1e-12)
@cuda.jit
def stencil_boundaries(u, out):
    i, j = cuda.grid(2)
    n = u.shape[0]
    m = u.shape[1]
    if i >= n or j >= m:
        return
    if i == 0 or j == 0 or i == n - 1 or j == m - 1:
        out[i, j] = u[i, j]
    elif i > 0:
        out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


def _local_setup(rng):
    x = rng.standard_normal((500, 8))
    return [x, poison(500, np.float64)], 2, 256, 0


def _local_ref(a):
    s = np.sort(a[0], axis=1)
    return {1: s[:, -1] - s[:, 0] + s[:, 3]}


@case(_local_setup, _local_ref, rtol=1e-12)
@cuda.jit
def local_array_sort(x, out):
    i = cuda.grid(1)
    if i >= x.shape[0]:
        return
    tmp = cuda.local.array(8, np.float64)
    for k in range(8):
        tmp[k] = x[i, k]
    for a in range(1, 8):  # insertion sort
        v = tmp[a]
        b = a - 1
        while b >= 0 and tmp[b] > v:
            tmp[b + 1] = tmp[b]
            b -= 1
        tmp[b + 1] = v
    out[i] = tmp[7] - tmp[0] + tmp[3]


# -- math, casts, constants -------------------------------------------------------

SCALE = 0.5
OFFSET = np.float32(1.25)


def _math_setup(rng):
    x = rng.uniform(0.1, 0.9, 1000)
    return [x, poison((12, 1000), np.float64)], 4, 256, 0


def _math_ref(a):
    x = a[0]
    return {
        1: np.stack(
            [
                np.sqrt(x),
                np.exp(x),
                np.log(x),
                np.sin(x) * np.cos(x),
                np.tan(x),
                np.arcsin(x),
                np.arctan2(x, 0.3),
                np.tanh(x),
                np.power(x, 1.5),
                np.hypot(x, 2.0),
                np.floor(x * 10) + np.ceil(x * 10),
                np.full_like(x, math.pi * SCALE + 1.25),
            ]
        )
    }


@case(_math_setup, _math_ref, rtol=1e-12)
@cuda.jit
def math_functions(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[0, i] = math.sqrt(v)
        out[1, i] = math.exp(v)
        out[2, i] = math.log(v)
        out[3, i] = math.sin(v) * math.cos(v)
        out[4, i] = math.tan(v)
        out[5, i] = math.asin(v)
        out[6, i] = math.atan2(v, 0.3)
        out[7, i] = math.tanh(v)
        out[8, i] = v**1.5
        out[9, i] = math.hypot(v, 2.0)
        out[10, i] = math.floor(v * 10) + math.ceil(v * 10)
        out[11, i] = math.pi * SCALE + OFFSET


def _casts_setup(rng):
    x = (rng.standard_normal(600) * 100).astype(np.float32)
    return [x, poison((5, 600), np.int32), poison(600, np.float32)], 3, 256, 0


def _casts_ref(a):
    x = a[0]
    r = np.stack(
        [
            x.astype(np.int64),
            np.minimum(x, 3.0).astype(np.int64),
            np.maximum(x.astype(np.int64), -5),
            np.abs(x.astype(np.int64)),
            (x > 0).astype(np.int64),
        ]
    )
    return {1: r.astype(np.int32), 2: (x * np.float32(0.5)) + np.float32(1)}


@case(_casts_setup, _casts_ref)
@cuda.jit
def casts_min_max(x, out, outf):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[0, i] = int(v)
        out[1, i] = int32(min(v, float32(3.0)))
        out[2, i] = max(int(v), -5)
        out[3, i] = abs(int64(v))
        out[4, i] = int(bool(v > 0))
        outf[i] = v * float32(0.5) + float32(1)


def make_closure_kernel(factor):
    @cuda.jit
    def scale_by_closure(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * factor

    return scale_by_closure


def _closure_setup(rng):
    x = rng.standard_normal(256)
    return [x, poison(256, np.float64)], 1, 256, 0


CASES.append(
    Case(
        "closure_constant",
        make_closure_kernel(3.5),
        _closure_setup,
        lambda a: {1: a[0] * 3.5},
        1e-12,
    )
)


def _swap_setup(rng):
    x = rng.standard_normal(256)
    y = rng.standard_normal(256)
    return [x, y, poison((2, 256), np.float64)], 1, 256, 0


@case(
    _swap_setup,
    lambda a: {2: np.stack([np.maximum(a[0], a[1]), np.minimum(a[0], a[1])])},
    rtol=1e-12,
)
@cuda.jit
def tuple_swap(x, y, out):
    i = cuda.grid(1)
    a, b = x[i], y[i]
    if a < b:
        a, b = b, a
    pair = (a, b)
    out[0, i] = pair[0]
    out[1, i] = pair[-1]


def _bool_setup(rng):
    x = rng.standard_normal(300)
    return [x, np.zeros(300, np.bool_), poison(300, np.uint16)], 2, 256, 0


@case(_bool_setup, lambda a: {1: a[0] > 0, 2: np.where(a[0] > 0, 7, 9).astype(np.uint16)})
@cuda.jit
def bool_and_unsigned(x, flags, out):
    i = cuda.grid(1)
    if i < x.size:
        flags[i] = x[i] > 0
        out[i] = 7 if flags[i] else 9
