"""numba's deferred deallocation (``cujit.runtime.deallocs``): a collected allocation's
free is queued on its context's list and made in batches, on ``clear()``, or never
inside ``defer_cleanup()``; ``ctx.memory_manager`` on both targets."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from cujit.runtime import deallocs


class FakeDriver:
    def __init__(self):
        self.freed: list[int] = []

    def cuMemFree(self, ptr):
        self.freed.append(ptr)
        return (0,)


@pytest.fixture
def driver(monkeypatch):
    fake = FakeDriver()
    monkeypatch.setattr(deallocs, "get_driver", lambda: fake)
    return fake


class Ctx:
    """A context as ``release`` sees one: its manager, made on first use."""

    def __init__(self, total: int = 1000):
        self._memory_manager = deallocs.MemoryManager(self, total)


def test_frees_wait_in_the_queue_until_clear(driver):
    ctx = Ctx()
    pending = ctx._memory_manager.deallocations
    for ptr in (0x1000, 0x2000, 0x3000):
        deallocs.release(ptr, 8, ctx)
    assert len(pending) == 3 and driver.freed == []
    pending.clear()
    assert len(pending) == 0 and driver.freed == [0x1000, 0x2000, 0x3000]


def test_more_than_ten_queued_frees_them_all(driver):
    ctx = Ctx()
    pending = ctx._memory_manager.deallocations
    for k in range(deallocs.COUNT_LIMIT):
        deallocs.release(0x100 * (k + 1), 1, ctx)
    assert len(pending) == deallocs.COUNT_LIMIT and driver.freed == []
    deallocs.release(0xFFFF, 1, ctx)  # the eleventh
    assert len(pending) == 0 and len(driver.freed) == deallocs.COUNT_LIMIT + 1


def test_a_fifth_of_the_memory_queued_frees_them(driver):
    ctx = Ctx(total=1000)  # the limit: 200 bytes
    deallocs.release(0x10, 150, ctx)
    assert driver.freed == []
    deallocs.release(0x20, 60, ctx)  # 210 bytes queued
    assert driver.freed == [0x10, 0x20]


def test_defer_cleanup_holds_frees_back(driver):
    ctx = Ctx()
    manager = ctx._memory_manager
    with manager.defer_cleanup():
        assert manager.deallocations.is_disabled
        for k in range(3 * deallocs.COUNT_LIMIT):
            deallocs.release(k + 1, 1, ctx)
        manager.deallocations.clear()
        assert driver.freed == []
    assert not manager.deallocations.is_disabled
    manager.reset()
    assert sorted(driver.freed) == list(range(1, 3 * deallocs.COUNT_LIMIT + 1))


def test_a_context_without_a_manager_frees_at_once(driver):
    deallocs.release(0x42, 8, object())
    assert driver.freed == [0x42]


def test_cpu_target_context_has_numba_s_memory_manager():
    from cujit.targets.cpu import device

    ctx = device.current_context()
    assert ctx.memory_manager.deallocations is ctx.deallocations
    with device.defer_cleanup():
        assert len(ctx.deallocations) == 0
    free, total = ctx.memory_manager.get_memory_info()
    assert 0 < free <= total


@pytest.mark.gpu
def test_a_collected_device_array_is_queued_then_freed():
    from cujit import cuda

    ctx = cuda.current_context()
    pending = ctx.memory_manager.deallocations
    gc.collect()  # earlier tests' garbage queued now, not during the checks below
    pending.clear()
    free_before = ctx.get_memory_info()[0]
    d = cuda.to_device(np.arange(1 << 24, dtype=np.float64))  # 128 MiB
    view = cuda.as_cuda_array(d)
    del d
    gc.collect()
    assert len(pending) == 0  # the view keeps the memory
    np.testing.assert_array_equal(view.copy_to_host()[:4], np.arange(4.0))
    del view
    gc.collect()
    assert len(pending) == 1
    held = ctx.get_memory_info()[0]
    pending.clear()
    assert len(pending) == 0
    after = ctx.get_memory_info()[0]
    assert after - held >= (1 << 27) - (1 << 21)  # the 128 MiB came back on clear()
    assert abs(after - free_before) < (1 << 24)
