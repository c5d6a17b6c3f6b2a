"""Fork safety on the CPU target: after a parallel launch (one that uses the worker pool),
a child made by ``os.fork`` or by ``multiprocessing``'s fork context launches too, and a
lock another thread held at the fork is free in the child.

Each case runs as a script in a fresh interpreter with a timeout, so a child that hangs
fails the test instead of hanging pytest.  The scripts make the launch parallel on any
machine by giving the launcher four cores (``launch.host_cores``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

PRELUDE = """
import os, sys, threading
import numpy as np
from cujit import cuda
from cujit.targets.cpu import launch

launch.host_cores = lambda: 4  # parallel launches even on a one-core machine

@cuda.jit(target="cpu")
def inc(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1

N = 1 << 18  # well over launch.PARALLEL_MIN_THREADS

def parallel_launch():
    x = np.zeros(N)
    inc[N // 256, 256](x)
    assert (x == 1).all(), x
    return float(x.sum())

parallel_launch()
assert launch._pool is not None, "the launch did not use the worker pool"
"""


def run_script(body: str, timeout: float = 120) -> str:
    code = PRELUDE + textwrap.dedent(body)
    env = dict(os.environ, PYTHONFAULTHANDLER="1", CUJIT_TARGET="cpu")
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_bare_fork_after_a_parallel_launch():
    out = run_script(
        """
        pid = os.fork()
        if pid == 0:
            try:
                total = parallel_launch()
                parallel_launch()  # the new pool serves a second launch too
                print("child", total, flush=True)
                os._exit(0)
            except BaseException as exc:
                print("child failed", repr(exc), flush=True)
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        parallel_launch()  # the parent's pool still works
        print("parent ok")
        """
    )
    assert f"child {float(1 << 18)}" in out
    assert "parent ok" in out


def test_multiprocessing_fork_children_launch():
    out = run_script(
        """
        import multiprocessing as mp

        def work(k):
            return parallel_launch() + k

        with mp.get_context("fork").Pool(2) as pool:
            got = pool.map(work, range(4))
        print("results", got)
        """
    )
    assert f"results {[float(1 << 18) + k for k in range(4)]}" in out


def test_a_lock_held_by_another_thread_at_the_fork_is_free_in_the_child():
    out = run_script(
        """
        import gc
        from cujit import gcpause
        from cujit.targets.cpu import interop

        held, release = threading.Event(), threading.Event()

        def hold():
            with interop._lock, gcpause.paused():  # as an allocation and a compile do
                held.set()
                release.wait()

        t = threading.Thread(target=hold)
        t.start()
        held.wait()
        pid = os.fork()
        if pid == 0:
            try:
                a = cuda.device_array(8)  # takes interop's lock
                @cuda.jit(target="cpu")
                def fill(x):  # a new compile: takes the collector's pause
                    i = cuda.grid(1)
                    if i < x.size:
                        x[i] = i
                fill[1, 8](a)
                assert list(a.copy_to_host()) == list(range(8))
                assert gc.isenabled()  # the pause of the thread that is gone ended
                parallel_launch()
                print("child ok", flush=True)
                os._exit(0)
            except BaseException as exc:
                print("child failed", repr(exc), flush=True)
                os._exit(1)
        release.set()
        t.join()
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        print("parent ok")
        """
    )
    assert "child ok" in out and "parent ok" in out


def test_renewed_locks_are_reset_in_the_child():
    import threading

    from cujit import forksafe

    lock = forksafe.renewed(threading.Lock())
    rlock = forksafe.renewed(threading.RLock())
    lock.acquire()
    holder = threading.Thread(target=rlock.acquire)  # held by a thread a fork leaves out
    holder.start()
    holder.join()
    assert not rlock.acquire(blocking=False)
    forksafe._after_fork_in_child()  # what os.register_at_fork runs in a child
    assert lock.acquire(blocking=False)
    assert rlock.acquire(blocking=False)
