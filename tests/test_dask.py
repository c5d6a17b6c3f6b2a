"""cujit kernels in Dask (cujit.dask) on a LocalCluster of two worker processes, on the
CPU target: map_blocks and map_overlap with module-level and closure kernels against
NumPy, one compile per worker, the shared on-disk cache, errors travelling back."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import numpy as np
import pytest

dask = pytest.importorskip("dask", reason="cujit.dask needs dask: pip install 'cujit[dask]'")
distributed = pytest.importorskip(
    "distributed", reason="cujit.dask's tests need distributed: pip install 'cujit[dask]'"
)
pytest.importorskip("dask.array", reason="cujit.dask needs dask.array: pip install 'cujit[dask]'")

import dask.array as da
import dask_kernels as dk

import cujit
import cujit.dask as cd
from cujit import cuda
from cujit.diagnostics import UnsupportedError

TIMEOUT = 120  # seconds for any one result, on a busy 2-core machine
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(os.path.abspath(cujit.__file__)))
ROOT = os.path.dirname(HERE)


@contextlib.contextmanager
def _environ(values: dict):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("dask-cache")


@pytest.fixture(scope="module")
def client(cache_dir):
    env = {
        "CUJIT_TARGET": "cpu",
        "CUJIT_CACHE_DIR": str(cache_dir),
        "PYTHONPATH": os.pathsep.join([SRC, HERE, os.environ.get("PYTHONPATH", "")]),
    }
    with dask.config.set({"distributed.comm.timeouts.connect": "60s"}):
        with _environ(env):  # the spawned workers inherit it (and their imports see it)
            cluster = distributed.LocalCluster(
                n_workers=2,
                processes=True,
                threads_per_worker=1,
                host="127.0.0.1",
                dashboard_address=None,
                env=env,
                death_timeout=60,
                silence_logs=50,
            )
        try:
            with distributed.Client(cluster, timeout=60) as c:
                c.wait_for_workers(2, timeout=TIMEOUT)
                yield c
        finally:
            cluster.close(timeout=30)


def _workers(client) -> list[str]:
    return sorted(client.scheduler_info()["workers"])


def _compute(client, arr):
    return client.compute(arr).result(timeout=TIMEOUT)


def _make_affine(factor):
    @cuda.jit
    def affine(x, y, out):  # a closure: travels by value, ``factor`` with it
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = factor * x[i] - y[i]

    return affine


def _make_smooth():
    @cuda.jit
    def smooth(x, out):
        i, j = cuda.grid(2)
        if 0 < i < x.shape[0] - 1 and 0 < j < x.shape[1] - 1:
            out[i, j] = 0.5 * x[i, j] + 0.125 * (
                x[i - 1, j] + x[i + 1, j] + x[i, j - 1] + x[i, j + 1]
            )

    return smooth


def _laplace_ref(padded):
    c = padded[1:-1, 1:-1]
    return padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:] - 4.0 * c


def test_launch_configurations_cover_the_chunk():
    # One thread per element: blocks of the table's size, enough of them per axis.
    assert cd.launch_config((1000,)) == ((4,), (256,))
    assert cd.launch_config((33, 17)) == ((3, 2), (16, 16))
    assert cd.launch_config((9, 8, 5)) == ((2, 1, 2), (8, 8, 4))
    assert cd.launch_config((0, 5)) == ((1, 1), (16, 16))  # an empty chunk: one block
    assert cd.launch_config((100, 3), block=(32, 4)) == ((4, 1), (32, 4))
    with pytest.raises(ValueError, match="4 dimensions"):
        cd.launch_config((2, 2, 2, 2))
    with pytest.raises(ValueError, match="block"):
        cd.launch_config((8, 8), block=(64,))


def test_map_blocks_with_a_module_level_kernel(client):
    x = np.random.default_rng(1).uniform(-2, 2, 10_000)
    out = _compute(client, cd.map_blocks(dk.scale, da.from_array(x, chunks=1_000), args=(3.0,)))
    np.testing.assert_allclose(out, 3.0 * x + 1.0, rtol=1e-15)
    # Another output dtype: the kernel stores float64 values into float32 chunks.
    narrow = cd.map_blocks(dk.scale, da.from_array(x, chunks=1_000), args=(3.0,), dtype=np.float32)
    assert narrow.dtype == np.float32
    got = _compute(client, narrow)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, (3.0 * x + 1.0).astype(np.float32))


def test_map_blocks_with_a_closure_kernel_of_two_arrays(client):
    rng = np.random.default_rng(2)
    x, y = rng.uniform(1, 2, 5_000).astype(np.float32), rng.uniform(1, 2, 5_000).astype(np.float32)
    arr = cd.map_blocks(
        _make_affine(2.5), da.from_array(x, chunks=700), da.from_array(y, chunks=700)
    )
    out = _compute(client, arr)
    assert out.dtype == np.float32
    ref = 2.5 * x.astype(np.float64) - y
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-6


def test_map_overlap_with_a_module_level_stencil(client):
    x = np.random.default_rng(3).uniform(-1, 1, (300, 220))
    arr = cd.map_overlap(
        dk.laplace, da.from_array(x, chunks=(100, 110)), depth=1, boundary="periodic"
    )
    out = _compute(client, arr)
    ref = _laplace_ref(np.pad(x, 1, mode="wrap"))
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-12


def test_map_overlap_with_a_closure_stencil_and_a_constant_boundary(client):
    x = np.random.default_rng(4).uniform(1, 2, (257, 190))
    arr = cd.map_overlap(_make_smooth(), da.from_array(x, chunks=(64, 64)), depth=1, boundary=0.0)
    out = _compute(client, arr)
    p = np.pad(x, 1, mode="constant", constant_values=0.0)
    ref = 0.5 * x + 0.125 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-12


def _launch_and_count(kernel, x):
    """One task: launch, and say how many specialisations the kernel had before and
    after it (a compile adds one)."""
    before = len(kernel.overloads)
    out = cd.run_block(kernel, x) if kernel.__name__ == "offset" else cd.run_block(kernel, x, x)
    return os.getpid(), id(kernel), before, len(kernel.overloads), out


@pytest.mark.parametrize("which", ["module", "closure"])
def test_each_worker_compiles_a_kernel_once_not_once_per_task(client, which):
    kernel = dk.offset if which == "module" else _make_affine(1.5)
    rng = np.random.default_rng(5)
    chunks = [rng.uniform(1, 2, 300 + 10 * k) for k in range(12)]
    futures = client.map(_launch_and_count, [kernel] * len(chunks), chunks, pure=False)
    results = client.gather(futures)
    pids = {r[0] for r in results}
    assert len(pids) == 2, "both workers should have run tasks"
    for r, x in zip(results, chunks, strict=True):
        ref = x + 0.5 if which == "module" else 1.5 * x - x
        np.testing.assert_allclose(r[4], ref, rtol=1e-14)
    for pid in pids:  # one kernel object and one compile in each worker process
        mine = [r for r in results if r[0] == pid]
        assert len({r[1] for r in mine}) == 1
        assert sum(after - before for _, _, before, after, _ in mine) == 1
        assert [before for _, _, before, _, _ in mine].count(0) == 1


def _sum_block(kernel, x):
    return float(cd.run_block(kernel, x, x).sum())


def test_dask_delayed_runs_a_closure_kernel(client):
    kernel = _make_affine(4.0)
    rng = np.random.default_rng(6)
    parts = [rng.uniform(1, 2, 1_000) for _ in range(6)]
    total = dask.delayed(sum)([dask.delayed(_sum_block)(kernel, p) for p in parts])
    got = client.compute(total).result(timeout=TIMEOUT)
    ref = sum(float((3.0 * p).sum()) for p in parts)
    assert abs(got - ref) / abs(ref) < 1e-12


def _compile_into_cache():
    """Compile ``cached_axpy`` for the CUDA target (no GPU needed); what the cache did."""
    spec = __import__("dask_kernels").cached_axpy.compile(
        "void(float32, float32[:], float32[:], float32[:])"
    )
    return os.getpid(), sorted(spec.result.times)


def test_the_second_worker_hits_the_first_workers_cache_entry(client, cache_dir):
    from cujit.cache import store

    first, second = _workers(client)
    pid1, times1 = client.submit(_compile_into_cache, workers=[first], pure=False).result(
        timeout=TIMEOUT
    )
    entries = [e for e in store.entries(cache_dir) if not isinstance(e, os.PathLike)]
    assert [e.header["name"] for e in entries] == ["cached_axpy"]
    assert "cache" not in times1 and "ptx" in times1  # the first worker compiled
    stamp = os.stat(entries[0].path).st_mtime_ns, os.stat(entries[0].path).st_ino
    pid2, times2 = client.submit(_compile_into_cache, workers=[second], pure=False).result(
        timeout=TIMEOUT
    )
    assert pid1 != pid2
    assert times2 == ["cache"]  # a hit: no stage ran
    after = [e for e in store.entries(cache_dir) if not isinstance(e, os.PathLike)]
    assert len(after) == 1  # the listing still holds one entry, the first worker's
    assert (os.stat(after[0].path).st_mtime_ns, os.stat(after[0].path).st_ino) == stamp
    with _environ({"CUJIT_CACHE_DIR": str(cache_dir)}):
        from cujit.cache import format_listing

        listing = format_listing()
    kernels = [line for line in listing.splitlines() if "cached_axpy(float32, " in line]
    assert len(kernels) == 1 and "sm_" in kernels[0]
    assert listing.splitlines()[-1].startswith("1 entries")


def _compile_when_told(event: str):
    distributed.Event(event).wait(timeout=TIMEOUT)
    spec = __import__("dask_kernels").cached_axpy.compile(
        "void(float64, float64[:], float64[:], float64[:])"
    )
    return os.getpid(), sorted(spec.result.times)


def test_workers_missing_the_cache_at_once_compile_once_between_them(client, cache_dir):
    from cujit.cache import store

    workers = _workers(client)
    futures = [
        client.submit(_compile_when_told, "cujit-go", workers=[w], pure=False) for w in workers
    ]
    deadline = time.monotonic() + TIMEOUT
    while sum(bool(v) for v in client.processing().values()) < 2:  # both tasks waiting
        assert time.monotonic() < deadline, "the tasks did not start"
        time.sleep(0.05)
    time.sleep(0.5)
    distributed.Event("cujit-go", client=client).set()  # both miss at the same moment
    results = client.gather(futures)
    assert len({pid for pid, _ in results}) == 2
    assert sorted(times == ["cache"] for _, times in results) == [False, True]
    names = [
        e.header["arg_types"][0]
        for e in store.entries(cache_dir)
        if not isinstance(e, os.PathLike) and e.header["name"] == "cached_axpy"
    ]
    assert names.count("float64") == 1


def _make_bad():
    @cuda.jit
    def bad(x, out):
        i = cuda.grid(1)
        out[i] = x[i] + "a"  # BAD LINE: strings are not supported

    return bad


def _make_out_of_bounds():
    @cuda.jit(debug=True, opt=False, boundscheck=True)  # debug mode alone checks no bounds
    def oob(x, out):
        i = cuda.grid(1)
        out[i + 1] = x[i]  # OOB LINE: the last thread writes past the end

    return oob


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(
            n
            for n, text in enumerate(f, 1)
            if marker in text and "def " not in text and "_line_of" not in text
        )


def test_a_located_compile_error_comes_back_as_itself(client):
    arr = cd.map_blocks(_make_bad(), da.from_array(np.arange(1.0, 65.0), chunks=32))
    with pytest.raises(UnsupportedError) as info:
        _compute(client, arr)
    error = info.value
    assert error.message == "strings are not supported in kernels"
    assert error.loc.file == __file__ and error.loc.line == _line_of("# BAD LINE")
    assert f"{os.path.basename(__file__)}:{error.loc.line}:" in str(error)
    assert "cujit/" not in str(error).replace(__file__, "")


def test_a_debug_mode_index_error_comes_back_with_its_location(client):
    fut = client.submit(cd.run_block, _make_out_of_bounds(), np.arange(1.0, 33.0), pure=False)
    with pytest.raises(IndexError) as info:
        fut.result(timeout=TIMEOUT)
    failure = info.value.kernel_failure
    assert failure.kernel == "oob"
    assert failure.loc.file == __file__ and failure.loc.line == _line_of("# OOB LINE")
    assert (
        str(info.value)
        .splitlines()[0]
        .endswith("]: index 32 is out of bounds for axis 0 with size 32")
    )  # after numba's prefix (function, file, line, tid, ctaid)


def test_the_example_runs_on_two_workers(tmp_path):
    env = dict(
        os.environ,
        CUJIT_TARGET="cpu",
        CUJIT_CACHE_DIR=str(tmp_path),
        PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]),
    )
    got = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "examples", "dask_stencil.py"),
            "--workers",
            "2",
            "--size",
            "600",
            "--chunk",
            "200",
            "--steps",
            "3",
            "--check",
        ],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-3000:]
    assert "matches NumPy" in got.stdout


def test_a_device_array_gathered_by_the_client_arrives_as_numpy(client):
    # Sent as its values; the client (no GPU needed) receives a NumPy array.  Without
    # cujit.dask's serialiser, pickling would try to put it on the client's GPU.
    x = np.random.default_rng(8).uniform(1, 2, (64, 3)).astype(np.float32)
    fut = client.submit(dk.host_backed, x, pure=False)
    kind = client.submit(lambda d: type(d).__mro__[1].__name__, fut).result(timeout=TIMEOUT)
    assert kind == "DeviceArray"
    got = fut.result(timeout=TIMEOUT)
    assert type(got) is np.ndarray and got.dtype == np.float32 and got.shape == (64, 3)
    np.testing.assert_array_equal(got, x)
