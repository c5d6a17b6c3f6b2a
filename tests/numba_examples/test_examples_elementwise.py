"""A conformance suite of numba.cuda programs as numba's users write them (see
examples_check.py for how they run on both targets): elementwise kernels
(vector addition, increments in 1-D and 2-D, sessionization)."""

from __future__ import annotations

import math

import numpy as np
from examples_check import (
    assert_matches,
    poisoned,
    rng,
    target_fixture,  # noqa: F401 (the target fixture)
)

from cujit import cuda

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


# -- 9. Click-stream sessionization (numba-cuda docs, examples: "Sessionization";
#       doc_examples/test_sessionize.py) -----------------------------------------------


def test_sessionize(target):
    session_timeout = np.int64(np.timedelta64("3600", "s"))
    ids = np.array([1] * 6 + [2] * 3 + [3] * 10 + [4] * 9)
    sec = np.array(
        [
            1,
            2,
            3,
            5000,
            5001,
            5002,
            1,
            2,
            3,
            1,
            2,
            5000,
            5001,
            10000,
            10001,
            10002,
            10003,
            15000,
            150001,
            1,
            5000,
            50001,
            15000,
            20000,
            25000,
            25001,
            25002,
            25003,
        ],
        dtype="datetime64[ns]",
    ).astype("int64")
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
