"""Cooperative groups: ``cuda.cg.this_grid().sync()``, a grid-wide barrier, and the
cooperative launch it needs.

Typing, PTX and cubin (sm_80, sm_90) are checked here; the kernels run on the CPU
target (every thread of the grid a coroutine under one scheduler) and, marked ``gpu``,
on a GPU (``cuLaunchCooperativeKernel``), against NumPy references.
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, float32, float64, int32
from cujit.diagnostics import LaunchError, TypingError
from cujit.ir.analysis import uses_grid_sync
from cujit.options import Options
from cujit.pipeline import compile_kernel

# -- the kernels (plain functions: each test makes the target's kernel) ----------------


@cuda.jit(device=True)
def jacobi_point(src, dst, f, h2, j):
    n = src.size
    left = src[j - 1] if j > 0 else 0.0
    right = src[j + 1] if j < n - 1 else 0.0
    dst[j] = 0.5 * (left + right + h2 * f[j])


def jacobi(u, v, f, h2, iters):
    """``iters`` Jacobi sweeps for -u'' = f (zero boundaries), u and v in turn; a grid
    sync after each sweep, so no thread reads a point of the sweep still being made."""
    g = cuda.cg.this_grid()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for it in range(iters):
        j = start
        while j < u.size:
            if it % 2 == 0:
                jacobi_point(u, v, f, h2, j)
            else:
                jacobi_point(v, u, f, h2, j)
            j += stride
        g.sync()


def jacobi_reference(u, f, h2, iters):
    u = u.copy()
    for _ in range(iters):
        left = np.concatenate(([0.0], u[:-1]))
        right = np.concatenate((u[1:], [0.0]))
        u = 0.5 * (left + right + h2 * f)
    return u


def neighbours(board, out, rounds):
    """Each round every block writes its slot, syncs the grid, then reads the next
    block's slot: right only if every block wrote before any block read."""
    b = cuda.blockIdx.x
    nb = cuda.gridDim.x
    tid = cuda.threadIdx.x
    s = cuda.shared.array(1, int32)
    for r in range(rounds):
        if tid == 0:
            s[0] = b * 1000 + r  # through shared memory: each block has its own
        cuda.syncthreads()
        if tid == 0:
            board[b] = s[0]
        cuda.cg.this_grid().sync()
        out[r, b * cuda.blockDim.x + tid] = board[(b + 1) % nb]
        cuda.cg.this_grid().sync()  # nobody overwrites a slot before all read it


def neighbours_reference(nblocks, threads, rounds):
    nxt = (np.arange(nblocks) + 1) % nblocks
    rows = [np.repeat(nxt * 1000 + r, threads) for r in range(rounds)]
    return np.array(rows, np.int32)


def uneven_block_barriers(out, counts):
    """Blocks pass different numbers of ``syncthreads`` before the grid sync; after it,
    each reads every block's count.  A grid barrier that opened on the k-th suspension
    of each thread (not on the grid's arrival) would read unfinished counts."""
    b = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
    tid = cuda.threadIdx.x
    acc = cuda.shared.array(64, int32)
    acc[tid] = 0
    cuda.syncthreads()
    for _ in range(b % 4):
        nxt = acc[(tid + 1) % cuda.blockDim.x]
        cuda.syncthreads()
        acc[tid] += nxt + 1
        cuda.syncthreads()
    if tid == 0:
        counts[b] = acc[0]
    cuda.cg.this_grid().sync()
    total = 0
    for k in range(counts.size):
        total += counts[k]
    out[b * cuda.blockDim.x + tid] = total


def uneven_reference(nblocks, threads):
    counts = []
    for b in range(nblocks):
        acc = np.zeros(threads, np.int64)
        for _ in range(b % 4):
            acc = acc + np.roll(acc, -1) + 1
        counts.append(acc[0])
    return np.full(nblocks * threads, sum(counts), np.int32)


def plain(x):
    x[cuda.grid(1)] = 1.0


# -- typing, PTX and cubin -------------------------------------------------------------


def typed(fn, sig):
    return compile_kernel(fn, sig, Options(verify=True), stop_after="passes").outputs["passes"]


def test_grid_sync_types_to_one_intrinsic_and_marks_the_kernel():
    fn = typed(jacobi, (float64[::1], float64[::1], float64[::1], float64, int32))
    assert uses_grid_sync(fn)
    assert not uses_grid_sync(typed(plain, (float32[:],)))

    def via_device_function(x):
        sync_then_write(x)

    callee_fn = typed(via_device_function, (float32[:],))
    assert uses_grid_sync(callee_fn)  # the barrier sits in a callee


@cuda.jit(device=True)
def sync_then_write(x):
    cuda.cg.this_grid().sync()
    x[cuda.grid(1)] = 2.0


@pytest.mark.parametrize("arch", [(8, 0), (9, 0)])
def test_grid_sync_compiles_to_the_workspace_barrier(arch):
    result = compile_kernel(neighbours, (int32[::1], int32[:, ::1], int32), Options(arch=arch))
    assert result.cooperative
    assert result.cubin[:4] == b"\x7fELF"
    ptx = result.ptx
    # the driver's grid workspace: %envreg1 high, %envreg2 low; one atomic arrival per
    # block on its barrier word, spinning on a non-cached load, fenced both sides
    assert "%envreg1" in ptx and "%envreg2" in ptx
    assert "atom.global.add.u32" in ptx
    assert "ld.volatile.global.u32" in ptx or "ld.relaxed.gpu.global.u32" in ptx
    assert ptx.count("membar.gl") >= 2 and "bar.sync" in ptx


def test_a_plain_kernel_is_not_cooperative():
    result = compile_kernel(plain, (float32[:],), Options(arch=(9, 0)))
    assert not result.cooperative and "%envreg" not in result.ptx


def test_grid_sync_in_a_device_function_compiles_for_the_gpu():
    def kern(x):
        sync_then_write(x)

    result = compile_kernel(kern, (float32[:],), Options(arch=(9, 0)))
    assert result.cooperative and "%envreg1" in result.ptx


def test_a_cache_hit_remembers_the_kernel_is_cooperative(tmp_path, monkeypatch):
    from cujit.cache import compile_cached

    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    sig = (int32[::1], int32[:, ::1], int32)
    first = compile_cached(neighbours, sig, Options(arch=(9, 0)))
    hit = compile_cached(neighbours, sig, Options(arch=(9, 0)))
    assert "cache" in hit.times and first.cooperative and hit.cooperative


def line_of(fn, offset):
    return fn.__code__.co_firstlineno + offset


def bad_args(x):
    cuda.cg.this_grid(1)


def bad_sync(x):
    g = cuda.cg.this_grid()
    g.sync(x)


def bad_method(x):
    g = cuda.cg.this_grid()
    g.wait()


def not_called(x):
    cuda.cg.this_grid.sync()


def stored(x):
    x[0] = cuda.cg.this_grid()


@pytest.mark.parametrize(
    "fn, offset, message",
    [
        (bad_args, 1, "cuda.cg.this_grid() takes no arguments (1 given)"),
        (bad_sync, 2, "cuda.cg.GridGroup.sync() takes no arguments (1 given)"),
        (bad_method, 2, "'cuda.cg.GridGroup' has no attribute 'wait'"),
        (not_called, 1, "'cuda.cg.this_grid' has no attribute 'sync'"),
        (stored, 1, "needs a number, not pyobject(cujit.cuda.cg.GridGroup)"),
    ],
)
def test_misuse_is_a_typing_error_at_the_line(fn, offset, message):
    with pytest.raises(TypingError) as info:
        cuda.compile_ptx(fn, "void(float32[:])")
    assert message in str(info.value)
    assert info.value.loc.line == line_of(fn, offset)


def test_misuse_hints():
    with pytest.raises(TypingError, match=r"hint: call it first: g = cuda.cg.this_grid\(\)"):
        cuda.compile_ptx(not_called, "void(float32[:])")
    with pytest.raises(TypingError, match="a grid group has one method: sync"):
        cuda.compile_ptx(bad_method, "void(float32[:])")


def test_on_the_host_it_says_kernels_only():
    with pytest.raises(RuntimeError, match="only be called inside a @cuda.jit kernel"):
        cuda.cg.this_grid()


# -- the CPU target -----------------------------------------------------------------


def cpu(fn):
    return cuda.jit(target="cpu")(fn)


def jacobi_problem(n):
    h = 1.0 / (n + 1)
    x = np.linspace(h, 1 - h, n)
    return np.zeros(n), np.zeros(n), np.sin(np.pi * x) * np.pi**2, h * h


def run_jacobi(kernel, n, grid, block, iters, to_device=lambda a: a, back=lambda a: a, rtol=1e-12):
    u, v, f, h2 = jacobi_problem(n)
    expected = jacobi_reference(u, f, h2, iters)
    du, dv, df = to_device(u), to_device(v), to_device(f)
    kernel[grid, block](du, dv, df, h2, iters)
    got = back(du if iters % 2 == 0 else dv)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-14)
    return got


def test_cpu_jacobi_with_a_grid_sync_per_sweep():
    got = run_jacobi(cpu(jacobi), n=3000, grid=24, block=64, iters=150)
    u, _, f, h2 = jacobi_problem(3000)
    assert np.abs(got - jacobi_reference(u, f, h2, 149)).max() > 1e-9  # every sweep counts


def test_cpu_block_writes_then_reads_the_next_block():
    k = cpu(neighbours)
    board = np.full(40, -1, np.int32)
    out = np.zeros((5, 40 * 32), np.int32)
    k[40, 32](board, out, 5)
    np.testing.assert_array_equal(out, neighbours_reference(40, 32, 5))


def test_cpu_uneven_block_barriers_then_grid_sync_on_a_2d_grid():
    k = cpu(uneven_block_barriers)
    counts = np.zeros(24, np.int32)
    out = np.zeros(24 * 64, np.int32)
    k[(6, 4), 64](out, counts)
    np.testing.assert_array_equal(out, uneven_reference(24, 64))


def test_cpu_too_large_grid_is_a_clear_error():
    from cujit.targets.cpu.launch import MAX_GRID_SYNC_THREADS

    k = cpu(neighbours)
    board = np.zeros(1, np.int32)
    out = np.zeros((1, 1), np.int32)
    k[1, 32](board, out, 0)  # compiles
    most = k.max_cooperative_grid_blocks(256)
    assert most == MAX_GRID_SYNC_THREADS // 256
    with pytest.raises(LaunchError) as info:
        k[most + 1, 256](board, out, 0)
    text = str(info.value)
    assert "'neighbours'" in text and f"{most + 1} blocks" in text and f"maximum of {most}" in text


def test_cpu_grid_sync_in_a_device_function_runs_inlined():
    def kern(x, out):
        i = cuda.grid(1)
        x[i] = 1.0
        sync_then_write(out)  # every thread has written x before any writes out
        out[i] += x[(i + 37) % x.size]

    x, out = np.zeros(256, np.float32), np.full(256, np.nan, np.float32)
    k = cpu(kern)
    k[4, 64](x, out)
    np.testing.assert_array_equal(out, np.full(256, 3.0, np.float32))
    assert next(iter(k.overloads.values())).result.outputs["native"].grid_sync


# -- on the GPU -------------------------------------------------------------------------


@pytest.mark.gpu
def test_gpu_jacobi_with_a_grid_sync_per_sweep():
    k = cuda.jit(jacobi)
    # (libNVVM contracts a * b + c to an fma: a last-bit difference per sweep)
    run_jacobi(
        k,
        n=100_000,
        grid=64,
        block=128,
        iters=400,
        to_device=cuda.to_device,
        back=lambda a: a.copy_to_host(),
        rtol=1e-9,
    )
    assert k.overloads[next(iter(k.overloads))].result.cooperative


@pytest.mark.gpu
def test_gpu_block_writes_then_reads_the_next_block():
    k = cuda.jit(neighbours)
    board = cuda.to_device(np.full(96, -1, np.int32))
    out = cuda.to_device(np.zeros((20, 96 * 64), np.int32))
    k[96, 64](board, out, 20)
    np.testing.assert_array_equal(out.copy_to_host(), neighbours_reference(96, 64, 20))


@pytest.mark.gpu
def test_gpu_uneven_block_barriers_then_grid_sync_on_a_2d_grid():
    k = cuda.jit(uneven_block_barriers)
    counts = cuda.to_device(np.zeros(48, np.int32))
    out = cuda.to_device(np.zeros(48 * 64, np.int32))
    k[(8, 6), 64](out, counts)
    np.testing.assert_array_equal(out.copy_to_host(), uneven_reference(48, 64))


@pytest.mark.gpu
def test_gpu_max_cooperative_grid_blocks_and_the_too_large_grid():
    from cujit.runtime.context import get_context

    k = cuda.jit(neighbours)
    board = cuda.to_device(np.zeros(1, np.int32))
    out = cuda.to_device(np.zeros((1, 1), np.int32))
    k[1, 32](board, out, 0)
    most = k.max_cooperative_grid_blocks(256)
    sms = get_context().device.multiprocessor_count
    assert most >= sms and most % sms == 0
    assert k.overloads[next(iter(k.overloads))].max_cooperative_grid_blocks((16, 16)) == most
    # exactly the maximum runs (every block resident) ...
    board = cuda.to_device(np.full(most, -1, np.int32))
    out = cuda.to_device(np.zeros((2, most * 256), np.int32))
    k[most, 256](board, out, 2)
    np.testing.assert_array_equal(out.copy_to_host(), neighbours_reference(most, 256, 2))
    # ... one more block is refused before the driver sees it
    with pytest.raises(LaunchError) as info:
        k[most + 1, 256](board, out, 0)
    text = str(info.value)
    assert "'neighbours'" in text and f"{most + 1} blocks" in text and f"maximum of {most}" in text


@pytest.mark.gpu
def test_gpu_graph_capture_refuses_a_cooperative_kernel():
    k = cuda.jit(neighbours)
    board = cuda.to_device(np.zeros(4, np.int32))
    out = cuda.to_device(np.zeros((1, 4 * 32), np.int32))
    s = cuda.stream()
    k[4, 32, s](board, out, 1)  # compiled and loaded outside the capture
    s.synchronize()
    with pytest.raises(LaunchError, match="cooperative launch, which cujit does not capture"):
        with cuda.graph(s):
            k[4, 32, s](board, out, 1)
    k[4, 32, s](board, out, 1)  # the stream still works
    s.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), neighbours_reference(4, 32, 1))


@pytest.mark.gpu
def test_gpu_plain_kernels_keep_cuLaunchKernel():
    k = cuda.jit(plain)
    x = cuda.to_device(np.zeros(64, np.float32))
    k[2, 32](x)
    spec = next(iter(k.overloads.values()))
    fn = next(v for key, v in spec.functions.items() if isinstance(key, int))
    assert not fn.cooperative and fn.cu_launch.__name__ == "cuLaunchKernel"
