"""A process forked after cujit started CUDA gets a clear CudaDriverError ("CUDA
initialized before forking") from its first driver call instead of a crash, and driver
errors survive pickling (a process pool sends them back to the parent)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cujit.runtime import driver
from cujit.runtime.driver import CudaDriverError


def test_driver_errors_pickle_whole():
    err = CudaDriverError("cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is CudaDriverError
    assert (back.call, back.code, back.name, back.description) == (
        "cuMemAlloc",
        2,
        "CUDA_ERROR_OUT_OF_MEMORY",
        "out of memory",
    )
    assert str(back) == str(err) == "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"


def test_a_forked_child_cannot_use_the_parents_driver(monkeypatch):
    started = object()  # stands for the bindings module after a successful cuInit
    monkeypatch.setattr(driver, "_drv", started)
    monkeypatch.setattr(driver, "_forked", False)
    assert driver.get_driver() is started
    driver._after_fork_in_child()  # what os.register_at_fork runs in the child
    with pytest.raises(CudaDriverError, match="CUDA initialized before forking") as info:
        driver.get_driver()
    assert "spawn" in str(info.value)
    with pytest.raises(CudaDriverError):  # every later call too
        driver.call("cuCtxSynchronize")


def _copy_in_child():
    from cujit import cuda

    return cuda.to_device(np.arange(4)).copy_to_host()


@pytest.mark.gpu
def test_fork_after_cuda_started_raises_in_the_child():
    import concurrent.futures
    import multiprocessing as mp

    from cujit import cuda

    cuda.current_context()  # CUDA started in this process
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=mp.get_context("fork")) as exe:
        future = exe.submit(_copy_in_child)
        with pytest.raises(CudaDriverError, match="CUDA initialized before forking"):
            future.result(timeout=120)
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as exe:
        assert np.array_equal(exe.submit(_copy_in_child).result(timeout=120), np.arange(4))
