"""Barriers, warp functions and grid syncs inside device functions, on the CPU target.

Each kernel here reaches ``cuda.syncthreads``, ``cuda.syncwarp``, a shuffle, a vote or
``cuda.cg.this_grid().sync()`` only through one or more ``@cuda.jit(device=True)``
functions.  The expected values depend on what other threads wrote before the
barrier (the CPU target runs the threads of a block one after another between
suspensions, so a barrier that did not suspend reads stale or poisoned data), and
outputs start as NaN or a sentinel so an element left unwritten fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, float64

FULL = 0xFFFFFFFF
MAX_BLOCK = 256


def cpu(fn):
    return cuda.jit(target="cpu")(fn)


def assert_close(got, want, rtol=1e-12):
    """Relative norm of the difference (sums of random signs can be near zero)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    assert not np.isnan(got).any(), "an output was left unwritten"
    err = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300)
    assert err <= rtol, f"relative error {err:.3e}"


def uint32_bits(masks):
    return np.array([m & FULL for m in masks], np.uint32)


# -- device functions ---------------------------------------------------------------------


@cuda.jit(device=True)
def square(v):  # plain: no barrier, no warp function
    return v * v


@cuda.jit(device=True)
def affine(a, v, b):  # plain
    return a * v + b


@cuda.jit(device=True)
def block_sum(sm, tid):
    """Tree reduction of the block's ``sm`` (filled, and a barrier passed, by the
    caller); every thread returns the total."""
    step = cuda.blockDim.x // 2
    while step > 0:
        if tid < step:
            sm[tid] += sm[tid + step]
        cuda.syncthreads()
        step //= 2
    return sm[0]


@cuda.jit(device=True)
def warp_sum_down(v):
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    return v


@cuda.jit(device=True)
def warp_sum_xor(v):
    m = 1
    while m < 32:
        v += cuda.shfl_xor_sync(FULL, v, m)
        m *= 2
    return v


@cuda.jit(device=True)
def half_warp_sum(v, mask):
    """Butterfly over the 16 lanes of a half warp (xor by 8, 4, 2, 1 keeps lane bit 4)."""
    off = 8
    while off > 0:
        v += cuda.shfl_xor_sync(mask, v, off)
        off //= 2
    return v


@cuda.jit(device=True)
def mirror_in_block(buf, t, v):
    buf[t] = v
    cuda.syncthreads()
    w = buf[cuda.blockDim.x - 1 - t]
    cuda.syncthreads()  # all have read before the caller writes buf again
    return w


@cuda.jit(device=True)
def mirror_in_warp(buf, t, v):
    lane = cuda.laneid
    buf[t] = v
    cuda.syncwarp()
    w = buf[t - lane + 31 - lane]
    cuda.syncwarp()
    return w


@cuda.jit(device=True)
def affine_mirror_block(buf, t, v, a):
    u = a * v + 1.0
    w = mirror_in_block(buf, t, u)
    return w * w - v


@cuda.jit(device=True)
def affine_mirror_warp(buf, t, v, a):
    u = a * v + 1.0
    w = mirror_in_warp(buf, t, u)
    return w * w - v


@cuda.jit(device=True)
def warp_then_block(buf, t, v, a):
    """Three levels: this -> affine_mirror_warp -> mirror_in_warp (syncwarp), then
    this -> mirror_in_block (syncthreads)."""
    u = affine_mirror_warp(buf, t, v, a)
    w = mirror_in_block(buf, t, u - 2.0)
    return 3.0 * w + u


@cuda.jit(device=True)
def rotate_or_clip(buf, t, v, shift, lim):
    if shift == 0:  # the same for the whole block: no thread reaches the barriers
        return v
    buf[t] = v
    cuda.syncthreads()
    w = buf[(t + shift) % cuda.blockDim.x]
    cuda.syncthreads()
    if w > lim:
        return lim  # some threads leave here, the rest below
    return w + 1.0


@cuda.jit(device=True)
def halvings_until_none_above(v, lim):
    """How often the block must halve its values until none is above ``lim``: the
    count is the same in every thread, so all leave the loop together."""
    r = 0
    while True:
        if cuda.syncthreads_count(v > lim) == 0:
            return r
        v = v * 0.5
        r += 1


@cuda.jit(device=True)
def warp_votes(p):
    return cuda.ballot_sync(FULL, p), cuda.all_sync(FULL, p), cuda.any_sync(FULL, p)


@cuda.jit(device=True)
def block_votes(p):
    return cuda.syncthreads_count(p), cuda.syncthreads_and(p), cuda.syncthreads_or(p)


@cuda.jit(device=True)
def exchange_across_grid(buf, i, v, shift):
    buf[i] = v
    cuda.cg.this_grid().sync()
    w = buf[(i + shift) % buf.size]
    cuda.cg.this_grid().sync()  # all have read before the next round writes
    return w


@cuda.jit(device=True)
def grid_total(sm, parts, tid, v):
    """Block sums (syncthreads in block_sum), a grid sync, then every thread adds the
    blocks' sums."""
    sm[tid] = v
    cuda.syncthreads()
    s = block_sum(sm, tid)
    if tid == 0:
        parts[cuda.blockIdx.x] = s
    cuda.cg.this_grid().sync()
    total = 0.0
    for b in range(cuda.gridDim.x):
        total += parts[b]
    return total


@cuda.jit(device=True)
def centred_mean_square(sm, tid, v):
    """mean(v * v) over the block minus the thread's own v * v: plain device
    functions before, inside (block_sum) and after the barriers."""
    sm[tid] = square(v)
    cuda.syncthreads()
    s = block_sum(sm, tid)
    cuda.syncthreads()  # all have read sm[0] before the caller reuses sm
    return affine(1.0 / cuda.blockDim.x, s, -square(v))


@cuda.jit(device=True)
def warp_total_of_affine(v, a):
    u = affine(a, v, 1.0)
    t = warp_sum_xor(u)
    return affine(0.5, t, -u)


# -- 1. a block reduction ---------------------------------------------------------------------


@cpu
def block_sums(x, out, seen):
    sm = cuda.shared.array(MAX_BLOCK, float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    sm[tid] = x[i]
    cuda.syncthreads()
    s = block_sum(sm, tid)
    seen[i] = s
    if tid == 0:
        out[cuda.blockIdx.x] = s


@pytest.mark.parametrize("block", [128, 256])
def test_block_sum_in_a_device_function(block):
    nblocks = 5
    x = np.random.default_rng(1).standard_normal(nblocks * block)
    out, seen = np.full(nblocks, np.nan), np.full(nblocks * block, np.nan)
    block_sums[nblocks, block](x, out, seen)
    ref = x.reshape(nblocks, block).sum(1)
    assert_close(out, ref)
    assert_close(seen, np.repeat(ref, block))  # every thread read the finished sum


# -- 2. warp reductions ---------------------------------------------------------------------


@cpu
def warp_sums(x, sums, down, every):
    i = cuda.grid(1)
    v = warp_sum_down(x[i])
    down[i] = v
    if cuda.laneid == 0:
        sums[i // 32] = v
    every[i] = warp_sum_xor(x[i])


def shfl_down_model(x):
    """Every lane's value after the down-shuffle tree: a source lane past 31 gives the
    lane its own value."""
    out = []
    for w in x.reshape(-1, 32).astype(np.int64):
        s = list(w)
        for off in (16, 8, 4, 2, 1):
            s = [s[j] + (s[j + off] if j + off < 32 else s[j]) for j in range(32)]
        out += s
    return np.array(out)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_warp_sums_with_shuffles_in_device_functions(dtype):
    rng = np.random.default_rng(2)
    n = 5 * 96
    x = rng.integers(-1000, 1000, n).astype(dtype)  # integers: float32 sums are exact
    sums = np.full(n // 32, -77, dtype)
    down, every = np.full(n, -77, dtype), np.full(n, -77, dtype)
    warp_sums[5, 96](x, sums, down, every)
    ref = x.astype(np.int64).reshape(-1, 32).sum(1)
    np.testing.assert_array_equal(sums, ref)
    np.testing.assert_array_equal(down, shfl_down_model(x))
    np.testing.assert_array_equal(every, np.repeat(ref, 32))


# -- 3. nested device functions ------------------------------------------------------------------


@cpu
def nested_block(x, out, a):
    buf = cuda.shared.array(128, float64)
    i = cuda.grid(1)
    out[i] = affine_mirror_block(buf, cuda.threadIdx.x, x[i], a)


@cpu
def nested_warp(x, out, a):
    buf = cuda.shared.array(128, float64)
    i = cuda.grid(1)
    out[i] = affine_mirror_warp(buf, cuda.threadIdx.x, x[i], a)


@cpu
def nested_three_levels(x, out, a):
    buf = cuda.shared.array(128, float64)
    i = cuda.grid(1)
    out[i] = warp_then_block(buf, cuda.threadIdx.x, x[i], a)


def mirror_block(v):
    return v.reshape(-1, 128)[:, ::-1].ravel()


def mirror_warp(v):
    return v.reshape(-1, 32)[:, ::-1].ravel()


def nested_model(kernel, x, a):
    def am(v, mirror):
        u = a * v + 1.0
        w = mirror(u)
        return w * w - v

    if kernel is nested_block:
        return am(x, mirror_block)
    if kernel is nested_warp:
        return am(x, mirror_warp)
    u = am(x, mirror_warp)
    return 3.0 * mirror_block(u - 2.0) + u


@pytest.mark.parametrize("name", ["nested_block", "nested_warp", "nested_three_levels"])
def test_nested_device_functions_with_a_barrier_in_the_innermost(name):
    kernel = globals()[name]
    x = np.random.default_rng(3).standard_normal(4 * 128)
    out = np.full_like(x, np.nan)
    kernel[4, 128](x, out, 1.5)
    assert_close(out, nested_model(kernel, x, 1.5))


# -- 4. one device function, several calls -------------------------------------------------------


@cpu
def block_moments(x, out):
    sm = cuda.shared.array(MAX_BLOCK, float64)
    tid = cuda.threadIdx.x
    b = cuda.blockIdx.x
    v = x[cuda.grid(1)]
    sm[tid] = v
    cuda.syncthreads()
    s1 = block_sum(sm, tid)
    cuda.syncthreads()  # all have read sm[0] before it is refilled
    sm[tid] = v * v
    cuda.syncthreads()
    s2 = block_sum(sm, tid)
    if tid == 1:
        out[b, 0] = s1
        out[b, 1] = s2


@cpu
def block_sums_in_a_loop(x, out, rounds):
    sm = cuda.shared.array(MAX_BLOCK, float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    v = x[i]
    for r in range(rounds):
        sm[tid] = v
        cuda.syncthreads()
        s = block_sum(sm, tid)
        cuda.syncthreads()
        out[r, i] = s
        v = 0.5 * v + s / cuda.blockDim.x + r


@cpu
def half_warp_sums(x, out):
    i = cuda.grid(1)
    if cuda.laneid < 16:
        s = half_warp_sum(x[i], 0x0000FFFF)
    else:
        s = half_warp_sum(2 * x[i], 0xFFFF0000)
    out[i] = s


def test_one_device_function_called_twice():
    x = np.random.default_rng(4).standard_normal(3 * 128)
    out = np.full((3, 2), np.nan)
    block_moments[3, 128](x, out)
    b = x.reshape(3, 128)
    assert_close(out, np.stack([b.sum(1), (b * b).sum(1)], 1))


def test_one_device_function_called_in_a_loop():
    rounds, block = 4, 64
    x = np.random.default_rng(5).standard_normal(3 * block)
    out = np.full((rounds, x.size), np.nan)
    block_sums_in_a_loop[3, block](x, out, rounds)
    v, ref = x.reshape(3, block), []
    for r in range(rounds):
        s = v.sum(1, keepdims=True)
        ref.append(np.broadcast_to(s, v.shape).ravel())
        v = 0.5 * v + s / block + r
    assert_close(out, np.array(ref))


def test_one_warp_function_called_in_both_branches_with_their_masks():
    x = np.random.default_rng(6).integers(-99, 100, 3 * 64).astype(np.int64)
    out = np.full_like(x, -77)
    half_warp_sums[3, 64](x, out)
    h = x.reshape(-1, 2, 16) * np.array([1, 2])[None, :, None]
    np.testing.assert_array_equal(out, np.repeat(h.sum(2), 16))


# -- 5. returns in a function with barriers ----------------------------------------------------


@cpu
def rotate_then_mirror(x, out, shift, lim):
    buf = cuda.shared.array(128, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    r = rotate_or_clip(buf, t, x[i], shift, lim)
    buf[t] = 2.0 * r  # a barrier after the call: every thread came back from it
    cuda.syncthreads()
    out[i] = buf[cuda.blockDim.x - 1 - t] + r


@pytest.mark.parametrize("shift", [0, 3, 100])
def test_early_returns_around_barriers(shift):
    lim = 0.5
    x = np.random.default_rng(7).standard_normal(3 * 128)
    out = np.full_like(x, np.nan)
    rotate_then_mirror[3, 128](x, out, shift, lim)
    b = x.reshape(3, 128)
    if shift == 0:
        r = b
    else:
        w = np.roll(b, -shift, axis=1)
        r = np.where(w > lim, lim, w + 1.0)
        assert (w > lim).any() and (w <= lim).any()  # both returns are taken
    assert_close(out, (2.0 * r[:, ::-1] + r).ravel())


@cpu
def halvings(x, out, lim):
    i = cuda.grid(1)
    out[i] = halvings_until_none_above(x[i], lim)


def test_return_from_a_loop_of_block_votes():
    rng = np.random.default_rng(8)
    x = rng.uniform(0.0, 1.0, (4, 64)) * np.array([1.0, 10.0, 1000.0, 0.01])[:, None]
    out = np.full(x.size, -77, np.int64)
    halvings[4, 64](x.ravel(), out, 0.3)
    ref = []
    for m in x.max(1):  # the block's largest value decides, halved as the kernel does
        r = 0
        while m > 0.3:
            m, r = m * 0.5, r + 1
        ref.append(r)
    assert len(set(ref)) == 4  # each block its own count (block 3 none at all)
    np.testing.assert_array_equal(out, np.repeat(ref, 64))


# -- 6. votes -------------------------------------------------------------------------------


@cpu
def votes(x, k, k2, ballots, flags, counts):
    i = cuda.grid(1)
    b, a, o = warp_votes(x[i] > k)
    ballots[i] = b
    flags[0, i] = a
    flags[1, i] = o
    c, a2, o2 = block_votes(x[i] >= k2)
    counts[i] = c
    flags[2, i] = a2
    flags[3, i] = o2


def test_warp_and_block_votes_in_device_functions():
    rng = np.random.default_rng(9)
    block, nblocks, k, k2 = 128, 4, 0, -30
    x = rng.integers(-40, 40, (nblocks, block))
    x[0, :32] = rng.integers(1, 40, 32)  # a warp where all hold
    x[0, 32:64] = rng.integers(-40, 0, 32)  # a warp where none hold
    x[1] = rng.integers(-30, 40, block)  # a block where all are >= k2
    x[2] = rng.integers(-40, -30, block)  # a block where none are
    ballots = np.full(x.size, 77, np.uint32)
    flags = np.full((4, x.size), -77, np.int32)
    counts = np.full(x.size, -77, np.int64)
    votes[nblocks, block](x.ravel(), k, k2, ballots, flags, counts)

    p = (x > k).reshape(-1, 32)
    ballot = [sum(1 << j for j in range(32) if w[j]) for w in p]
    np.testing.assert_array_equal(ballots, np.repeat(uint32_bits(ballot), 32))
    np.testing.assert_array_equal(flags[0], np.repeat(p.all(1), 32))
    np.testing.assert_array_equal(flags[1], np.repeat(p.any(1), 32))
    q = x >= k2
    np.testing.assert_array_equal(counts, np.repeat(q.sum(1), block))
    np.testing.assert_array_equal(flags[2], np.repeat(q.all(1), block))
    np.testing.assert_array_equal(flags[3], np.repeat(q.any(1), block))
    assert q.all(1).any() and not q.any(1).all()  # both outcomes occur


# -- 7. grid sync --------------------------------------------------------------------------------


@cpu
def grid_rounds(x, buf, out, shift, rounds):
    i = cuda.grid(1)
    v = x[i]
    for r in range(rounds):
        v = exchange_across_grid(buf, i, 3 * v + r, shift)
        out[r, i] = v


def test_grid_sync_in_a_device_function_called_in_a_loop():
    nblocks, block, rounds, shift = 6, 64, 4, 64 + 5  # each read crosses into the next block
    x = np.random.default_rng(10).integers(-1000, 1000, nblocks * block).astype(np.int64)
    buf = np.full_like(x, -77)
    out = np.full((rounds, x.size), -77, np.int64)
    grid_rounds[nblocks, block](x, buf, out, shift, rounds)
    v, ref = x, []
    for r in range(rounds):
        v = np.roll(3 * v + r, -shift)
        ref.append(v)
    np.testing.assert_array_equal(out, np.array(ref))


@cpu
def grid_totals(x, parts, out):
    sm = cuda.shared.array(MAX_BLOCK, float64)
    i = cuda.grid(1)
    out[i] = grid_total(sm, parts, cuda.threadIdx.x, x[i])


def test_grid_sync_and_a_nested_block_reduction():
    nblocks, block = 6, 64
    x = np.random.default_rng(11).standard_normal(nblocks * block)
    parts, out = np.full(nblocks, np.nan), np.full(x.size, np.nan)
    grid_totals[nblocks, block](x, parts, out)
    assert_close(parts, x.reshape(nblocks, block).sum(1))
    assert_close(out, np.full(x.size, x.sum()))


# -- 8. plain and synchronising device functions together ----------------------------------------


@cpu
def mixed_calls(x, out, a):
    sm = cuda.shared.array(MAX_BLOCK, float64)
    i = cuda.grid(1)
    v = affine(2.0, x[i], 0.0)  # a plain device function in the kernel too
    out[0, i] = centred_mean_square(sm, cuda.threadIdx.x, v)
    out[1, i] = warp_total_of_affine(v, a)


def test_plain_and_synchronising_device_functions_together():
    block, a = 128, 0.75
    x = np.random.default_rng(12).standard_normal(3 * block)
    out = np.full((2, x.size), np.nan)
    mixed_calls[3, block](x, out, a)
    v = 2.0 * x
    ms = np.repeat((v * v).reshape(-1, block).sum(1) / block, block) - v * v
    u = a * v + 1.0
    tot = np.repeat(u.reshape(-1, 32).sum(1), 32)
    assert_close(out, np.stack([ms, 0.5 * tot - u]))


# -- debug mode: a bounds error after the barrier, inside the device function --------------------


@cuda.jit(device=True)
def mirror_plus_next(buf, x, t):
    buf[t] = x[t]
    cuda.syncthreads()
    return buf[cuda.blockDim.x - 1 - t] + x[t + 1]  # the last thread reads x[64] of 64


def mirror_plus_next_kernel(x, out):
    t = cuda.threadIdx.x
    buf = cuda.shared.array(64, float64)
    out[t] = mirror_plus_next(buf, x, t)


def test_debug_mode_runs_and_reports_at_the_device_functions_line():
    k = cuda.jit(mirror_plus_next_kernel, target="cpu", debug=True)
    x = np.random.default_rng(13).standard_normal(65)
    out = np.full(64, np.nan)
    k[1, 64](x, out)
    assert_close(out, x[:64][::-1] + x[1:])
    out[:] = np.nan
    with pytest.raises(IndexError) as info:
        k[1, 64](x[:64], out)
    text = str(info.value)
    line = mirror_plus_next.py_func.__code__.co_firstlineno + 4
    # numba's message: the function, file and line, then tid/ctaid (z, y, x).
    assert text.startswith(f"In function 'mirror_plus_next_kernel', file {__file__}, line {line},")
    assert (
        "tid=[0, 0, 63] ctaid=[0, 0, 0]: index 64 is out of bounds for axis 0 with size 64" in text
    )
    assert info.value.kernel_failure.thread == (63, 0, 0)
    assert np.isnan(out[63])  # the failing thread left at the error
