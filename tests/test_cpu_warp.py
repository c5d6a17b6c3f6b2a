"""Warp-level functions and block votes on the CPU target, against NumPy and Python models.

Lanes are numbered by the linear thread index in the block (x fastest), 32 to a warp;
the last warp of a block may be partial.  The models below follow the PTX ISA
(``shfl.sync``, ``vote.sync``, ``match.sync``): a shuffle whose source lane is out of
range gives the lane its own value; votes and matches see the non-exited lanes of the
mask.  Where CUDA leaves a result undefined (a shuffle from a lane that does not
exist), the CPU target gives the lane its own value, and the tests say so.
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, float64
from cujit.diagnostics import LaunchError

FULL = 0xFFFFFFFF


def cpu(fn):
    return cuda.jit(target="cpu")(fn)


def warps(n):
    """Per thread of an ``n``-thread block: lane, first thread of its warp, lanes in it."""
    t = np.arange(n)
    base = t - t % 32
    size = np.minimum(32, n - base)
    return t % 32, base, size


def int32_bits(masks):
    return np.array([m & FULL for m in masks], np.uint32).view(np.int32)


# -- shuffles ------------------------------------------------------------------------------


@cpu
def shuffle_reduce(x, sums, every):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        sums[i // 32] = v
    w = x[i]
    m = 1
    while m < 32:
        w += cuda.shfl_xor_sync(FULL, w, m)
        m *= 2
    every[i] = w


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_shuffle_reduction_and_butterfly_over_blocks(dtype):
    rng = np.random.default_rng(1)
    n = 7 * 96
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(n).astype(dtype)
    else:
        x = rng.integers(-1000, 1000, n).astype(dtype)
    sums = np.zeros(n // 32, dtype)
    every = np.zeros(n, dtype)
    shuffle_reduce[7, 96](x, sums, every)
    ref = x.astype(np.float64).reshape(-1, 32).sum(1)
    np.testing.assert_allclose(sums, ref, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(every, np.repeat(ref, 32), rtol=1e-5, atol=1e-4)


def test_shuffle_reduction_on_a_grid_that_runs_on_several_host_threads():
    from cujit.targets.cpu.launch import PARALLEL_MIN_THREADS

    n = 2 * PARALLEL_MIN_THREADS  # each host thread has its own exchange buffers
    x = np.random.default_rng(12).integers(-1000, 1000, n).astype(np.int64)
    sums, every = np.zeros(n // 32, np.int64), np.zeros(n, np.int64)
    shuffle_reduce[n // 256, 256](x, sums, every)
    np.testing.assert_array_equal(sums, x.reshape(-1, 32).sum(1))
    np.testing.assert_array_equal(every, np.repeat(sums, 32))


@cpu
def broadcast(x, out):
    i = cuda.grid(1)
    src = (i // 32) % 32  # warp w reads lane w % 32
    out[i] = cuda.shfl_sync(FULL, x[i], src)
    out[i + x.size] = cuda.shfl_sync(FULL, x[i], src + 64)  # only lane[4:0] counts


def test_shfl_sync_broadcasts_a_lane():
    n = 4 * 128
    x = np.random.default_rng(2).standard_normal(n)
    out = np.zeros(2 * n)
    broadcast[4, 128](x, out)
    i = np.arange(n)
    ref = x[(i // 32) * 32 + (i // 32) % 32]
    np.testing.assert_array_equal(out[:n], ref)
    np.testing.assert_array_equal(out[n:], ref)


@cpu
def scan_up(x, out):
    i = cuda.grid(1)
    v = x[i]
    d = 1
    while d < 32:
        u = cuda.shfl_up_sync(FULL, v, d)
        if cuda.laneid >= d:
            v += u
        d *= 2
    out[i] = v


def test_shfl_up_inclusive_scan_within_warps():
    x = np.random.default_rng(3).integers(-50, 50, 3 * 64).astype(np.int64)
    out = np.zeros_like(x)
    scan_up[3, 64](x, out)
    np.testing.assert_array_equal(out, np.cumsum(x.reshape(-1, 32), axis=1).ravel())


@cpu
def shuffle_64(d, q, out_d, out_q):
    i = cuda.grid(1)
    lane = cuda.laneid
    out_d[0, i] = cuda.shfl_sync(FULL, d[i], 31 - lane)
    out_d[1, i] = cuda.shfl_up_sync(FULL, d[i], 5)
    out_d[2, i] = cuda.shfl_down_sync(FULL, d[i], 7)
    out_d[3, i] = cuda.shfl_xor_sync(FULL, d[i], 21)
    out_q[0, i] = cuda.shfl_sync(FULL, q[i], 31 - lane)
    out_q[1, i] = cuda.shfl_up_sync(FULL, q[i], 5)
    out_q[2, i] = cuda.shfl_down_sync(FULL, q[i], 7)
    out_q[3, i] = cuda.shfl_xor_sync(FULL, q[i], 21)


def test_64_bit_shuffles_move_both_halves():
    rng = np.random.default_rng(4)
    n = 256
    d = rng.standard_normal(n) * 1e200  # exponent bits in the high half
    q = rng.integers(-(2**62), 2**62, n)
    out_d, out_q = np.zeros((4, n)), np.zeros((4, n), np.int64)
    shuffle_64[2, 128](d, q, out_d, out_q)
    i = np.arange(n)
    lane, base = i % 32, i - i % 32
    src = [
        base + 31 - lane,
        np.where(lane >= 5, i - 5, i),
        np.where(lane + 7 < 32, i + 7, i),
        base + (lane ^ 21),
    ]
    np.testing.assert_array_equal(out_d, np.stack([d[s] for s in src]))
    np.testing.assert_array_equal(out_q, np.stack([q[s] for s in src]))


@cpu
def shuffle_2d(x, out):
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    t = ty * cuda.blockDim.x + tx
    b = cuda.blockIdx.x * cuda.blockDim.x * cuda.blockDim.y
    out[b + t] = cuda.shfl_down_sync(FULL, x[b + t], 16)
    out[b + t + x.size] = cuda.laneid


def test_lanes_follow_the_linear_thread_id_in_a_2d_block():
    # 8 x 12: a warp spans rows (x fastest), the last warp of the block is the whole third
    x = np.arange(2 * 96, dtype=np.float32)
    out = np.zeros(2 * x.size, np.float32)
    shuffle_2d[2, (8, 12)](x, out)
    t = np.arange(96)
    lane = t % 32
    ref = np.concatenate([b * 96 + np.where(lane < 16, t + 16, t) for b in range(2)])
    np.testing.assert_array_equal(out[: x.size], ref)
    np.testing.assert_array_equal(out[x.size :], np.tile(lane, 2))


# -- votes, matches, lane masks ----------------------------------------------------------


@cpu
def votes(x, k, ballots, flags):
    i = cuda.grid(1)
    p = x[i] > k
    ballots[i] = cuda.ballot_sync(FULL, p)
    flags[0, i] = cuda.all_sync(FULL, p)
    flags[1, i] = cuda.any_sync(FULL, p)
    flags[2, i] = cuda.eq_sync(FULL, x[i] % 3)  # an integer predicate: != 0


def vote_model(x, k, n_block):
    ballots, flags = [], np.zeros((3, x.size), bool)
    for b0 in range(0, x.size, n_block):
        for w0 in range(0, n_block, 32):
            xs = x[b0 + w0 : b0 + w0 + min(32, n_block - w0)]
            p, nz = xs > k, xs % 3 != 0
            ballots += [sum(1 << j for j in range(len(xs)) if p[j])] * len(xs)
            s = slice(b0 + w0, b0 + w0 + len(xs))
            flags[0, s], flags[1, s] = p.all(), p.any()
            flags[2, s] = nz.all() or not nz.any()
    return int32_bits(ballots), flags


@pytest.mark.parametrize("block", [128, 80])  # 80: the third warp has 16 lanes
def test_ballot_all_any_eq_against_a_model(block):
    rng = np.random.default_rng(5)
    x = rng.integers(-40, 40, 4 * block)
    x[:32] = rng.integers(1, 40, 32)  # a warp where all hold
    x[32:64] = rng.integers(-40, -1, 32)  # none hold
    x[64 : 64 + min(32, block - 64)] = 3 * rng.integers(1, 9, min(32, block - 64))  # all % 3 == 0
    ballots, flags = np.zeros(x.size, np.int32), np.zeros((3, x.size), np.bool_)
    votes[4, block](x, 0, ballots, flags)
    ref_b, ref_f = vote_model(x, 0, block)
    np.testing.assert_array_equal(ballots, ref_b)
    np.testing.assert_array_equal(flags, ref_f)


@cpu
def lane_masks(out):
    i = cuda.grid(1)
    out[0, i] = cuda.activemask()
    out[1, i] = cuda.lanemask_lt()
    out[2, i] = cuda.laneid
    out[3, i] = cuda.warpsize
    if cuda.laneid % 3 == 0:
        out[4, i] = cuda.activemask()
    else:
        out[4, i] = cuda.activemask()


@pytest.mark.parametrize("block", [64, 50])
def test_activemask_and_lanemask_lt(block):
    out = np.zeros((5, 2 * block), np.int64)
    lane_masks[2, block](out)
    lane, _, size = warps(block)
    lane, size = np.tile(lane, 2), np.tile(size, 2)
    present = (1 << size) - 1  # the lanes of the warp that exist
    thirds = sum(1 << j for j in range(0, 32, 3))
    np.testing.assert_array_equal(out[0], present)
    np.testing.assert_array_equal(out[1], (1 << lane) - 1)
    np.testing.assert_array_equal(out[2], lane)
    np.testing.assert_array_equal(out[3], 32)
    # each side of the branch sees the lanes that took it
    np.testing.assert_array_equal(
        out[4], np.where(lane % 3 == 0, thirds & present, ~thirds & present)
    )


@cpu
def matches(a, b, c, d, any_out, all_out, agree):
    i = cuda.grid(1)
    any_out[0, i] = cuda.match_any_sync(FULL, a[i])
    any_out[1, i] = cuda.match_any_sync(FULL, b[i])
    any_out[2, i] = cuda.match_any_sync(FULL, c[i])
    any_out[3, i] = cuda.match_any_sync(FULL, d[i])
    m, same = cuda.match_all_sync(FULL, a[i] // 100)
    all_out[0, i] = m
    agree[0, i] = same
    m, same = cuda.match_all_sync(FULL, d[i] * 0.0)
    all_out[1, i] = m
    agree[1, i] = same


def match_model(values, block):
    """match_any per lane: the lanes of its warp with the same bits."""
    bits = values.view(np.int32 if values.itemsize == 4 else np.int64)
    out = []
    for b0 in range(0, values.size, block):
        for w0 in range(0, block, 32):
            v = bits[b0 + w0 : b0 + w0 + min(32, block - w0)]
            out += [sum(1 << k for k in range(len(v)) if v[k] == v[j]) for j in range(len(v))]
    return int32_bits(out)


def all_model(values, block):
    masks, same = [], []
    for b0 in range(0, values.size, block):
        for w0 in range(0, block, 32):
            n = min(32, block - w0)
            v = values[b0 + w0 : b0 + w0 + n].view(np.uint8).reshape(n, -1)
            ok = bool((v == v[0]).all())
            masks += [((1 << n) - 1) if ok else 0] * n
            same += [ok] * n
    return int32_bits(masks), np.array(same)


@pytest.mark.parametrize("block", [96, 40])
def test_match_any_and_all_against_a_model(block):
    rng = np.random.default_rng(6)
    n = 2 * block
    a = rng.integers(0, 5, n).astype(np.int32)
    a[:32] += 700  # warp 0 of block 0: all a // 100 == 7
    b = rng.integers(0, 3, n).astype(np.int64) << 40  # only the high halves differ
    c = rng.integers(0, 4, n).astype(np.float32) / 2
    d = rng.choice([0.5, -0.0, 0.0, 2.0], n)  # -0.0 and 0.0 differ in their bits
    d[block : block + 32] = 1.5  # d * 0.0: +0.0 everywhere here
    any_out, all_out = np.zeros((4, n), np.int32), np.zeros((2, n), np.int32)
    agree = np.zeros((2, n), np.bool_)
    matches[2, block](a, b, c, d, any_out, all_out, agree)
    for row, v in enumerate((a, b, c, d)):
        np.testing.assert_array_equal(any_out[row], match_model(v, block), err_msg=f"row {row}")
    for row, v in enumerate(((a // 100).astype(np.int32), d * 0.0)):
        masks, same = all_model(np.ascontiguousarray(v), block)
        np.testing.assert_array_equal(all_out[row], masks)
        np.testing.assert_array_equal(agree[row], same)
    assert agree[0, :32].all() and agree[1, block : block + 32].all()  # the model is not vacuous


# -- block votes and syncwarp ---------------------------------------------------------------


@cpu
def block_votes_in_a_loop(x, out):
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t >= 200:
        return  # exited threads do not take part in later barriers
    for k in range(6):
        c = cuda.syncthreads_count(x[i] > 10 * k)
        a = cuda.syncthreads_and(x[i] >= 10 * k)
        o = cuda.syncthreads_or(x[i] > 50 + 10 * k)
        if t == 0:
            out[cuda.blockIdx.x, k, 0] = c
            out[cuda.blockIdx.x, k, 1] = a
            out[cuda.blockIdx.x, k, 2] = o


def test_syncthreads_count_and_or_inside_a_loop():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 80, (5, 256))
    x[1, :200] = rng.integers(25, 60, 200)
    x[:, 200:] = 1000  # in the exited threads: must not count
    out = np.full((5, 6, 3), -1, np.int32)
    block_votes_in_a_loop[5, 256](x.ravel(), out)
    live = x[:, :200]
    ref = np.stack(
        [
            np.stack(
                [(live > 10 * k).sum(1), (live >= 10 * k).all(1), (live > 50 + 10 * k).any(1)], 1
            )
            for k in range(6)
        ],
        1,
    )
    np.testing.assert_array_equal(out, ref)
    assert ref[1, 2, 1] == 1 and ref[0, 2, 1] == 0  # both outcomes of `and` occur


@cpu
def warp_exchange(x, out):
    t = cuda.threadIdx.x
    buf = cuda.shared.array(128, float64)
    buf[t] = x[cuda.grid(1)]
    cuda.syncwarp()  # the warp's writes before its reads: no block barrier here
    v = buf[t ^ 31]
    cuda.syncwarp(FULL)
    buf[t] = v * 2
    cuda.syncwarp()
    out[cuda.grid(1)] = buf[t ^ 1]


def test_syncwarp_orders_shared_memory_within_a_warp():
    x = np.random.default_rng(8).standard_normal(3 * 128)
    out = np.zeros_like(x)
    warp_exchange[3, 128](x, out)
    i = np.arange(x.size)
    np.testing.assert_array_equal(out, 2 * x[(i ^ 1) ^ 31])


# -- divergence and partial warps -------------------------------------------------------------


@cpu
def divergent_halves(x, out):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    if lane < 16:
        v += cuda.shfl_down_sync(0xFFFF, v, 8)
        v += cuda.shfl_down_sync(0xFFFF, v, 4)
        out[1, i] = cuda.ballot_sync(0xFFFF, v > 0)
    else:
        v = cuda.shfl_xor_sync(0xFFFF0000, v, 1)
        out[1, i] = cuda.ballot_sync(0xFFFF0000, v > 0)
    out[0, i] = v


def test_divergent_half_warps_with_their_own_masks():
    x = np.random.default_rng(9).integers(-9, 10, 4 * 64).astype(np.int64)
    out = np.zeros((2, x.size), np.int64)
    divergent_halves[4, 64](x, out)
    ref = np.zeros(x.size, np.int64)
    ballot = np.zeros(x.size, np.int64)
    for w0 in range(0, x.size, 32):
        lo = x[w0 : w0 + 16].copy()
        # down by 8 then by 4 within lanes 0-15; a source past lane 15 is outside the
        # mask, so the lane keeps its own value
        lo = lo + np.array([lo[j + 8] if j + 8 < 16 else lo[j] for j in range(16)])
        lo = lo + np.array([lo[j + 4] if j + 4 < 16 else lo[j] for j in range(16)])
        hi = x[w0 + 16 : w0 + 32][np.arange(16) ^ 1]
        ref[w0 : w0 + 16], ref[w0 + 16 : w0 + 32] = lo, hi
        ballot[w0 : w0 + 16] = sum(1 << j for j in range(16) if lo[j] > 0)
        ballot[w0 + 16 : w0 + 32] = sum(1 << (16 + j) for j in range(16) if hi[j] > 0)
    np.testing.assert_array_equal(out[0], ref)
    np.testing.assert_array_equal(out[1], int32_bits(ballot))


@cpu
def partial_warp(x, out):
    i = cuda.grid(1)
    v = x[i]
    out[0, i] = cuda.shfl_down_sync(FULL, v, 4)
    out[1, i] = cuda.shfl_sync(FULL, v, 0)
    out[2, i] = cuda.shfl_xor_sync(FULL, v, 8)
    out[3, i] = cuda.ballot_sync(FULL, True)
    out[4, i] = cuda.all_sync(FULL, v >= 0)
    s = v
    off = 16
    while off > 0:
        s += cuda.shfl_down_sync(FULL, s, off)
        off //= 2
    out[5, i] = s


def test_a_partial_last_warp():
    # 44 threads: warp 1 has lanes 0-11.  The lanes that don't exist never block the
    # full mask (as exited lanes); a lane whose source doesn't exist (undefined in
    # CUDA) keeps its own value on the CPU target.
    block = 44
    x = np.arange(1, 2 * block + 1, dtype=np.int64)
    out = np.zeros((6, x.size), np.int64)
    partial_warp[2, block](x, out)
    lane, base, size = warps(block)
    lane, base, size = np.tile(lane, 2), np.tile(base, 2), np.tile(size, 2)
    i = np.arange(x.size)
    first = (i // block) * block + base

    def exists(j):
        return j < size

    np.testing.assert_array_equal(
        out[0], np.where(exists(lane + 4) & (lane + 4 < 32), x[np.minimum(i + 4, x.size - 1)], x)
    )
    np.testing.assert_array_equal(out[1], x[first])
    xor8 = x[np.minimum(first + (lane ^ 8), x.size - 1)]
    np.testing.assert_array_equal(out[2], np.where(exists(lane ^ 8), xor8, x))
    np.testing.assert_array_equal(out[3], int32_bits((1 << size) - 1))
    np.testing.assert_array_equal(out[4], 1)
    # the tree reduction, modelled lane by lane with the same rule
    ref = np.zeros(x.size, np.int64)
    for w0 in np.unique(first):
        s = list(x[w0 : w0 + size[w0]])
        n = len(s)
        for off in (16, 8, 4, 2, 1):
            s = [s[j] + (s[j + off] if j + off < n else s[j]) for j in range(n)]
        ref[w0 : w0 + n] = s
    np.testing.assert_array_equal(out[5], ref)


@cpu
def after_exits(x, out):
    i = cuda.grid(1)
    if cuda.laneid % 4 == 1:
        return  # exited lanes no longer take part, though the mask names them
    out[0, i] = cuda.ballot_sync(FULL, x[i] > 0)
    out[1, i] = cuda.all_sync(FULL, True)
    out[2, i] = cuda.activemask()
    out[3, i] = cuda.shfl_xor_sync(FULL, x[i], 1)


def test_exited_lanes_leave_the_mask():
    x = np.random.default_rng(11).integers(-5, 6, 96).astype(np.int64)
    out = np.full((4, 96), -1, np.int64)
    after_exits[1, 96](x, out)
    lane = np.arange(96) % 32
    alive = lane % 4 != 1
    present = sum(1 << j for j in range(32) if j % 4 != 1)
    ballot = [
        sum(1 << j for j in range(32) if j % 4 != 1 and x[w + j] > 0) for w in range(0, 96, 32)
    ]
    partner = np.arange(96) ^ 1
    ref = np.stack(
        [
            int32_bits(np.repeat(ballot, 32)),
            np.ones(96),
            np.full(96, present),
            np.where(lane % 4 == 0, x, x[partner]),
        ]
    )
    np.testing.assert_array_equal(out[:, alive], ref[:, alive])
    assert (out[:, ~alive] == -1).all()


# -- cooperative kernels with warp functions ----------------------------------------------------


@cpu
def grid_warp_sum(x, partial, total):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        partial[i // 32] = v
    cuda.cg.this_grid().sync()
    if i < 32:  # warp 0 of block 0 adds the partials
        s = 0.0
        for k in range(i, partial.size, 32):
            s += partial[k]
        m = 1
        while m < 32:
            s += cuda.shfl_xor_sync(FULL, s, m)
            m *= 2
        total[i] = s
        c = cuda.syncthreads_count(s > 0)  # only warp 0 is left in block 0
        total[32 + i] = c


def test_grid_sync_with_warp_functions():
    x = np.random.default_rng(10).standard_normal(6 * 64)
    partial, total = np.zeros(12), np.zeros(64)
    grid_warp_sum[6, 64](x, partial, total)
    np.testing.assert_allclose(partial, x.reshape(-1, 32).sum(1), rtol=1e-12)
    np.testing.assert_allclose(total[:32], x.sum(), rtol=1e-12)
    np.testing.assert_array_equal(total[32:], 32 if x.sum() > 0 else 0)


# -- errors ------------------------------------------------------------------------------------


@cpu
def half_then_barrier(x):
    i = cuda.grid(1)
    if cuda.laneid < 16:
        x[i] = cuda.shfl_down_sync(FULL, x[i], 1)  # lanes 16-31 never come
    cuda.syncthreads()


@cpu
def not_in_own_mask(x):
    i = cuda.grid(1)
    x[i] = cuda.shfl_sync(0xFFFFFFFE, x[i], 1)


def test_a_lane_that_never_arrives_is_a_launch_error():
    with pytest.raises(
        LaunchError, match="'half_then_barrier'.*lane 16 of its warp is at a block barrier"
    ):
        half_then_barrier[2, 64](np.zeros(128, np.float32))


def test_a_lane_missing_from_its_own_mask_is_a_launch_error():
    with pytest.raises(LaunchError, match="'not_in_own_mask'.*does not name its own lane"):
        not_in_own_mask[1, 32](np.zeros(32, np.float32))


def test_warp_function_in_a_device_function_runs_inlined():
    @cuda.jit(device=True)
    def pair(v):
        return v + cuda.shfl_down_sync(FULL, v, 1)

    def kern(x, out):
        i = cuda.grid(1)
        out[i] = pair(x[i])

    x = np.random.default_rng(3).random(64).astype(np.float32)
    out = np.full(64, np.nan, np.float32)
    cpu(kern)[2, 32](x, out)
    lanes = x.reshape(2, 32)
    want = lanes + np.concatenate([lanes[:, 1:], lanes[:, 31:]], axis=1)  # lane 31: its own
    np.testing.assert_array_equal(out, want.ravel())


def test_kernels_without_warp_functions_keep_their_runner():
    @cpu
    def plain(x):
        x[cuda.grid(1)] += cuda.lanemask_lt()

    x = np.zeros(64, np.int64)
    plain[2, 32](x)
    np.testing.assert_array_equal(x, np.tile((1 << np.arange(32)) - 1, 2))
    native = next(iter(plain.overloads.values())).result.outputs["native"]
    assert not native.barriers and not native.warp
