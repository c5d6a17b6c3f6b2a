"""A conformance suite of numba.cuda programs as numba's users write them (see
examples_check.py for how they run on both targets): shared memory (tiled
matrix multiplication, a reduction, dynamic shared memory)."""

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
from cujit.types import float32, int32

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
    blockspergrid = (
        math.ceil(z_h.shape[0] / threadsperblock[0]),
        math.ceil(z_h.shape[1] / threadsperblock[1]),
    )
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
    padded[: x.size] = x
    assert_matches(
        out.copy_to_host(),
        padded.reshape(blocks, tpb).astype(np.float64).sum(axis=1).astype(np.float32),
    )

    f_out, i_out = poisoned(1, np.float32), poisoned(1, np.int32)
    aliasing[1, 1, 0, 4](f_out, i_out)
    assert f_out[0] == np.float32(3.14)
    assert i_out[0] == np.float32(3.14).view(np.int32)
