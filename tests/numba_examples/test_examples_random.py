"""A conformance suite of numba.cuda programs as numba's users write them (see
examples_check.py for how they run on both targets): random numbers (Monte Carlo,
a 3-D grid of generators)."""

from __future__ import annotations

import math

import numpy as np
from examples_check import (
    assert_matches,
    poisoned,
    target_fixture,  # noqa: F401 (the target fixture)
)

from cujit import cuda
from cujit.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

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
        state = [int(host_states[gid]["s0"]), int(host_states[gid]["s1"])]
        samp = float(_xoroshiro_uniform_float32(state)) * (2 - 1) + 1  # float32 * int64
        expected[gid] = 1.0 / samp
    assert_matches(out.copy_to_host()[:m], expected)
    assert states.copy_to_host()[0]["s0"] != host_states[0]["s0"]  # the kernel advanced it


# -- 12. Random numbers on a 3-D grid (numba-cuda docs, "Random Number Generation":
#        a 3-D grid example; doc_examples/test_random.py) ---------------------------


def test_random_3d_grid(target):  # noqa: C901 -- numba's documented example kernel, kept as the docs write it
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
                state = [int(host_states[tid]["s0"]), int(host_states[tid]["s1"])]
                for i in range(startz, X, sz):
                    for j in range(starty, Y, sy):
                        for k in range(startx, Z, sx):
                            expected[i, j, k] = _xoroshiro_uniform_float32(state)
    assert_matches(got, expected)
    assert 0.45 < got.mean() < 0.55 and got.min() >= 0.0 and got.max() <= 1.0
