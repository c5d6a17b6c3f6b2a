"""A conformance suite of numba.cuda programs as numba's users write them: the examples
of numba-cuda's documentation and common idioms, each re-typed with only the import
changed (``from cujit import cuda``), run on the CPU target everywhere and on the GPU
where there is one (marked ``gpu``), and checked against NumPy or a plain-Python model.

Each example is written the way its source writes it: a bare ``@cuda.jit`` and the
host API of ``cuda`` (``to_device``, ``device_array_like``, ``copy_to_host``...).  The
``target`` fixture picks the target through ``CUJIT_TARGET`` and makes ``cujit.cuda``
resolve its host names again (it keeps the first ones it resolves), so the same code
runs on either target.  Outputs start filled with a poison value; floats compare by
relative norm (float32 below 1e-5, float64 below 1e-12), integers exactly.

Not covered, as cujit does not provide them (docs/numba-api.md): ``cuda.reduce`` (the
Monte Carlo example sums on the host instead), ``cuda.vectorize``,
``cuda.guvectorize``, ``cuda.declare_device`` (the FFI examples), CuPy arrays (the
documentation's examples use them; NumPy and cujit device arrays stand in here).
"""

from __future__ import annotations

import cmath
import math
from math import pi

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import _CPU_NAMES
from cujit.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32
from cujit.types import float32, int32

# numba.cuda's host names that cujit.cuda resolves per target (its ``_CPU_NAMES``).
_TARGET_NAMES = tuple(_CPU_NAMES)  # the names whose home depends on CUJIT_TARGET


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def target(request, monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", request.param)
    namespace = vars(cuda)
    for name in _TARGET_NAMES:
        monkeypatch.delitem(namespace, name, raising=False)
    return request.param


# -- checking ----------------------------------------------------------------------

def poisoned(shape, dtype):
    """A host array filled with a value no kernel here writes."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.full(shape, np.nan, dtype)
    if dtype.kind == "b":
        return np.ones(shape, dtype)
    return np.full(shape, np.iinfo(dtype).max, dtype)


def assert_matches(got, expected):
    got = np.asarray(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if got.dtype.kind in "fc":
        assert np.all(np.isfinite(got)), "poison left in the output"
        tol = 1e-5 if got.dtype in (np.float32, np.complex64) else 1e-12
        scale = np.linalg.norm(expected.ravel())
        err = np.linalg.norm((got - expected).ravel()) / (scale if scale else 1.0)
        assert err < tol, f"relative error {err:.3g} (tolerance {tol:g})"
    else:
        np.testing.assert_array_equal(got, expected)


def rng():
    return np.random.default_rng(20240611)


# -- 1. Vector addition (numba-cuda docs, examples: "Vector Addition";
#       numba/cuda/tests/doc_examples/test_vecadd.py) ------------------------------

def test_vecadd(target):
    @cuda.jit
    def f(a, b, c):
        tid = cuda.grid(1)  # threadIdx.x + blockIdx.x * blockDim.x
        size = len(c)
        if tid < size:
            c[tid] = a[tid] + b[tid]

    assert f.target == target
    r = rng()
    n = 100000
    a = cuda.to_device(r.random(n))
    b = cuda.to_device(r.random(n))
    c = cuda.to_device(poisoned(n, np.float64))
    f.forall(len(a))(a, b, c)
    assert_matches(c.copy_to_host(), a.copy_to_host() + b.copy_to_host())

    c = cuda.device_array_like(a)
    nthreads = 256
    nblocks = (len(a) // nthreads) + 1
    f[nblocks, nthreads](a, b, c)
    cuda.synchronize()
    assert_matches(c.copy_to_host(), a.copy_to_host() + b.copy_to_host())


# -- 2. increment_by_one (numba-cuda docs, "Writing CUDA Kernels": thread positioning,
#       the explicit form and the cuda.grid form) -----------------------------------

def test_increment_by_one(target):
    @cuda.jit
    def increment_by_one(an_array):
        tx = cuda.threadIdx.x  # thread id in a 1D block
        ty = cuda.blockIdx.x  # block id in a 1D grid
        bw = cuda.blockDim.x  # block width: threads per block
        pos = tx + ty * bw
        if pos < an_array.size:
            an_array[pos] += 1

    @cuda.jit
    def increment_by_one_grid(an_array):
        pos = cuda.grid(1)
        if pos < an_array.size:
            an_array[pos] += 1

    an_array = rng().integers(-1000, 1000, 1000).astype(np.int32)
    expected = an_array + 2
    threadsperblock = 32
    blockspergrid = (an_array.size + (threadsperblock - 1)) // threadsperblock
    increment_by_one[blockspergrid, threadsperblock](an_array)  # a host array: copied back
    increment_by_one_grid[blockspergrid, threadsperblock](an_array)
    assert_matches(an_array, expected)


# -- 3. increment_a_2D_array (numba-cuda docs, "Writing CUDA Kernels":
#       multi-dimensional blocks and grids) ------------------------------------------

def test_increment_a_2d_array(target):
    @cuda.jit
    def increment_a_2D_array(an_array):
        x, y = cuda.grid(2)
        if x < an_array.shape[0] and y < an_array.shape[1]:
            an_array[x, y] += 1

    host = rng().standard_normal((100, 75))
    d = cuda.to_device(host)
    threadsperblock = (16, 16)
    blockspergrid_x = math.ceil(host.shape[0] / threadsperblock[0])
    blockspergrid_y = math.ceil(host.shape[1] / threadsperblock[1])
    blockspergrid = (blockspergrid_x, blockspergrid_y)
    increment_a_2D_array[blockspergrid, threadsperblock](d)
    assert_matches(d.copy_to_host(), host + 1)


# -- 4./5. Matrix multiplication, naive and with shared memory (numba-cuda docs,
#       examples: "Matrix multiplication"; doc_examples/test_matmul.py) ------------

def test_matmul_naive(target):
    @cuda.jit
    def matmul(A, B, C):
        """Square matrix multiplication C = A * B."""
        i, j = cuda.grid(2)
        if i < C.shape[0] and j < C.shape[1]:
            tmp = 0.0
            for k in range(A.shape[1]):
                tmp += A[i, k] * B[k, j]
            C[i, j] = tmp

    r = rng()
    x_h = r.integers(0, 16, (40, 40))  # int64 times float64, as the example mixes them
    y_h = r.standard_normal((40, 40))
    z_h = poisoned((40, 40), np.float64)
    x_d, y_d, z_d = cuda.to_device(x_h), cuda.to_device(y_h), cuda.to_device(z_h)
    threadsperblock = (16, 16)
    blockspergrid = (math.ceil(z_h.shape[0] / threadsperblock[0]),
                     math.ceil(z_h.shape[1] / threadsperblock[1]))
    matmul[blockspergrid, threadsperblock](x_d, y_d, z_d)
    assert_matches(z_d.copy_to_host(), x_h @ y_h)


TPB = 16  # the tile of fast_matmul: threads per block in each dimension


def test_matmul_shared_memory(target):
    @cuda.jit
    def fast_matmul(A, B, C):
        sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
        sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
        x, y = cuda.grid(2)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bpg = cuda.gridDim.x  # blocks per grid
        tmp = float32(0.0)
        for i in range(bpg):
            sA[ty, tx] = 0
            sB[ty, tx] = 0
            if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
                sA[ty, tx] = A[y, tx + i * TPB]
            if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
                sB[ty, tx] = B[ty + i * TPB, x]
            cuda.syncthreads()
            for j in range(TPB):
                tmp += sA[ty, j] * sB[j, tx]
            cuda.syncthreads()
        if y < C.shape[0] and x < C.shape[1]:
            C[y, x] = tmp

    # The documentation's square case: exact in float32.
    x_h = np.arange(16).reshape([4, 4])
    y_h = np.ones([4, 4])
    z_h = poisoned([4, 4], np.float64)
    threadsperblock = (TPB, TPB)
    blockspergrid = (math.ceil(z_h.shape[0] / TPB), math.ceil(z_h.shape[1] / TPB))
    fast_matmul[blockspergrid, threadsperblock](x_h, y_h, z_h)
    assert_matches(z_h, x_h @ y_h)

    # Its non-square case, with random float32 data.
    r = rng()
    x_h = r.standard_normal((37, 53)).astype(np.float32)
    y_h = r.standard_normal((53, 29)).astype(np.float32)
    z_d = cuda.to_device(poisoned((37, 29), np.float32))
    grid_y_max = max(x_h.shape[0], y_h.shape[0])
    grid_x_max = max(x_h.shape[1], y_h.shape[1])
    blockspergrid = (math.ceil(grid_x_max / TPB), math.ceil(grid_y_max / TPB))
    fast_matmul[blockspergrid, threadsperblock](cuda.to_device(x_h), cuda.to_device(y_h), z_d)
    expected = (x_h.astype(np.float64) @ y_h.astype(np.float64)).astype(np.float32)
    assert_matches(z_d.copy_to_host(), expected)


# -- 6. Shared-memory reduction (numba-cuda docs, examples: "Summing a vector";
#       doc_examples/test_reduction.py) ----------------------------------------------

def test_array_sum_reduction(target):
    host = rng().integers(-1000, 1000, 1024)
    a = cuda.to_device(host)
    nelem = len(a)

    @cuda.jit
    def array_sum(data):
        tid = cuda.threadIdx.x
        size = len(data)
        if tid < size:
            i = cuda.grid(1)
            shr = cuda.shared.array(nelem, int32)  # sized by a closure variable
            shr[tid] = data[i]
            cuda.syncthreads()
            s = 1
            while s < cuda.blockDim.x:
                if tid % (2 * s) == 0:
                    shr[tid] += shr[tid + s]
                s *= 2
                cuda.syncthreads()
            if tid == 0:
                data[tid] = shr[tid]

    array_sum[1, nelem](a)
    got = a.copy_to_host()
    assert got[0] == host.sum()
    assert_matches(got[1:], host[1:])


# -- 7. Dynamic shared memory (numba-cuda docs, "Memory management": dynamic shared
#       memory, sized by the launch's fourth item) -----------------------------------

def test_dynamic_shared_memory_block_sums(target):
    @cuda.jit
    def block_sums(x, out):
        buf = cuda.shared.array(0, dtype=np.float32)
        tid = cuda.threadIdx.x
        i = cuda.grid(1)
        buf[tid] = x[i] if i < x.size else 0
        cuda.syncthreads()
        step = cuda.blockDim.x // 2
        while step > 0:
            if tid < step:
                buf[tid] += buf[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            out[cuda.blockIdx.x] = buf[0]

    @cuda.jit
    def aliasing(f_out, i_out):
        f32_arr = cuda.shared.array(0, dtype=np.float32)
        i32_arr = cuda.shared.array(0, dtype=np.int32)  # the same bytes
        f32_arr[0] = 3.14
        cuda.syncthreads()
        f_out[0] = f32_arr[0]
        i_out[0] = i32_arr[0]

    x = rng().standard_normal(1000).astype(np.float32)
    tpb = 128
    blocks = (x.size + tpb - 1) // tpb
    out = cuda.to_device(poisoned(blocks, np.float32))
    block_sums[blocks, tpb, 0, tpb * x.itemsize](cuda.to_device(x), out)
    padded = np.zeros(blocks * tpb, np.float32)
    padded[:x.size] = x
    assert_matches(out.copy_to_host(), padded.reshape(blocks, tpb).astype(np.float64)
                   .sum(axis=1).astype(np.float32))

    f_out, i_out = poisoned(1, np.float32), poisoned(1, np.int32)
    aliasing[1, 1, 0, 4](f_out, i_out)
    assert f_out[0] == np.float32(3.14)
    assert i_out[0] == np.float32(3.14).view(np.int32)


# -- 8. Heat equation with a grid-wide barrier (numba-cuda docs, examples:
#       "Cooperative groups: Laplace"; doc_examples/test_laplace.py) -----------------

def test_laplace_grid_sync(target):
    size = 1001  # odd, so there is a middle element
    data = np.zeros(size)
    data[500] = 10000
    buf_0 = cuda.to_device(data)
    buf_1 = cuda.device_array_like(buf_0)
    niter = 200  # the documentation runs 10000

    @cuda.jit
    def solve_heat_equation(buf_0, buf_1, timesteps, k):
        i = cuda.grid(1)
        if i >= len(buf_0):
            return
        grid = cuda.cg.this_grid()
        for step in range(timesteps):
            if (step % 2) == 0:
                data = buf_0
                next_data = buf_1
            else:
                data = buf_1
                next_data = buf_0
            curr_temp = data[i]
            if i == 0:
                next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
            elif i == len(data) - 1:
                next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
            else:
                next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp) + data[i + 1])
            next_data[i] = next_temp
            grid.sync()

    solve_heat_equation.forall(len(data))(buf_0, buf_1, niter, 0.25)

    bufs = [data.copy(), np.zeros(size)]
    k = 0.25
    for step in range(niter):
        cur, nxt = bufs[step % 2], bufs[1 - step % 2]
        left = np.concatenate([[0.0], cur[:-1]])
        right = np.concatenate([cur[1:], [0.0]])
        nxt[:] = cur + k * (left - 2 * cur + right)
    assert_matches(buf_0.copy_to_host(), bufs[0])
    assert_matches(buf_1.copy_to_host(), bufs[1])
    np.testing.assert_allclose(buf_0.copy_to_host().sum(), 10000)


# -- 9. Click-stream sessionization (numba-cuda docs, examples: "Sessionization";
#       doc_examples/test_sessionize.py) -----------------------------------------------

def test_sessionize(target):
    session_timeout = np.int64(np.timedelta64("3600", "s"))
    ids = np.array([1] * 6 + [2] * 3 + [3] * 10 + [4] * 9)
    sec = np.array([1, 2, 3, 5000, 5001, 5002, 1, 2, 3, 1, 2, 5000, 5001, 10000, 10001,
                    10002, 10003, 15000, 150001, 1, 5000, 50001, 15000, 20000, 25000,
                    25001, 25002, 25003], dtype="datetime64[ns]").astype("int64")
    results = cuda.to_device(np.zeros(len(ids)))  # the algorithm needs zeros

    @cuda.jit
    def sessionize(user_id, timestamp, results):
        gid = cuda.grid(1)
        size = len(user_id)
        if gid >= size:
            return
        is_first_datapoint = gid == 0
        if not is_first_datapoint:
            new_user = user_id[gid] != user_id[gid - 1]
            timed_out = timestamp[gid] - timestamp[gid - 1] > session_timeout
            is_sess_boundary = new_user or timed_out
        else:
            is_sess_boundary = True
        if is_sess_boundary:
            results[gid] = gid
            grid = cuda.cg.this_grid()
            grid.sync()
            look_ahead = 1
            while results[gid + look_ahead] == 0:
                results[gid + look_ahead] = gid
                look_ahead += 1
                if gid + look_ahead == size - 1:
                    results[gid + look_ahead] = gid
                    break

    sessionize.forall(len(ids))(cuda.to_device(ids), cuda.to_device(sec), results)

    expected, start = [], 0
    for g in range(len(ids)):  # plain Python: each row's session starts where?
        if g == 0 or ids[g] != ids[g - 1] or sec[g] - sec[g - 1] > session_timeout:
            start = g
        expected.append(start)
    assert_matches(results.copy_to_host(), np.array(expected, np.float64))


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
    expect = [business_logic.py_func(x, y, z) for x, y, z in
              zip(X.copy_to_host(), Y.copy_to_host(), Z.copy_to_host())]
    assert_matches(results.copy_to_host(), np.array(expect))


# -- 11. Monte Carlo integration (numba-cuda docs, examples: "Monte Carlo
#        Integration"; doc_examples/test_montecarlo.py).  cuda.reduce is not
#        provided: the samples are summed on the host. --------------------------------

def _xoroshiro_uniform_float32(state):
    """Plain-Python xoroshiro128+ (numba's): the next float32 uniform of ``state``
    (a two-item list of ints, advanced in place)."""
    mask = (1 << 64) - 1
    s0, s1 = state
    result = (s0 + s1) & mask
    s1 ^= s0
    state[0] = (((s0 << 55) | (s0 >> 9)) & mask) ^ s1 ^ ((s1 << 14) & mask)
    state[1] = ((s1 << 36) | (s1 >> 28)) & mask
    return np.float32((result >> 11) * (1.0 / (1 << 53)))


def test_montecarlo(target):
    nsamps = 100000

    @cuda.jit
    def mc_integrator_kernel(out, rng_states, lower_lim, upper_lim):
        size = len(out)
        gid = cuda.grid(1)
        if gid < size:
            samp = xoroshiro128p_uniform_float32(rng_states, gid)
            samp = samp * (upper_lim - lower_lim) + lower_lim
            y = func(samp)  # bound after the kernel is defined, as in the example
            out[gid] = y

    def mc_integrate(lower_lim, upper_lim, nsamps):
        out = cuda.to_device(poisoned(nsamps, np.float32))
        rng_states = create_xoroshiro128p_states(nsamps, seed=42)
        mc_integrator_kernel.forall(nsamps)(out, rng_states, lower_lim, upper_lim)
        factor = (upper_lim - lower_lim) / (nsamps - 1)
        return out, rng_states, out.copy_to_host().sum(dtype=np.float64) * factor

    @cuda.jit(device=True)
    def func(x):
        return 1.0 / x

    out, states, integral = mc_integrate(1, 2, nsamps)
    np.testing.assert_allclose(integral, math.log(2), atol=1e-3)
    _, _, integral = mc_integrate(2, 3, nsamps)
    np.testing.assert_allclose(integral, math.log(1.5), atol=1e-3)

    # Every sample against the plain-Python generator, for the first few hundred.
    host_states = create_xoroshiro128p_states(nsamps, seed=42).copy_to_host()
    m = 500
    expected = np.empty(m, np.float32)
    for gid in range(m):
        state = [int(host_states[gid, 0]), int(host_states[gid, 1])]
        samp = float(_xoroshiro_uniform_float32(state)) * (2 - 1) + 1  # float32 * int64
        expected[gid] = 1.0 / samp
    assert_matches(out.copy_to_host()[:m], expected)
    assert states.copy_to_host()[0, 0] != host_states[0, 0]  # the kernel advanced it


# -- 12. Random numbers on a 3-D grid (numba-cuda docs, "Random Number Generation":
#        a 3-D grid example; doc_examples/test_random.py) ---------------------------

def test_random_3d_grid(target):
    @cuda.jit
    def random_3d(arr, rng_states):
        startx, starty, startz = cuda.grid(3)
        stridex, stridey, stridez = cuda.gridsize(3)
        tid = (startz * stridey * stridex) + (starty * stridex) + startx
        for i in range(startz, arr.shape[0], stridez):
            for j in range(starty, arr.shape[1], stridey):
                for k in range(startx, arr.shape[2], stridex):
                    arr[i, j, k] = xoroshiro128p_uniform_float32(rng_states, tid)

    X, Y, Z = 19, 23, 17  # the documentation's are 701, 900, 719
    bx, by, bz = 4, 4, 2
    gx, gy, gz = 2, 2, 3
    nthreads = bx * by * bz * gx * gy * gz
    rng_states = create_xoroshiro128p_states(nthreads, seed=1)
    host_states = rng_states.copy_to_host()
    arr = cuda.to_device(poisoned((X, Y, Z), np.float32))
    random_3d[(gx, gy, gz), (bx, by, bz)](arr, rng_states)
    got = arr.copy_to_host()

    expected = np.empty((X, Y, Z), np.float32)
    sx, sy, sz = bx * gx, by * gy, bz * gz
    for startz in range(sz):
        for starty in range(sy):
            for startx in range(sx):
                tid = startz * sy * sx + starty * sx + startx
                state = [int(host_states[tid, 0]), int(host_states[tid, 1])]
                for i in range(startz, X, sz):
                    for j in range(starty, Y, sy):
                        for k in range(startx, Z, sx):
                            expected[i, j, k] = _xoroshiro_uniform_float32(state)
    assert_matches(got, expected)
    assert 0.45 < got.mean() < 0.55 and got.min() >= 0.0 and got.max() <= 1.0


# -- 13. Atomic max, 1-D and with a tuple index (numba-cuda docs, "Supported Atomic
#        Operations": example) ----------------------------------------------------------

def test_atomic_max(target):
    @cuda.jit
    def max_example(result, values):
        """The largest of values, in result[0]."""
        tid = cuda.threadIdx.x
        bid = cuda.blockIdx.x
        bdim = cuda.blockDim.x
        i = (bid * bdim) + tid
        cuda.atomic.max(result, 0, values[i])

    @cuda.jit
    def max_example_3d(result, values):
        i, j, k = cuda.grid(3)
        cuda.atomic.max(result, (0, 1, 2), values[i, j, k])

    r = rng()
    arr = r.random(16384)
    result = np.zeros(1, dtype=np.float64)
    max_example[256, 64](result, arr)
    assert result[0] == arr.max()

    arr = r.random(1000).reshape(10, 10, 10)
    result = np.zeros((3, 3, 3), dtype=np.float64)
    max_example_3d[(2, 2, 2), (5, 5, 5)](result, arr)
    expected = np.zeros((3, 3, 3))
    expected[0, 1, 2] = arr.max()
    assert_matches(result, expected)


# -- 14. Globals are captured at compile time (numba-cuda docs, "Global variables";
#        doc_examples/test_globals.py) ----------------------------------------------

def test_globals_constant_capture(target):
    TAX_RATE = 0.08
    PRICES = np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float64)

    @cuda.jit
    def compute_totals(quantities, totals):
        i = cuda.grid(1)
        if i < totals.size:
            totals[i] = quantities[i] * PRICES[i] * (1 + TAX_RATE)

    d_quantities = cuda.to_device(np.array([1, 2, 3, 4, 5], dtype=np.float64))
    d_totals = cuda.to_device(poisoned(5, np.float64))
    compute_totals[1, 32](d_quantities, d_totals)
    expected = np.array([10.8, 54.0, 16.2, 64.8, 162.0])
    assert_matches(d_totals.copy_to_host(), expected)

    TAX_RATE = 0.10  # no effect: the kernel holds the values it was compiled with
    PRICES[:] = [20.0, 50.0, 10.0, 30.0, 60.0]
    compute_totals[1, 32](d_quantities, d_totals)
    assert_matches(d_totals.copy_to_host(), expected)


def test_globals_device_array_capture(target):
    # A global device array is captured by reference: the kernel sees later writes.
    PRICES = cuda.to_device(np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float32))

    @cuda.jit
    def compute_totals(quantities, totals):
        i = cuda.grid(1)
        if i < totals.size:
            totals[i] = quantities[i] * PRICES[i]

    d_quantities = cuda.to_device(np.ones(5, dtype=np.float32))
    d_totals = cuda.to_device(poisoned(5, np.float32))
    compute_totals[1, 32](d_quantities, d_totals)
    assert_matches(d_totals.copy_to_host(), np.array([10, 25, 5, 15, 30], np.float32))
    PRICES.copy_to_device(np.array([20.0, 50.0, 10.0, 30.0, 60.0], dtype=np.float32))
    compute_totals[1, 32](d_quantities, d_totals)
    assert_matches(d_totals.copy_to_host(), np.array([20, 50, 10, 30, 60], np.float32))


# -- 15. A NumPy ufunc called on arrays inside a kernel (numba-cuda docs, "Calling
#        ufuncs in kernels"; doc_examples/test_ufunc.py) ------------------------------

def test_ufunc_on_arrays_in_kernel(target):
    @cuda.jit
    def f(r, x):
        np.sin(x, r)  # sin(x), written to r

    x = np.arange(10, dtype=np.float32) - 5
    r = poisoned(10, np.float32)
    f[1, 1](r, x)
    assert_matches(r, np.sin(x))


# -- 16. Grid synchronisation over rows (numba-cuda docs, "Cooperative Groups":
#        grid sync; doc_examples/test_cg.py): an eager signature, the overload's
#        max_cooperative_grid_blocks ------------------------------------------------

def test_cg_sequential_rows(target):
    sig = (int32[:, ::1],)

    @cuda.jit(sig)
    def sequential_rows(M):
        col = cuda.grid(1)
        g = cuda.cg.this_grid()
        rows = M.shape[0]
        cols = M.shape[1]
        for row in range(1, rows):
            opposite = cols - col - 1
            M[row, col] = M[row - 1, opposite] + 1
            g.sync()

    A = np.zeros((256, 256), dtype=np.int32)  # the documentation's is 1024 x 1024
    blockdim = 32
    griddim = A.shape[1] // blockdim
    mb = sequential_rows.overloads[sig].max_cooperative_grid_blocks(blockdim)
    assert mb >= griddim
    sequential_rows[griddim, blockdim](A)
    reference = np.tile(np.arange(256), (256, 1)).T
    assert_matches(A, reference)


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
    ret_val = (RSQRT2PI * math.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


def cnd_numpy(d):
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret_val = (RSQRT2PI * np.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
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
        expRT = math.exp((-1. * R) * T[i])
        callResult[i] = (S[i] * cndd1 - X[i] * expRT * cndd2)
        putResult[i] = (X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1))

    r = rng()
    n = 4000
    S = r.uniform(5.0, 30.0, n)
    X = r.uniform(1.0, 100.0, n)
    T = r.uniform(0.25, 10.0, n)
    blockdim = 1024, 1
    griddim = math.ceil(n / blockdim[0]), 1
    d_call = cuda.to_device(poisoned(n, np.float64))
    d_put = cuda.to_device(poisoned(n, np.float64))
    black_scholes_cuda[griddim, blockdim](d_call, d_put, cuda.to_device(S),
                                          cuda.to_device(X), cuda.to_device(T),
                                          RISKFREE, VOLATILITY)
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (RISKFREE + 0.5 * VOLATILITY * VOLATILITY) * T) / (VOLATILITY * sqrtT)
    d2 = d1 - VOLATILITY * sqrtT
    expRT = np.exp(-RISKFREE * T)
    call = S * cnd_numpy(d1) - X * expRT * cnd_numpy(d2)
    put = X * expRT * (1.0 - cnd_numpy(d2)) - S * (1.0 - cnd_numpy(d1))
    assert_matches(d_call.copy_to_host(), call)
    assert_matches(d_put.copy_to_host(), put)


# -- 18. Mandelbrot with complex numbers (numba's examples, mandel; the GTC
#        tutorial's 2-D grid-stride loops) -------------------------------------------

@cuda.jit(device=True)
def mandel(x, y, max_iters):
    c = complex(x, y)
    z = 0.0j
    for i in range(max_iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return max_iters


def test_mandelbrot(target):
    @cuda.jit
    def create_fractal_kernel(min_x, max_x, min_y, max_y, image, iters):
        height = image.shape[0]
        width = image.shape[1]
        pixel_size_x = (max_x - min_x) / width
        pixel_size_y = (max_y - min_y) / height
        startX, startY = cuda.grid(2)
        gridX = cuda.gridDim.x * cuda.blockDim.x
        gridY = cuda.gridDim.y * cuda.blockDim.y
        for x in range(startX, width, gridX):
            real = min_x + x * pixel_size_x
            for y in range(startY, height, gridY):
                imag = min_y + y * pixel_size_y
                image[y, x] = mandel(real, imag, iters)

    image = poisoned((96, 144), np.uint8)
    d_image = cuda.to_device(image)
    create_fractal_kernel[(4, 4), (8, 8)](-2.0, 1.0, -1.0, 1.0, d_image, 20)
    got = d_image.copy_to_host()
    expected = np.empty_like(image)
    for y in range(96):
        for x in range(144):
            expected[y, x] = mandel.py_func(-2.0 + x * (3.0 / 144), -1.0 + y * (2.0 / 96), 20)
    # Iteration counts at the set's edge may move by contraction into FMA on the GPU.
    assert np.count_nonzero(got != expected) <= got.size // 1000


# -- 19. Histogram: grid-stride loop, atomic add (NVIDIA's numba CUDA tutorial,
#        the histogram exercise) ------------------------------------------------------

def test_histogram_atomic_add(target):
    @cuda.jit
    def histogram(x, xmin, xmax, histogram_out):
        nbins = histogram_out.shape[0]
        bin_width = (xmax - xmin) / nbins
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for i in range(start, x.shape[0], stride):
            bin_number = np.int32((x[i] - xmin) / bin_width)
            if bin_number >= 0 and bin_number < histogram_out.shape[0]:
                cuda.atomic.add(histogram_out, bin_number, 1)

    x = rng().standard_normal(100000).astype(np.float32)
    xmin, xmax = np.float32(-4.0), np.float32(4.0)
    histogram_out = cuda.to_device(np.zeros(64, dtype=np.int32))
    histogram[30, 128](cuda.to_device(x), xmin, xmax, histogram_out)
    bin_width = (xmax - xmin) / np.float32(64)
    bins = ((x - xmin) / bin_width).astype(np.int32)  # truncation, as np.int32() does
    bins = bins[(bins >= 0) & (bins < 64)]
    assert_matches(histogram_out.copy_to_host(), np.bincount(bins, minlength=64))


@cuda.jit(device=True)
def bin_and_weight(v, lo, width):
    """A device function returning a tuple: the bin of ``v`` and its weight."""
    b = int((v - lo) / width)
    return b, 1 if v >= 0 else 2


def test_histogram_shared_memory_privatised(target):
    # The per-block (privatised) histogram of NVIDIA's numba CUDA tutorial: atomics on a
    # shared array, then one atomic per bin and block into global memory.
    NBINS = 32

    @cuda.jit
    def hist_shared(x, lo, width, out):
        local_hist = cuda.shared.array(NBINS, dtype=int32)
        t = cuda.threadIdx.x
        for b in range(t, NBINS, cuda.blockDim.x):
            local_hist[b] = 0
        cuda.syncthreads()
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            b, w = bin_and_weight(x[i], lo, width)
            if 0 <= b < NBINS:
                cuda.atomic.add(local_hist, b, w)
        cuda.syncthreads()
        for b in range(t, NBINS, cuda.blockDim.x):
            cuda.atomic.add(out, b, local_hist[b])

    x = rng().standard_normal(50000)
    out = cuda.to_device(np.zeros(NBINS, np.int32))
    hist_shared[16, 128](cuda.to_device(x), -4.0, 0.25, out)
    bins = ((x + 4.0) / 0.25).astype(np.int64)
    keep = (bins >= 0) & (bins < NBINS)
    expected = np.bincount(bins[keep], weights=np.where(x[keep] >= 0, 1, 2), minlength=NBINS)
    assert_matches(out.copy_to_host(), expected.astype(np.int32))


# -- 20. Convolution with constant and local memory (numba-cuda docs, "Memory
#        management": cuda.const.array_like, cuda.local.array) ---------------------

WEIGHTS = np.array([0.0625, 0.25, 0.375, 0.25, 0.0625], dtype=np.float32)
KSIZE = 5


def test_const_and_local_convolution(target):
    @cuda.jit
    def smooth(x, out):
        w = cuda.const.array_like(WEIGHTS)
        window = cuda.local.array(KSIZE, dtype=float32)
        i = cuda.grid(1)
        if i >= out.size:
            return
        for k in range(KSIZE):
            j = i + k - KSIZE // 2
            window[k] = x[j] if 0 <= j < x.size else 0
        acc = float32(0)
        for k in range(KSIZE):
            acc += w[k] * window[k]
        out[i] = acc

    x = rng().standard_normal(3000).astype(np.float32)
    out = cuda.device_array(x.shape, dtype=np.float32)
    smooth.forall(x.size)(cuda.to_device(x), out)
    expected = np.convolve(x.astype(np.float64), WEIGHTS.astype(np.float64), mode="same")
    assert_matches(out.copy_to_host(), expected.astype(np.float32))


# -- 21. Streams (numba-cuda docs, "Memory management": streams; stream-ordered
#        copies, kernel[blocks, threads, stream], auto_synchronize) ----------------

def test_streams(target):

    @cuda.jit
    def scale(x, a, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i]

    x = rng().standard_normal(5000)
    stream = cuda.stream()
    with stream.auto_synchronize():
        d_x = cuda.to_device(x, stream=stream)
        d_out = cuda.device_array_like(d_x, stream=stream)
        scale[(x.size + 127) // 128, 128, stream](d_x, 3.0, d_out)
        got = d_out.copy_to_host(stream=stream)
    assert_matches(got, 3.0 * x)
    scale.forall(x.size, stream=stream)(d_x, -1.0, d_out)
    out = poisoned(x.size, np.float64)
    d_out.copy_to_host(out, stream=stream)
    stream.synchronize()
    assert_matches(out, -x)


# -- 22. math, cmath and NumPy scalar functions in a kernel (numba-cuda docs,
#        "Supported Python features in CUDA Python": math, cmath, NumPy) --------------

def test_math_functions(target):
    @cuda.jit
    def functions(x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            a = x[i]
            b = y[i]
            out[i, 0] = math.erf(a) + math.erfc(b)
            out[i, 1] = math.atan2(a, b) + math.hypot(a, b)
            out[i, 2] = math.copysign(math.fabs(a) * 7.0 % 1.5, b)
            out[i, 3] = math.pow(b + 2.0, a) + math.floor(a * 3.0) + math.ceil(b * 3.0)
            out[i, 4] = math.tanh(a) + math.sinh(b) + math.log10(b + 2.0) + math.log2(a + 2.0)
            out[i, 5] = math.degrees(a) + math.radians(b) + math.trunc(a * 5.0)
            out[i, 6] = np.exp(a) + np.arctan(b) + np.sqrt(np.abs(a))
            out[i, 7] = math.isnan(a) + math.isinf(b) + math.isfinite(a) + (a ** 2) + pi

    @cuda.jit
    def complexes(z, out):
        i = cuda.grid(1)
        if i < z.size:
            w = z[i]
            out[i, 0] = cmath.exp(w) + cmath.sqrt(w)
            out[i, 1] = cmath.log(w) + abs(w) + w.conjugate()
            out[i, 2] = cmath.rect(abs(w), cmath.phase(w)) * 1j

    r = rng()
    x = r.uniform(-1.5, 1.5, 500)
    y = r.uniform(-1.5, 1.5, 500)
    out = poisoned((500, 8), np.float64)
    functions.forall(500)(x, y, out)
    erf, erfc = np.vectorize(math.erf), np.vectorize(math.erfc)
    expected = np.stack([
        erf(x) + erfc(y),
        np.arctan2(x, y) + np.hypot(x, y),
        np.copysign(np.fmod(np.abs(x) * 7.0, 1.5), y),
        np.power(y + 2.0, x) + np.floor(x * 3.0) + np.ceil(y * 3.0),
        np.tanh(x) + np.sinh(y) + np.log10(y + 2.0) + np.log2(x + 2.0),
        np.degrees(x) + np.radians(y) + np.trunc(x * 5.0),
        np.exp(x) + np.arctan(y) + np.sqrt(np.abs(x)),
        np.isnan(x) + np.isinf(y) + np.isfinite(x) + x ** 2 + pi,
    ], axis=1)
    assert_matches(out, expected)

    z = (r.standard_normal(300) + 1j * r.standard_normal(300)).astype(np.complex128)
    cout = poisoned((300, 3), np.complex128)
    complexes.forall(300)(z, cout)
    cexpected = np.stack([np.exp(z) + np.sqrt(z), np.log(z) + np.abs(z) + np.conj(z),
                          np.abs(z) * np.exp(1j * np.angle(z)) * 1j], axis=1)
    assert_matches(cout, cexpected)


def test_special_math_functions(target):

    @cuda.jit
    def special(x, out):
        i = cuda.grid(1)
        if i < x.size:
            a = x[i]
            out[i, 0] = math.gamma(a + 3.0) + math.lgamma(a + 3.0)
            out[i, 1] = math.expm1(a) * math.log1p(a + 1.0)
            out[i, 2] = math.asinh(a) + math.acosh(a + 3.0) + math.atanh(a * 0.5)
            out[i, 3] = math.fmod(a * 7.0, 1.5)

    x = rng().uniform(-1.5, 1.5, 500)
    out = poisoned((500, 4), np.float64)
    special.forall(500)(x, out)
    gamma, lgamma = np.vectorize(math.gamma), np.vectorize(math.lgamma)
    expected = np.stack([
        gamma(x + 3.0) + lgamma(x + 3.0),
        np.expm1(x) * np.log1p(x + 1.0),
        np.arcsinh(x) + np.arccosh(x + 3.0) + np.arctanh(x * 0.5),
        np.fmod(x * 7.0, 1.5),
    ], axis=1)
    assert_matches(out, expected)
