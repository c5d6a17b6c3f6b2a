"""The device-API kernel set: synchronisation, atomics, warp-level and bit intrinsics.

Same ``Case`` format as ``kernels.py`` (a kernel, a setup making inputs and the
launch shape, a NumPy/Python reference of the outputs).  Compiled to cubins by
test_device_api.py and run on the GPU by test_device_api_gpu.py.  Atomic cases
come in two kinds: *uncontended* (each thread owns its element, so the returned
old values are deterministic and checked) and *contended* (many threads on few
elements; only order-independent final values are checked).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from kernels import Case, poison

from cujit import cuda, float32, float64, int32, int64

DEVICE_CASES: list[Case] = []
FULL = 0xFFFFFFFF
BINS = 64


def add_case(name, kernel, setup, reference, rtol=0.0):
    DEVICE_CASES.append(Case(name, kernel, setup, reference, rtol))


def as_int32_bits(values) -> np.ndarray:
    """Python ints holding 32-bit masks, as the int32 numba types them as."""
    return np.array([v & FULL for v in values], np.uint32).view(np.int32)


def lanes(n):
    i = np.arange(n)
    return i, i % 32, (i // 32) * 32


# -- warp shuffles --------------------------------------------------------------------------


@cuda.jit
def warp_shuffle_reduce(x, d, q, warp_sums, d_all, q_all):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:  # tree reduction down to lane 0
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        warp_sums[i // 32] = v
    w = d[i]
    k = q[i]
    m = 1
    while m < 32:  # butterfly: every lane ends with the warp's total
        w += cuda.shfl_xor_sync(FULL, w, m)
        k += cuda.shfl_xor_sync(FULL, k, m)
        m *= 2
    d_all[i] = w
    q_all[i] = k


def _reduce_setup(rng):
    n = 4096
    x = rng.standard_normal(n).astype(np.float32)
    d = rng.standard_normal(n)
    q = rng.integers(-(2**40), 2**40, n)  # both 32-bit halves matter
    return (
        [x, d, q, poison(n // 32, np.float32), poison(n, np.float64), poison(n, np.int64)],
        n // 128,
        128,
        0,
    )


def _reduce_ref(a):
    return {
        3: a[0].astype(np.float64).reshape(-1, 32).sum(1),
        4: np.repeat(a[1].reshape(-1, 32).sum(1), 32),
        5: np.repeat(a[2].reshape(-1, 32).sum(1), 32),
    }


add_case("warp_shuffle_reduce", warp_shuffle_reduce, _reduce_setup, _reduce_ref, rtol=1e-5)


@cuda.jit
def shuffle_modes(a, b, c, out_a, out_b, out_c):
    i = cuda.grid(1)
    src = (cuda.laneid * 7 + 3) % 32
    out_a[0, i] = cuda.shfl_sync(FULL, a[i], src)
    out_a[1, i] = cuda.shfl_up_sync(FULL, a[i], 3)
    out_a[2, i] = cuda.shfl_down_sync(FULL, a[i], 5)
    out_a[3, i] = cuda.shfl_xor_sync(FULL, a[i], 9)
    out_b[0, i] = cuda.shfl_sync(FULL, b[i], src)
    out_b[1, i] = cuda.shfl_up_sync(FULL, b[i], 3)
    out_b[2, i] = cuda.shfl_down_sync(FULL, b[i], 5)
    out_b[3, i] = cuda.shfl_xor_sync(FULL, b[i], 9)
    out_c[0, i] = cuda.shfl_sync(FULL, c[i], src)
    out_c[1, i] = cuda.shfl_up_sync(FULL, c[i], 3)
    out_c[2, i] = cuda.shfl_down_sync(FULL, c[i], 5)
    out_c[3, i] = cuda.shfl_xor_sync(FULL, c[i], 9)


def _modes_setup(rng):
    n = 1024
    a = rng.integers(-(2**31), 2**31, n).astype(np.int32)
    b = rng.integers(0, 2**64, n, dtype=np.uint64)
    c = rng.standard_normal(n)
    return (
        [a, b, c, poison((4, n), np.int32), poison((4, n), np.uint64), poison((4, n), np.float64)],
        8,
        128,
        0,
    )


def _modes_ref(a):
    i, lane, base = lanes(a[0].size)
    src = [
        base + (lane * 7 + 3) % 32,
        np.where(lane >= 3, i - 3, i),
        np.where(lane + 5 <= 31, i + 5, i),
        base + (lane ^ 9),
    ]
    return {3 + k: np.stack([a[k][s] for s in src]) for k in range(3)}


add_case("shuffle_modes", shuffle_modes, _modes_setup, _modes_ref)


# -- votes, matches, lane registers -----------------------------------------------------------


@cuda.jit
def vote_match(x, ballots, flags, matches):
    i = cuda.grid(1)
    p = x[i] > 0
    ballots[i] = cuda.ballot_sync(FULL, p)
    flags[0, i] = cuda.all_sync(FULL, p)
    flags[1, i] = cuda.any_sync(FULL, p)
    flags[2, i] = cuda.eq_sync(FULL, x[i] & 1)  # an integer predicate
    matches[0, i] = cuda.match_any_sync(FULL, x[i] % 4)
    matches[1, i] = cuda.match_any_sync(FULL, float32(x[i] % 3))
    m, same = cuda.match_all_sync(FULL, x[i] // 1000)
    matches[2, i] = m
    flags[3, i] = same


def _vote_setup(rng):
    n = 1024
    x = rng.integers(-50, 50, n)
    x[0:32] = rng.integers(1, 50, 32)  # warp 0: all positive
    x[32:64] = rng.integers(-50, -1, 32)  # warp 1: all negative (x // 1000 uniform)
    x[64:96] = 2 * rng.integers(-20, 20, 32)  # warp 2: all even
    return [x, poison(n, np.int32), poison((4, n), np.bool_), poison((3, n), np.int32)], 8, 128, 0


def _vote_ref(a):
    x = a[0]
    n = x.size
    ballots, flags, matches = [], np.zeros((4, n), bool), np.zeros((3, n), np.int64)
    for w in range(n // 32):
        xs = x[32 * w : 32 * w + 32]
        p = xs > 0
        ballot = sum(1 << k for k in range(32) if p[k])
        ballots += [ballot] * 32
        odd = (xs & 1) != 0
        votes = [p.all(), p.any(), odd.all() or not odd.any()]
        flags[:3, 32 * w : 32 * w + 32] = np.array(votes)[:, None]
        for row, v in ((0, xs % 4), (1, (xs % 3).astype(np.float32))):
            matches[row, 32 * w : 32 * w + 32] = [
                sum(1 << k for k in range(32) if v[k] == v[j]) for j in range(32)
            ]
        hi = xs // 1000
        same = bool((hi == hi[0]).all())
        matches[2, 32 * w : 32 * w + 32] = FULL if same else 0
        flags[3, 32 * w : 32 * w + 32] = same
    return {1: as_int32_bits(ballots), 2: flags, 3: as_int32_bits(matches.ravel()).reshape(3, n)}


add_case("vote_match", vote_match, _vote_setup, _vote_ref)


@cuda.jit
def lane_registers(x, out, swapped):
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    out[0, i] = cuda.laneid
    out[1, i] = cuda.warpsize
    out[2, i] = cuda.activemask()
    out[3, i] = cuda.lanemask_lt()
    buf = cuda.shared.array(128, float64)
    buf[t] = x[i]
    cuda.syncwarp()  # orders the warp's shared-memory writes before the reads
    swapped[i] = buf[t ^ 1]
    cuda.threadfence_block()
    cuda.syncwarp(FULL)
    cuda.threadfence_system()


def _lane_setup(rng):
    n = 512
    return [rng.standard_normal(n), poison((4, n), np.int64), poison(n, np.float64)], 4, 128, 0


def _lane_ref(a):
    i, lane, _ = lanes(a[0].size)
    return {
        1: np.stack([lane, np.full_like(lane, 32), np.full_like(lane, FULL), (1 << lane) - 1]),
        2: a[0][i ^ 1],
    }


add_case("lane_registers", lane_registers, _lane_setup, _lane_ref)


# -- block barriers with a reduction, fences --------------------------------------------------


@cuda.jit
def block_predicates(x, out):
    i = cuda.grid(1)
    c = cuda.syncthreads_count(x[i] > 0)
    a = cuda.syncthreads_and(x[i] > -5)
    o = cuda.syncthreads_or(x[i] > 100)
    odd = cuda.syncthreads_count(x[i] & 1)  # an integer predicate
    if cuda.threadIdx.x == 0:
        b = cuda.blockIdx.x
        out[b, 0] = c
        out[b, 1] = a
        out[b, 2] = o
        out[b, 3] = odd


def _pred_setup(rng):
    x = rng.integers(-5, 100, (8, 256))
    x[0] = rng.integers(0, 100, 256)
    x[1, 17] = 150
    x[2] = rng.integers(-4, 100, 256)
    x[2, 200] = 101
    return [x.ravel(), poison((8, 4), np.int32)], 8, 256, 0


def _pred_ref(a):
    x = a[0].reshape(8, 256)
    return {1: np.stack([(x > 0).sum(1), (x > -5).all(1), (x > 100).any(1), (x & 1).sum(1)], 1)}


add_case("block_predicates", block_predicates, _pred_setup, _pred_ref)


@cuda.jit
def last_block_sum(x, partial, ticket, total):
    """The "threadfence reduction": the last block to finish (known from an
    ``atomic.inc`` ticket, which wraps back to 0) adds the per-block partials."""
    buf = cuda.shared.array(256, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    last = False
    if t == 0:
        partial[cuda.blockIdx.x] = buf[0]
        cuda.threadfence()  # the partial is visible device-wide before the ticket
        last = cuda.atomic.inc(ticket, 0, cuda.gridDim.x - 1) == cuda.gridDim.x - 1
    if cuda.syncthreads_or(last) and t == 0:
        acc = 0.0
        for b in range(cuda.gridDim.x):
            acc += partial[b]
        total[0] = acc


def _last_setup(rng):
    x = rng.standard_normal(20_000)
    return [x, poison(79, np.float64), np.zeros(1, np.uint32), poison(1, np.float64)], 79, 256, 0


add_case(
    "last_block_sum",
    last_block_sum,
    _last_setup,
    lambda a: {2: np.zeros(1, np.uint32), 3: np.array([a[0].sum()])},
    rtol=1e-12,
)


# -- atomics ----------------------------------------------------------------------------------


@cuda.jit
def histogram_privatised(x, counts, stats):
    """Per-block histograms and per-bin max/min/or/xor/and in shared memory, merged
    into the global ones by one atomic per bin and block."""
    h = cuda.shared.array(BINS, int32)
    s = cuda.shared.array((5, BINS), int64)
    t = cuda.threadIdx.x
    if t < BINS:
        h[t] = 0
        s[0, t] = -(2**62)
        s[1, t] = 2**62
        s[2, t] = 0
        s[3, t] = 0
        s[4, t] = -1
    cuda.syncthreads()
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        v = x[i]
        b = v % BINS
        cuda.atomic.add(h, b, 1)
        cuda.atomic.max(s, (0, b), v)
        cuda.atomic.min(s, (1, b), v)
        cuda.atomic.or_(s, (2, b), v)
        cuda.atomic.xor(s, (3, b), v)
        cuda.atomic.and_(s, (-1, b), v)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(counts, t, h[t])
        cuda.atomic.max(stats, (0, t), s[0, t])
        cuda.atomic.min(stats, (1, t), s[1, t])
        cuda.atomic.or_(stats, (2, t), s[2, t])
        cuda.atomic.xor(stats, (3, t), s[3, t])
        cuda.atomic.and_(stats, (4, t), s[4, t])


def _hist_setup(rng):
    x = rng.integers(0, 2**40, 50_000)
    stats = np.zeros((5, BINS), np.int64)
    stats[0], stats[1], stats[4] = -(2**62), 2**62, -1
    return [x, np.zeros(BINS, np.int32), stats], 32, 128, 0


def _hist_ref(a):
    x = a[0]
    b = x % BINS
    groups = [x[b == k] for k in range(BINS)]
    return {
        1: np.bincount(b, minlength=BINS).astype(np.int32),
        2: np.array(
            [
                [
                    g.max(),
                    g.min(),
                    np.bitwise_or.reduce(g),
                    np.bitwise_xor.reduce(g),
                    np.bitwise_and.reduce(g),
                ]
                for g in groups
            ]
        ).T,
    }


add_case("histogram_privatised", histogram_privatised, _hist_setup, _hist_ref)

ALL_TYPES = (np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64)
INT_TYPES = ALL_TYPES[:4]


def _values(rng, dtype, shape, nans=False):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        v = (rng.standard_normal(shape) * 100).astype(dtype)
        if nans:
            v[rng.random(shape) < 0.15] = np.nan
        return v
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@cuda.jit
def atomic_minmax_each(acc, y, olds):
    i = cuda.grid(1)
    if i < y.size:
        olds[0, i] = cuda.atomic.max(acc, (0, i), y[i])
        olds[1, i] = cuda.atomic.min(acc, (1, i), y[i])
        olds[2, i] = cuda.atomic.nanmax(acc, (2, i), y[i])
        olds[3, i] = cuda.atomic.nanmin(acc, (-1, i), y[i])


def _minmax_model(old, y):
    """numba's semantics: max/min leave a NaN (either side) alone; nanmax/nanmin
    ignore a NaN operand and replace a NaN element."""
    with np.errstate(invalid="ignore"):
        if old.dtype.kind != "f":
            return [
                np.maximum(old[0], y),
                np.minimum(old[1], y),
                np.maximum(old[2], y),
                np.minimum(old[3], y),
            ]
        either = np.isnan(old[0]) | np.isnan(y), np.isnan(old[1]) | np.isnan(y)
        return [
            np.where(either[0], old[0], np.maximum(old[0], y)),
            np.where(either[1], old[1], np.minimum(old[1], y)),
            np.where(np.isnan(y), old[2], np.fmax(old[2], y)),
            np.where(np.isnan(y), old[3], np.fmin(old[3], y)),
        ]


def _minmax_each_setup(dtype):
    def setup(rng):
        n = 2000
        return (
            [
                _values(rng, dtype, (4, n), nans=True),
                _values(rng, dtype, n, nans=True),
                poison((4, n), dtype),
            ],
            8,
            256,
            0,
        )

    return setup


for _t in ALL_TYPES:
    add_case(
        f"atomic_minmax_each_{np.dtype(_t).name}",
        atomic_minmax_each,
        _minmax_each_setup(_t),
        lambda a: {0: np.stack(_minmax_model(a[0], a[1])), 2: a[0]},
    )


@cuda.jit
def atomic_minmax_slots(res, x):
    i = cuda.grid(1)
    if i < x.size:
        s = i % 8
        cuda.atomic.max(res, (0, s), x[i])
        cuda.atomic.min(res, (1, s), x[i])
        cuda.atomic.nanmax(res, (2, s), x[i])
        cuda.atomic.nanmin(res, (3, s), x[i])


def _slots_setup(dtype):
    def setup(rng):
        x = _values(rng, dtype, 5000, nans=True)
        res = np.zeros((4, 8), dtype)
        lo, hi = (
            (-1e30, 1e30)
            if np.dtype(dtype).kind == "f"
            else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        )
        res[0], res[1], res[2], res[3] = lo, hi, lo, hi
        return [res, x], 20, 256, 0

    return setup


def _slots_ref(a):
    res, x = a[0].copy(), a[1]
    for s in range(8):
        v = x[s::8]
        v = v[~np.isnan(v)] if v.dtype.kind == "f" else v  # a NaN value never gets in
        res[0, s], res[1, s] = max(res[0, s], v.max()), min(res[1, s], v.min())
        res[2, s], res[3, s] = max(res[2, s], v.max()), min(res[3, s], v.min())
    return {0: res}


for _t in ALL_TYPES:
    add_case(
        f"atomic_minmax_slots_{np.dtype(_t).name}",
        atomic_minmax_slots,
        _slots_setup(_t),
        _slots_ref,
    )


@cuda.jit
def atomic_int_rmw(acc, y, olds):
    i = cuda.grid(1)
    if i < y.size:
        olds[0, i] = cuda.atomic.add(acc, (0, i), y[i])
        olds[1, i] = cuda.atomic.sub(acc, (1, i), y[i])
        olds[2, i] = cuda.atomic.and_(acc, (2, i), y[i])
        olds[3, i] = cuda.atomic.or_(acc, (3, i), y[i])
        olds[4, i] = cuda.atomic.xor(acc, (4, i), y[i])
        olds[5, i] = cuda.atomic.exch(acc, (5, i), y[i])


def _int_rmw_setup(dtype):
    def setup(rng):
        n = 1500
        return (
            [_values(rng, dtype, (6, n)), _values(rng, dtype, n), poison((6, n), dtype)],
            6,
            256,
            0,
        )

    return setup


def _int_rmw_ref(a):
    acc, y = a[0], a[1]
    return {0: np.stack([acc[0] + y, acc[1] - y, acc[2] & y, acc[3] | y, acc[4] ^ y, y]), 2: acc}


for _t in INT_TYPES:
    add_case(
        f"atomic_int_rmw_{np.dtype(_t).name}", atomic_int_rmw, _int_rmw_setup(_t), _int_rmw_ref
    )


@cuda.jit
def atomic_float_add_sub(acc, y, olds, total):
    i = cuda.grid(1)
    if i < y.size:
        olds[0, i] = cuda.atomic.add(acc, (0, i), y[i])
        olds[1, i] = cuda.atomic.sub(acc, (1, i), y[i])
        cuda.atomic.sub(total, 0, abs(y[i]))  # contended: one sum in any order


def _float_rmw_setup(dtype):
    def setup(rng):
        n = 3000
        return (
            [
                _values(rng, dtype, (2, n)),
                _values(rng, dtype, n),
                poison((2, n), dtype),
                np.zeros(1, dtype),
            ],
            12,
            256,
            0,
        )

    return setup


# The contended total adds 3000 magnitudes in whatever order the threads arrive:
# float32 rounding then differs from the float64 reference by up to ~n*eps/2 in the
# worst order (no cancellation, since magnitudes are summed), hence 1e-4.
for _t, _tol in ((np.float32, 1e-4), (np.float64, 1e-12)):
    add_case(
        f"atomic_float_add_sub_{np.dtype(_t).name}",
        atomic_float_add_sub,
        _float_rmw_setup(_t),
        lambda a: {
            0: np.stack([a[0][0] + a[1], a[0][1] - a[1]]),
            2: a[0],
            3: np.array([-np.abs(a[1].astype(np.float64)).sum()]),
        },
        rtol=_tol,
    )


@cuda.jit
def atomic_inc_dec(acc, lim, olds, ring):
    i = cuda.grid(1)
    if i < lim.size:
        olds[0, i] = cuda.atomic.inc(acc, (0, i), lim[i])
        olds[1, i] = cuda.atomic.dec(acc, (1, i), lim[i])
        cuda.atomic.inc(ring, 0, 9)  # contended: counts modulo 10
        cuda.atomic.dec(ring, 1, 9)


def _inc_dec_setup(dtype):
    def setup(rng):
        n = 3001
        base = 2**40 if dtype == np.uint64 else 0
        acc = (rng.integers(0, 12, (2, n)) + base).astype(dtype)
        lim = (rng.integers(0, 12, n) + base).astype(dtype)
        acc[:, ::7] = 0  # dec's wrap from 0 to lim
        acc[:, 1::7] = lim[1::7]
        return [acc, lim, poison((2, n), dtype), np.zeros(2, dtype)], 12, 256, 0

    return setup


def _inc_dec_ref(a):
    acc, lim = a[0], a[1]
    inc = np.where(acc[0] >= lim, 0, acc[0] + 1)
    dec = np.where((acc[1] == 0) | (acc[1] > lim), lim, acc[1] - 1)
    n = lim.size
    return {
        0: np.stack([inc, dec]).astype(acc.dtype),
        2: acc,
        3: np.array([n % 10, (-n) % 10], acc.dtype),
    }


for _t in (np.uint32, np.uint64):
    add_case(
        f"atomic_inc_dec_{np.dtype(_t).name}", atomic_inc_dec, _inc_dec_setup(_t), _inc_dec_ref
    )


@cuda.jit
def atomic_cas_each(acc, expect, val, olds):
    i = cuda.grid(1)
    if i < val.size:
        olds[i] = cuda.atomic.cas(acc, (i // 16, i % 16), expect[i], val[i])


def _cas_setup(dtype):
    def setup(rng):
        n = 2048
        acc = _values(rng, dtype, (n // 16, 16))
        expect = acc.ravel().copy()
        miss = rng.random(n) < 0.5
        expect[miss] = expect[miss] ^ dtype(1)
        return [acc, expect, _values(rng, dtype, n), poison(n, dtype)], 8, 256, 0

    return setup


def _cas_ref(a):
    acc, expect, val = a[0].ravel(), a[1], a[2]
    return {0: np.where(acc == expect, val, acc).reshape(a[0].shape), 3: acc}


for _t in INT_TYPES:
    add_case(f"atomic_cas_each_{np.dtype(_t).name}", atomic_cas_each, _cas_setup(_t), _cas_ref)


@cuda.jit
def cas_election(flag, counts):
    """One thread of the block wins ``compare_and_swap``; the others see its value."""
    t = cuda.threadIdx.x
    old = cuda.atomic.compare_and_swap(flag, 0, t + 1)
    cuda.syncthreads()
    cuda.atomic.add(counts, 0, old == 0)
    cuda.atomic.add(counts, 1, old == 0 or old == flag[0])


add_case(
    "cas_election",
    cas_election,
    lambda rng: ([np.zeros(1, np.int32), np.zeros(2, np.int32)], 1, 256, 0),
    lambda a: {1: np.array([1, 256], np.int32)},
)


# -- bit and float intrinsics -------------------------------------------------------------------


@cuda.jit
def bit_ops(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = cuda.popc(x[i])
        out[1, i] = cuda.clz(x[i])
        out[2, i] = cuda.ffs(x[i])


def _bit_setup(dtype):
    def setup(rng):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 1000, dtype=dtype, endpoint=True)
        x[:4] = [0, 1, info.max, info.min if info.min else 2]
        x[4:40] = np.ones(36, dtype) << (np.arange(36) % info.bits).astype(dtype)
        return [x, poison((3, x.size), np.int64)], 4, 256, 0

    return setup


def _bit_ref(a):
    x = a[0]
    bits = x.dtype.itemsize * 8
    u = [int(v) & ((1 << bits) - 1) for v in x]  # the two's-complement bit pattern
    return {
        1: np.array(
            [
                [bin(v).count("1") for v in u],
                [bits - v.bit_length() for v in u],
                [(v & -v).bit_length() for v in u],
            ],
            np.int64,
        )
    }


for _t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
    add_case(f"bit_ops_{np.dtype(_t).name}", bit_ops, _bit_setup(_t), _bit_ref)


@cuda.jit
def brev_ops(a, b, out_a, out_b):
    i = cuda.grid(1)
    if i < a.size:
        out_a[i] = cuda.brev(a[i])
        out_b[i] = cuda.brev(b[i])


def _brev_setup(rng):
    n = 500
    return (
        [
            rng.integers(0, 2**32, n, dtype=np.uint32),
            rng.integers(0, 2**64, n, dtype=np.uint64),
            poison(n, np.uint32),
            poison(n, np.uint64),
        ],
        2,
        256,
        0,
    )


def _brev(values, bits):
    return [int(format(int(v), f"0{bits}b")[::-1], 2) for v in values]


add_case(
    "brev_ops",
    brev_ops,
    _brev_setup,
    lambda a: {2: np.array(_brev(a[0], 32), np.uint32), 3: np.array(_brev(a[1], 64), np.uint64)},
)


@cuda.jit
def fma_cbrt(a, b, c, x, fused, root):
    i = cuda.grid(1)
    if i < a.size:
        fused[i] = cuda.fma(a[i], b[i], c[i])
        root[i] = cuda.cbrt(x[i])


def _fma_setup(dtype):
    def setup(rng):
        n = 1000
        a = rng.standard_normal(n).astype(dtype)
        b = rng.standard_normal(n).astype(dtype)
        c = -(a * b)  # fma(a, b, -round(a*b)) is the product's rounding error, exactly
        x = (rng.standard_normal(n) * 50).astype(dtype)
        return [a, b, c, x, poison(n, dtype), poison(n, dtype)], 4, 256, 0

    return setup


def _fma_ref(a):
    exact = [
        float(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)))
        for p, q, r in zip(a[0], a[1], a[2], strict=True)
    ]
    return {4: np.array(exact).astype(a[0].dtype), 5: np.cbrt(a[3].astype(np.float64))}


for _t, _tol in ((np.float32, 1e-6), (np.float64, 1e-13)):
    add_case(f"fma_cbrt_{np.dtype(_t).name}", fma_cbrt, _fma_setup(_t), _fma_ref, rtol=_tol)
