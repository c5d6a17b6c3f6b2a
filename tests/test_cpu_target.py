"""The CPU target: the end-to-end kernel set run on the host and compared with NumPy.

The kernel set itself runs on the CPU target in test_kernels_run.py (through
``cuda.jit(target="cpu")``); here ``compile_cpu_kernel`` and ``CPUKernel.launch``
are driven directly, pinning what the kernel set does not reach: barriers in loops
and under uniform branches, per-block shared memory while blocks run on two cores,
atomics under contention, launch limits.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from kernels import CASES

from cujit import cuda, float32, float64, int32
from cujit.diagnostics import LaunchError
from cujit.pipeline import compile_kernel
from cujit.targets.cpu import compile_cpu_kernel, memory
from cujit.targets.cpu.launch import PARALLEL_MIN_THREADS
from cujit.types import typeof

_compiled: dict = {}


def cpu_kernel(kernel, args):
    """Stages 1-5 then the CPU target, once per kernel and argument types."""
    pyfunc = getattr(kernel, "py_func", kernel)
    types = tuple(typeof(a) for a in args)
    key = (pyfunc, types)
    if key not in _compiled:
        typed = compile_kernel(pyfunc, types, stop_after="passes").outputs["passes"]
        _compiled[key] = compile_cpu_kernel(typed)
    return _compiled[key], types


def run(kernel, grid, block, args, shmem=0):
    k, types = cpu_kernel(kernel, args)
    dims = [
        tuple(d) + (1,) * (3 - len(d)) if isinstance(d, tuple) else (d, 1, 1) for d in (grid, block)
    ]
    k.launch(dims[0], dims[1], shmem, types, args)
    return k


# -- barriers -------------------------------------------------------------------------

SCAN = 256


@cuda.jit
def block_scan(x, out):
    """Hillis-Steele inclusive scan per block, syncthreads inside a while loop:
    without a real barrier a thread reads a neighbour's partial sum of another step."""
    buf = cuda.shared.array(SCAN, np.int64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i]
    cuda.syncthreads()
    offset = 1
    while offset < SCAN:
        v = buf[t]
        if t >= offset:
            v += buf[t - offset]
        cuda.syncthreads()
        buf[t] = v
        cuda.syncthreads()
        offset *= 2
    out[i] = buf[t]


def test_block_scan_barriers_in_a_while_loop_on_both_cores():
    nblocks = 2 * PARALLEL_MIN_THREADS // SCAN  # large enough to run on every core
    x = np.random.default_rng().integers(-1000, 1000, nblocks * SCAN).astype(np.int64)
    out = np.full_like(x, -77)
    run(block_scan, nblocks, SCAN, [x, out])
    np.testing.assert_array_equal(out, np.cumsum(x.reshape(nblocks, SCAN), axis=1).ravel())


@cuda.jit
def uniform_branch_barrier(x, out, mode, live):
    """Barriers under a branch every thread takes alike, in a range loop, with some
    threads gone (returned) before the barriers: those drop out, as on the GPU."""
    buf = cuda.shared.array(64, float64)
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * cuda.blockDim.x
    if t >= live:
        out[base + t] = -1.0
        return
    buf[t] = x[base + t]
    for r in range(3):
        if mode > 0:
            cuda.syncthreads()
            v = buf[(t + 1) % live]
            cuda.syncthreads()
            buf[t] = v + r
    cuda.syncthreads()
    out[base + t] = buf[t]


@pytest.mark.parametrize("mode", [0, 1])
def test_barriers_under_uniform_branches_and_early_exit(mode):
    live, nblocks = 48, 5
    x = np.random.default_rng().standard_normal(64 * nblocks)
    out = np.full_like(x, np.nan)
    run(uniform_branch_barrier, nblocks, 64, [x, out, np.int32(mode), np.int64(live)])
    blocks = x.reshape(nblocks, 64)[:, :live]
    expect = blocks
    for r in range(3 if mode else 0):  # each round reads the next thread's value
        expect = np.roll(expect, -1, axis=1) + r
    got = out.reshape(nblocks, 64)
    np.testing.assert_array_equal(got[:, :live], expect)
    np.testing.assert_array_equal(got[:, live:], -1.0)


@cuda.jit
def thread_ids_3d(out):
    """Each thread posts its linear id in shared memory; after the barrier it reads
    the mirror thread's: 3-d thread ids and a barrier across all three axes."""
    buf = cuda.shared.array((4, 6, 8), int32)
    x, y, z = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    buf[z, y, x] = (z * 6 + y) * 8 + x + 1000 * cuda.blockIdx.y
    cuda.syncthreads()
    out[cuda.blockIdx.x, cuda.blockIdx.y, z, y, x] = buf[3 - z, 5 - y, 7 - x]


def test_3d_blocks_with_a_barrier():
    out = np.full((2, 3, 4, 6, 8), -77, np.int32)
    run(thread_ids_3d, (2, 3), (8, 6, 4), [out])
    ids = np.arange(4 * 6 * 8).reshape(4, 6, 8)[::-1, ::-1, ::-1]
    expect = ids[None, None] + 1000 * np.arange(3)[None, :, None, None, None]
    np.testing.assert_array_equal(out, np.broadcast_to(expect, out.shape))


@cuda.jit
def local_across_barriers(x, out, shift):
    """Per-thread local arrays live across barriers (in the coroutine frame) and
    static and dynamic shared arrays do not overlap."""
    tmp = cuda.local.array(4, float64)
    stat = cuda.shared.array(32, float64)
    dyn = cuda.shared.array(0, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    for k in range(4):
        tmp[k] = x[i] * (k + 1)
    stat[t] = x[i]
    dyn[t] = -x[i]
    cuda.syncthreads()
    a = stat[(t + shift) % 32]
    b = dyn[(t + 2 * shift) % 32]
    cuda.syncthreads()
    out[i] = tmp[0] + tmp[1] + tmp[2] + tmp[3] + 100 * a + 1000 * b + dyn.size


def test_local_arrays_and_two_kinds_of_shared_memory():
    nblocks = 3
    x = np.random.default_rng().standard_normal(32 * nblocks)
    out = np.full_like(x, np.nan)
    run(local_across_barriers, nblocks, 32, [x, out, np.int64(5)], shmem=40 * 8)
    b = x.reshape(nblocks, 32)
    expect = (10 * b + 100 * np.roll(b, -5, axis=1) - 1000 * np.roll(b, -10, axis=1) + 40).ravel()
    # By relative norm: an element near zero after cancelling terms of ~1000 carries a
    # rounding error far above its own 1e-13 (an element-wise rtol failed on one such).
    assert np.linalg.norm(out - expect) <= 1e-12 * np.linalg.norm(expect)


@cuda.jit
def big_frame(x, out):
    """A local array of 1 KiB live across a barrier: the coroutine frame outgrows the
    first guess of a frame slot (heap on the first launch, a larger slot after)."""
    tmp = cuda.local.array(128, float64)
    buf = cuda.shared.array(64, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    for k in range(128):
        tmp[k] = x[i] + k
    buf[t] = x[i]
    cuda.syncthreads()
    acc = buf[63 - t]
    for k in range(128):
        acc += tmp[k]
    out[i] = acc


def test_large_coroutine_frames_on_heap_then_in_slots():
    from cujit.targets.cpu.launch import FIRST_FRAME_GUESS

    x = np.random.default_rng().standard_normal(64 * 6)
    b = x.reshape(6, 64)
    expect = (b[:, ::-1] + 128 * b + 127 * 64).ravel()
    for launch in range(2):
        out = np.full_like(x, np.nan)
        k = run(big_frame, 6, 64, [x, out])
        np.testing.assert_allclose(out, expect, rtol=1e-12, err_msg=f"launch {launch}")
        assert k._frame_bytes >= 128 * 8 > FIRST_FRAME_GUESS


# -- atomics while blocks run on both cores -------------------------------------------


@cuda.jit
def contended_atomics(ticket, counts, fsum, dsum):
    i = cuda.grid(1)
    counts_old = cuda.atomic.add(counts, 0, 1)
    ticket[i] = counts_old
    cuda.atomic.add(counts, 1, np.int64(2))
    cuda.atomic.add(fsum, 0, float32(1.0))
    cuda.atomic.add(dsum, i % 3, 0.5)


def test_atomics_are_atomic_under_contention():
    nblocks, block = 4 * PARALLEL_MIN_THREADS // 128, 128
    n = nblocks * block
    ticket = np.full(n, -77, np.int64)
    counts = np.zeros(2, np.int64)
    fsum = np.zeros(1, np.float32)
    dsum = np.zeros(3, np.float64)
    run(contended_atomics, nblocks, block, [ticket, counts, fsum, dsum])
    # Every old value is handed out exactly once: the adds did not race.
    np.testing.assert_array_equal(np.sort(ticket), np.arange(n))
    np.testing.assert_array_equal(counts, [n, 2 * n])
    assert fsum[0] == n  # below 2**24: every float32 partial sum is exact
    np.testing.assert_array_equal(dsum, [0.5 * len(range(k, n, 3)) for k in range(3)])


def test_large_grids_are_planned_on_every_core():
    from cujit.targets.cpu.launch import host_cores, plan

    assert plan(1, 1024) == (1, 1)
    assert plan(4, 64)[0] == 1  # too small to repay waking a second thread
    workers, chunk = plan(4096, 256)
    assert workers == min(host_cores(), 4096) and 1 <= chunk <= 4096 // workers


# -- math, scalars, launch checks ---------------------------------------------------


@cuda.jit
def float32_math(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[0, i] = math.sqrt(v) + math.floor(v * float32(10))
        out[1, i] = math.exp(v) * math.log(v)
        out[2, i] = math.sin(v) + math.atan2(v, float32(0.5))
        out[3, i] = math.erf(v) + math.hypot(v, float32(2)) + abs(-v)


def test_float32_math_uses_the_host_library():
    x = np.random.default_rng().uniform(0.1, 2.0, 500).astype(np.float32)
    out = np.full((4, 500), np.nan, np.float32)
    k = run(float32_math, 2, 256, [x, out])
    xd = x.astype(np.float64)
    from math import erf

    expect = np.stack(
        [
            np.sqrt(xd) + np.floor(x * np.float32(10)),
            np.exp(xd) * np.log(xd),
            np.sin(xd) + np.arctan2(xd, 0.5),
            np.vectorize(erf)(xd) + np.hypot(xd, 2) + xd,
        ]
    )
    np.testing.assert_allclose(out, expect, rtol=2e-6)
    assert re.search(r'call float @"?sinf"?\(', k.llvm_ir)  # single precision throughout


@cuda.jit
def free(pair, flag, out):  # named like the C library's free(), which coroutines call
    i = cuda.grid(1)
    if i < out.size:
        out[i] = pair[0] * i + pair[1] if flag else -1
    cuda.syncthreads()


def test_tuple_and_bool_scalars_and_a_kernel_named_like_libc():
    out = np.full(100, -77, np.int64)
    run(free, 1, 128, [(3, 7), True, out])
    np.testing.assert_array_equal(out, 3 * np.arange(100) + 7)
    run(free, 1, 128, [(3, 7), False, out])
    np.testing.assert_array_equal(out, -1)


def test_launch_limits_and_gpu_arrays_are_refused():
    x = np.zeros(8, np.float32)
    k, types = cpu_kernel(CASES[0].kernel, [np.float32(1), x, x, x])
    with pytest.raises(LaunchError, match="1024"):
        k.launch((1, 1, 1), (2048, 1, 1), 0, types, [np.float32(1), x, x, x])
    with pytest.raises(LaunchError, match="block.z"):
        k.launch((1, 1, 1), (1, 1, 65), 0, types, [np.float32(1), x, x, x])

    class GpuArray:
        @property
        def __cuda_array_interface__(self):
            return {"shape": (8,), "typestr": "<f4", "data": (0, False), "version": 3}

    with pytest.raises(LaunchError, match="GPU device array"):
        k.launch((1, 1, 1), (8, 1, 1), 0, types, [np.float32(1), GpuArray(), x, x])


@pytest.mark.parametrize(
    "sig,value,stored",
    [
        ("void(int64, int64[:])", 2**63 - 1, 2**63 - 1),
        ("void(int64, int64[:])", 2**63, -(2**63)),  # int64's bits: taken as numba takes them
        ("void(int64, int64[:])", 2**64, None),
        ("void(int64, int64[:])", -(2**70), None),
        ("void(int32, int64[:])", -(2**31), -(2**31)),
        ("void(int32, int64[:])", 2**32 - 1, -1),  # 0xFFFFFFFF is an int32's -1
        ("void(int32, int64[:])", 2**32, None),
        ("void(int32, int64[:])", -(2**31) - 1, None),
        ("void(uint8, int64[:])", 255, 255),
        ("void(uint8, int64[:])", -1, 255),
        ("void(uint8, int64[:])", 256, None),
        ("void(uint64, int64[:])", 2**64 - 1, -1),  # uint64's top bit: wraps in int64
    ],
)
def test_an_int_of_its_types_bits_is_taken_a_wider_one_refused(sig, value, stored):
    # As the GPU launch (tests/test_launcher.py): an int that fits the parameter's bits
    # reaches the kernel as those bits (ctypes' rule, which numba's launch follows).
    @cuda.jit(sig, target="cpu")
    def store(n, out):
        out[0] = n

    out = np.zeros(1, np.int64)
    if stored is not None:
        store[1, 1](value, out)
        assert out[0] == stored
    else:
        with pytest.raises(LaunchError, match=f"cannot hold {value} "):
            store[1, 1](value, out)
        assert out[0] == 0


# -- device arrays backed by host memory ----------------------------------------------


@cuda.jit
def double_it(v):
    i = cuda.grid(1)
    if i < v.size:
        v[i] = v[i] * 2


def test_device_array_api():
    host = np.random.default_rng().standard_normal(1000)
    d = memory.to_device(host)
    # numba's simulator's interface, over host memory (tests/test_cpu_array_interface.py)
    assert d.__cuda_array_interface__["data"][0] == d.ctypes.data
    assert d.is_c_contiguous() and d.alloc_size == host.nbytes
    view = d[100:900:3]  # a strided view sharing d's memory, passed to a kernel
    run(double_it, 4, 256, [view])
    got = d.copy_to_host()
    assert type(got) is np.ndarray and not np.shares_memory(got, d)
    expected = host.copy()
    expected[100:900:3] *= 2
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(host, memory.to_device(host).copy_to_host())  # host untouched

    f = memory.device_array_like(np.asfortranarray(np.ones((3, 4), np.float32)))
    assert f.shape == (3, 4) and f.dtype == np.float32 and f.is_f_contiguous()
    f.copy_to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    into = np.empty((3, 4), np.float32)
    assert f.copy_to_host(into) is into
    np.testing.assert_array_equal(into, np.arange(12).reshape(3, 4))
    e = memory.device_array((2, 5), np.int32)
    assert e.shape == (2, 5) and e.dtype == np.int32
    with pytest.raises(ValueError):
        e.copy_to_host(np.empty(3, np.int32))


@cuda.jit
def every_atomic(v, ints, uints, floats, olds):
    i = cuda.grid(1)
    if i < v.size:
        x = v[i]
        cuda.atomic.sub(ints, 0, x)
        cuda.atomic.max(ints, 1, x)
        cuda.atomic.min(ints, 2, x)
        cuda.atomic.or_(ints, 3, x & 0xFF)
        cuda.atomic.and_(ints, 4, x | 0x100)
        cuda.atomic.xor(ints, 5, x)
        cuda.atomic.inc(uints, 0, np.uint32(9))
        cuda.atomic.dec(uints, 1, np.uint32(5))
        cuda.atomic.max(uints, 2, np.uint32(x + 1000))
        cuda.atomic.max(floats, 0, float64(x) * 0.5)
        cuda.atomic.min(floats, 1, float64(x) * 0.5)
        cuda.atomic.nanmax(floats, 2, float64(x) if x % 2 == 0 else math.nan)
        cuda.atomic.sub(floats, 3, 0.25)
        olds[i] = cuda.atomic.cas(ints, 6, i, i + 1)  # only the i-th in turn succeeds
        cuda.atomic.exch(ints, 7, 5)


def test_every_atomic_operation():
    n = 500
    v = np.random.default_rng().integers(-999, 999, n).astype(np.int64)
    ints = np.array([0, -(10**6), 10**6, 0, -1, 0, 0, 0], np.int64)
    uints = np.zeros(3, np.uint32)
    floats = np.array([-np.inf, np.inf, -np.inf, 0.0])
    olds = np.full(n, -77, np.int64)
    run(every_atomic, 2, 256, [v, ints, uints, floats, olds])
    xor = np.bitwise_xor.reduce(v)
    andv = np.bitwise_and.reduce(v | 0x100)
    orv = np.bitwise_or.reduce(v & 0xFF)
    # cas(ints[6], i -> i + 1) succeeds exactly when thread i finds i there: the final
    # value counts the successes, whatever order the threads ran in (thread 0's is certain)
    assert ints[6] == (olds == np.arange(n)).sum() >= 1 and olds[0] == 0
    np.testing.assert_array_equal(ints[:6], [-v.sum(), v.max(), v.min(), orv, andv, xor])
    assert ints[7] == 5
    # inc wraps to 0 after 9: n increments from 0 -> n % 10; dec from 0 wraps to 5 first
    assert uints[0] == n % 10 and uints[1] == (5 - (n - 1) % 6) and uints[2] == v.max() + 1000
    np.testing.assert_array_equal(
        floats, [v.max() * 0.5, v.min() * 0.5, v[v % 2 == 0].max(), -0.25 * n]
    )


def test_laneid_and_warpsize_follow_the_linear_thread_index():
    @cuda.jit(target="cpu")
    def lanes(out):
        x, y = cuda.threadIdx.x, cuda.threadIdx.y
        out[0, y, x] = cuda.laneid
        out[1, y, x] = cuda.warpsize

    out = np.full((2, 4, 24), -1, np.int32)
    lanes[1, (24, 4)](out)
    np.testing.assert_array_equal(out[0].ravel(), np.arange(96) % 32)
    assert (out[1] == 32).all()


def test_float_mod_of_a_nan_known_to_be_nan():
    """Regression (found by test_random_kernels): under ``if x != x`` LLVM knew x was
    NaN, hence "not infinite", and rewrote the libm call ``fmodf(x, 1.0)`` into
    ``frem nnan`` -- poison -- so ``x %= 1.0`` stored 0.0.  Python (and the GPU)
    give NaN.  The CPU target now calls fmod under a name LLVM does not know."""

    @cuda.jit(target="cpu")
    def mod_if_nan(x, out32, y, out64):
        i = cuda.grid(1)
        a = x[i]
        if a != a:
            a %= float32(1.0)
        out32[i] = a
        b = y[i]
        if b != b:
            b = b // 3.0 + b % 2.5
        out64[i] = b

    x = np.array([np.nan, 2.5, -np.inf, -0.75], np.float32)
    y = x.astype(np.float64)
    out32, out64 = np.zeros(4, np.float32), np.zeros(4, np.float64)
    mod_if_nan[1, 4](x, out32, y, out64)
    np.testing.assert_array_equal(out32, x)  # NaN stays NaN (assert_array_equal: nan == nan)
    np.testing.assert_array_equal(out64, y)
    assert np.isnan(out32[0]) and np.isnan(out64[0])
