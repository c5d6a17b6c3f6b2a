"""cujit.dask on a GPU: one worker process, real device arrays (marked gpu).

The same paths as tests/test_dask.py on the CUDA target: NumPy chunks through the
worker's GPU, CuPy chunks that never leave it, device arrays that stay on the
worker until gathered, one compile per worker, errors travelling back.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

dask = pytest.importorskip("dask", reason="cujit.dask needs dask: pip install 'cujit[dask]'")
distributed = pytest.importorskip(
    "distributed", reason="cujit.dask's tests need distributed: pip install 'cujit[dask]'"
)
pytest.importorskip("dask.array", reason="cujit.dask needs dask.array: pip install 'cujit[dask]'")

import dask.array as da
import dask_kernels as dk
from test_dask import (
    HERE,
    SRC,
    TIMEOUT,
    _environ,
    _laplace_ref,
    _launch_and_count,
    _line_of,
    _make_affine,
    _make_out_of_bounds,
)

import cujit.dask as cd


def _gpu_cluster(n: int, cache: str):
    """A client of ``n`` worker processes on this machine's first GPU; closed after."""
    env = {
        "CUJIT_TARGET": "cuda",
        "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0],
        "CUJIT_CACHE_DIR": cache,
        "PYTHONPATH": os.pathsep.join([SRC, HERE, os.environ.get("PYTHONPATH", "")]),
    }
    with dask.config.set({"distributed.comm.timeouts.connect": "60s"}):
        with _environ(env):
            cluster = distributed.LocalCluster(
                n_workers=n,
                processes=True,
                threads_per_worker=1,
                host="127.0.0.1",
                dashboard_address=None,
                env=env,
                death_timeout=60,
                silence_logs=50,
                preload=["cujit.dask"],
            )
        try:
            with distributed.Client(cluster, timeout=60) as c:
                c.wait_for_workers(n, timeout=TIMEOUT)
                yield c
        finally:
            cluster.close(timeout=30)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    yield from _gpu_cluster(1, str(tmp_path_factory.mktemp("dask-gpu-cache")))


@pytest.fixture()
def two_workers(tmp_path):
    # Two workers sharing the one GPU: enough to send a device array between them.
    yield from _gpu_cluster(2, str(tmp_path))


def _device_of_worker():
    from cujit.runtime import context

    return os.environ.get("CUDA_VISIBLE_DEVICES"), context.current_device_id()


def test_the_worker_uses_its_gpu(client):
    ((visible, dev),) = client.run(_device_of_worker).values()
    assert dev == 0 and visible is not None  # its GPU, as CUDA_VISIBLE_DEVICES names it


def test_numpy_chunks_go_through_the_gpu(client):
    x = np.random.default_rng(11).uniform(-2, 2, 100_000)
    out = client.compute(
        cd.map_blocks(dk.scale, da.from_array(x, chunks=25_000), args=(3.0,))
    ).result(timeout=TIMEOUT)
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, 3.0 * x + 1.0, rtol=1e-15)
    y = np.random.default_rng(12).uniform(-1, 1, (512, 384))
    lap = client.compute(
        cd.map_overlap(
            dk.laplace, da.from_array(y, chunks=(128, 128)), depth=1, boundary="periodic"
        )
    ).result(timeout=TIMEOUT)
    ref = _laplace_ref(np.pad(y, 1, mode="wrap"))
    assert np.linalg.norm(lap - ref) / np.linalg.norm(ref) < 1e-12


def test_cupy_chunks_stay_on_the_gpu(client):
    cupy = pytest.importorskip("cupy", reason="CuPy chunks need CuPy")
    y = np.random.default_rng(13).uniform(-1, 1, (512, 384))
    on_gpu = da.from_array(y, chunks=(128, 128)).map_blocks(cupy.asarray)
    arr = cd.map_overlap(dk.laplace, on_gpu, depth=1, boundary="periodic")
    assert isinstance(arr._meta, cupy.ndarray)
    out = client.compute(arr).result(timeout=TIMEOUT)
    assert isinstance(out, cupy.ndarray)
    ref = _laplace_ref(np.pad(y, 1, mode="wrap"))
    assert np.linalg.norm(out.get() - ref) / np.linalg.norm(ref) < 1e-12


def _to_device(x):
    from cujit.runtime.memory import to_device

    return to_device(x)


def _where(d):
    from cujit.runtime.memory import DeviceArray

    return type(d) is DeviceArray, d.__cuda_array_interface__["data"][0]


def test_device_arrays_stay_on_the_worker_until_gathered(client):
    x = np.random.default_rng(14).uniform(1, 2, 4096).astype(np.float32)
    fut = client.submit(_to_device, x, pure=False)
    first = client.submit(_where, fut, pure=False).result(timeout=TIMEOUT)
    second = client.submit(_where, fut, pure=False).result(timeout=TIMEOUT)
    assert first[0] and first == second  # the same device memory both times: no copies
    host = fut.result(timeout=TIMEOUT)  # gathering copies the values to the host
    assert type(host) is np.ndarray and host.dtype == np.float32
    np.testing.assert_array_equal(host, x)


def test_device_arrays_hand_over_as_cupy(client):
    cupy = pytest.importorskip("cupy", reason="the CuPy hand-over needs CuPy")
    x = np.random.default_rng(15).uniform(1, 2, 4096)
    fut = client.submit(_to_device, x, pure=False)
    got = client.submit(cd.to_cupy, fut, pure=False).result(timeout=TIMEOUT)
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_array_equal(got.get(), x)


def test_one_compile_in_the_worker(client):
    kernel = _make_affine(1.5)
    chunks = [np.random.default_rng(16 + k).uniform(1, 2, 1000 + k) for k in range(8)]
    results = client.gather(client.map(_launch_and_count, [kernel] * 8, chunks, pure=False))
    assert len({r[1] for r in results}) == 1
    assert sum(after - before for _, _, before, after, _ in results) == 1
    for r, x in zip(results, chunks, strict=True):
        np.testing.assert_allclose(r[4], 0.5 * x, rtol=1e-14)


def test_a_debug_index_error_on_the_gpu_comes_back(client):
    fut = client.submit(cd.run_block, _make_out_of_bounds(), np.arange(1.0, 33.0), pure=False)
    with pytest.raises(IndexError) as info:
        fut.result(timeout=TIMEOUT)
    failure = info.value.kernel_failure
    assert failure.kernel == "oob" and failure.loc.line == _line_of("# OOB LINE")
    assert failure.loc.file.endswith("test_dask.py")


def _received(d):
    from cujit.runtime.memory import DeviceArray

    return type(d) is DeviceArray, os.getpid(), d.copy_to_host()


def test_a_device_array_sent_to_another_worker_lands_on_its_gpu(two_workers):
    first, second = sorted(two_workers.scheduler_info()["workers"])
    x = np.random.default_rng(17).uniform(1, 2, (100, 7))
    fut = two_workers.submit(_to_device, x, workers=[first], pure=False)
    here = two_workers.submit(os.getpid, workers=[first], pure=False).result(timeout=TIMEOUT)
    is_device, pid, values = two_workers.submit(
        _received, fut, workers=[second], pure=False
    ).result(timeout=TIMEOUT)
    assert is_device and pid != here  # received by the other worker, as a device array
    np.testing.assert_array_equal(values, x)
