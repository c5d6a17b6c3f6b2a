"""A conformance suite of numba.cuda programs as numba's users write them (see
examples_check.py for how they run on both targets): grid-wide barriers (the
heat equation, sequential rows)."""

from __future__ import annotations

import numpy as np
from examples_check import (
    assert_matches,
    target_fixture,  # noqa: F401 (the target fixture)
)

from cujit import cuda
from cujit.types import int32

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
