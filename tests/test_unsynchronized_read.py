"""A host read of a mapped or managed array while a kernel may still write it warns,
with the fix (runtime/pending.py).  The launch side and the warning are checked here
without a GPU, over a buffer of host memory and stand-in events; the real race runs in
the gpu-marked test."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cujit.runtime import args, mapped, pending
from cujit.types import typeof

HINT = (
    "reading a mapped or managed array on the host while a kernel may still be writing "
    "it\nhint: a launch returns before its kernel has run: after launching on the default "
    "stream, call cuda.synchronize() (or that stream's synchronize()) before reading the "
    "array\nguide: docs/guide/memory.md#mapped-and-managed-memory"
)


class StandIn:
    """An event whose kernel is done or not."""

    def __init__(self, done: bool):
        self.done, self.queries = done, 0

    def query(self) -> bool:
        self.queries += 1
        return self.done


def host_mapped(n: int = 4):
    """A MappedArray over ordinary host memory (kept alive by the returned owner)."""
    owner = np.arange(n, dtype=np.float32)
    buf = mapped.ReachableBuffer._over(owner.ctypes.data, owner.ctypes.data, owner.nbytes)
    return owner, buf, mapped.wrap(buf, mapped.MappedArray, (n,), np.float32, (4,))


@pytest.mark.parametrize(
    "read",
    [lambda a: a[0], lambda a: a[1:3], repr, str, lambda a: a.tolist(), lambda a: a.copy_to_host()],
    ids=["item", "slice", "repr", "str", "tolist", "copy_to_host"],
)
def test_a_read_while_the_kernel_runs_warns_once(read):
    _owner, buf, a = host_mapped()
    pending.note_written(buf, StandIn(done=False), 0)
    with pytest.warns(pending.UnsynchronizedReadWarning) as caught:
        read(a)
    assert [str(w.message) for w in caught] == [HINT]
    assert caught[0].filename == __file__  # points at the user's read
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read(a)  # told once per write
    assert buf not in pending.WRITES


def test_a_read_after_the_kernel_finished_is_silent_and_forgets():
    _owner, buf, a = host_mapped()
    event = StandIn(done=True)
    pending.note_written(buf, event, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert a[2] == 2.0 and a.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert event.queries == 1 and buf not in pending.WRITES


def test_views_share_their_allocation():
    _owner, buf, a = host_mapped(8)
    pending.note_written(buf, StandIn(done=False), 0)
    with pytest.warns(pending.UnsynchronizedReadWarning):
        a[2:6][0]


def test_a_stream_is_named():
    _owner, buf, a = host_mapped()
    pending.note_written(buf, StandIn(done=False), "S")
    with pytest.warns(pending.UnsynchronizedReadWarning) as caught:
        a[0]
    assert "after launching on stream 'S', call cuda.synchronize()" in str(caught[0].message)


def test_launch_marks_only_arrays_the_kernel_writes():
    _owner, buf, a = host_mapped()
    t = (typeof(a), typeof(a))
    _, wb = args.prepare_args(t, (a, a), 0, written=(True, False), device_id=None)
    assert [type(w) for w in wb] == [pending.PendingWrite] and wb[0].buf is buf
    _, wb = args.prepare_args(t, (a, a), 0, written=(False, False), device_id=None)
    assert wb == []
    host = np.zeros(4, np.float32)  # a plain NumPy array: no mark (it is copied back)
    assert not hasattr(host, "_cujit_note_written")


@pytest.mark.gpu
def test_gpu_race_is_reported_and_synchronize_silences_it():
    from conftest import has_gpu

    if not has_gpu():
        pytest.skip("no GPU")
    from cujit import cuda

    @cuda.jit
    def slow_fill(x, n):
        i = cuda.grid(1)
        acc = 0.0
        for k in range(n):  # long enough that the host reads first
            acc += 1e-9 * k
        if i < x.size:
            x[i] = 7.0 + acc * 0.0

    m = cuda.mapped_array(256, np.float32)
    m[:] = 0
    slow_fill[1, 256](m, 1)  # compile and load first
    cuda.synchronize()
    slow_fill[1, 256](m, 50_000_000)
    with pytest.warns(pending.UnsynchronizedReadWarning) as caught:
        m[0]
    assert str(caught[0].message) == HINT
    slow_fill[1, 256](m, 1000)
    cuda.synchronize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (m[:] == 7.0).all()


def test_an_event_that_cannot_be_queried_says_nothing():
    """An event recorded during graph capture cannot be queried: no warning, no error."""

    class Captured:
        def query(self):
            raise RuntimeError("CUDA_ERROR_CAPTURED_EVENT")

    _owner, buf, a = host_mapped()
    pending.note_written(buf, Captured(), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert a[1] == 1.0
    assert buf not in pending.WRITES
