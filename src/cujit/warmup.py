"""Warming the compiler up while the CUDA driver starts.

A fresh process that defines a kernel and launches it waits for the driver's
start (``cuInit``, then the primary context: a few hundred milliseconds in the
driver's C code) and then for its first compile, much of whose cost is paid
once per process: importing the stages and llvmlite, loading libNVVM and
nvJitLink, their first use.  Neither needs the other, so when the driver
starts and a kernel is waiting to be compiled, a daemon thread does that
once-only work meanwhile, in two steps:

1. ``start()``, a ``cujit.startup`` hook the runtime runs right before
   ``cuInit``: the thread imports the stages (``pipeline.import_stages``, what
   a compile imports) and loads libNVVM and nvJitLink.  These
   are most of the work and need no device, so they run during ``cuInit``,
   the first of the two slow calls; the bindings let go of the GIL in driver
   calls.  Waiting for the architecture before starting would leave
   ``cuInit`` unused.
2. ``set_arch()``, the hook ``context.Device`` runs as soon as the compute
   capability is read, before ``cuDevicePrimaryCtxRetain`` (the context's creation, the
   second slow call): the thread compiles a tiny kernel through every stage
   to a cubin for that architecture with ``pipeline.compile_kernel``, the
   same code a real compile runs, which puts libNVVM and nvJitLink to first
   use, and analyses it as the dispatcher analyses each new kernel for its
   launch-selected variant (``ir.independence``).  When the driver finds no
   device the thread stops after step 1.

``pipeline.compile_kernel`` calls ``wait()`` first (a ``cujit.startup`` hook too):
it joins the thread (a compile that comes before the architecture tells the thread not to wait for
it), so libNVVM and nvJitLink never serve the warm-up and a real compile at
once.  The warm-up's own compile passes through (it is the thread).  Once a
compile has begun, ``start()`` starts nothing: the toolchain is warm or warming
anyway.  After the first wait ``wait()`` is one attribute check.

The warm-up swallows every exception: the real compile meets the same problem
(a missing toolchain...) and reports it itself.  It leaves nothing behind that
could stand in a compile's way: a failed import is removed from
``sys.modules`` by Python and is simply retried, ``ptx.libs`` records a
library only once it has loaded, and the tiny kernel is compiled with
``compile_kernel`` alone (no ``Kernel``, no disk cache).

On an idle Linux machine step 1 runs at the lowest priority, in a thread of its own, so
that ``cuInit``'s own threads go first (``_yield_to_the_driver``).  Step 2 runs at the
priority of the thread that started the warm-up: the toolchain may start a thread of
its own on first use, which keeps its starter's priority for the life of the process
and may serve every later compile.

``CUJIT_WARMUP=0`` turns it off.  The module sits beside ``pipeline.py``, not in
``cujit.runtime``: the runtime imports neither it nor the compiler; importing it
registers ``start`` and ``set_arch`` as ``cujit.startup`` hooks (``dispatcher.py``
imports it, so every process that makes a kernel has them), and it imports the
compiler lazily, in its thread only.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

from cujit import config, startup
from cujit import device_api as cuda


class _State:
    """The process's warm-up (one object, so that tests can start afresh)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pending = 0  # kernels created that will be compiled on first launch
        self.started = False  # start() runs the thread once per process at most
        self.compiling = False  # a compile has begun: a warm-up would come too late
        self.quiet = False  # wait() has nothing left to do, ever
        self.thread: threading.Thread | None = None
        self.loader: threading.Thread | None = None  # step 1's thread
        self.arch: tuple[int, int] | None = None  # None: no device, compile nothing
        self.arch_given = threading.Event()
        self.outcome = ""  # what the thread did, for tests and debugging
        self.nice: int | None = None  # the thread's nice value, where it lowered its own


_state = _State()


def note_kernel() -> None:
    """A kernel waits for its first compile: the next driver start warms up for it."""
    _state.pending += 1


def start(arch: tuple[int, int] | None = None) -> None:
    """Start the warm-up thread, once per process, if a kernel is pending and
    ``CUJIT_WARMUP`` allows; return at once.  Without ``arch`` the thread loads
    the compiler and waits for :func:`set_arch` before compiling.
    """
    state = _state
    if state.started or not state.pending or not config.WARMUP.get():
        return
    with state.lock:
        if state.started or state.compiling:
            return
        state.started = True
        if arch is not None:
            state.arch = (int(arch[0]), int(arch[1]))
            state.arch_given.set()
        thread = threading.Thread(target=_run, args=(state,), name="cujit-warmup", daemon=True)
        thread.start()  # under the lock: wait() never sees a thread it cannot join
        state.thread = thread
    # A process that ends during the warm-up lets it finish first rather than
    # stopping it in the middle of libNVVM.
    atexit.register(_finish, state)


def set_arch(arch: tuple[int, int] | None) -> None:
    """The device's compute capability, for the warm-up's compile; ``None``: no
    device, compile nothing.  The first value counts; later calls change nothing."""
    state = _state
    if state.thread is None or state.arch_given.is_set():
        return
    with state.lock:
        if not state.arch_given.is_set():
            state.arch = None if arch is None else (int(arch[0]), int(arch[1]))
            state.arch_given.set()


def wait() -> None:
    """Before any compile: let a running warm-up finish (from the warm-up's own
    compile, return at once)."""
    state = _state
    if state.quiet:
        return
    with state.lock:
        state.compiling = True  # start() starts nothing from now on
        thread = state.thread
    if threading.current_thread() in (thread, state.loader):
        return
    if thread is not None:
        _finish(state)
    state.quiet = True


def _finish(state: _State) -> None:
    with state.lock:
        state.arch_given.set()  # if no architecture came, none will: compile nothing
    if state.thread is not None:
        state.thread.join()


def _run(state: _State) -> None:
    # Step 1 runs in a thread of its own, which may lower its priority while
    # ``cuInit`` runs; step 2 runs here, at the priority of the thread that started
    # this one, since a thread the toolchain starts in its first compile inherits the
    # priority of the thread that compiles.
    loader = threading.Thread(target=_load, args=(state,), name="cujit-warmup-load", daemon=True)
    state.loader = loader
    try:
        loader.start()
    except RuntimeError as exc:  # no new thread (the interpreter is ending, a limit)
        state.outcome = f"failed: {type(exc).__name__}: {exc}"
        return
    loader.join()
    if state.outcome:
        return  # a load failed
    try:
        from cujit import pipeline
        from cujit.ir import independence
        from cujit.options import Options
        from cujit.types import int32

        state.arch_given.wait()
        if state.arch is None:
            state.outcome = "loaded"
            return
        result = pipeline.compile_kernel(_tiny_kernel, (int32[::1],), Options(arch=state.arch))
        # The dispatcher analyses every new kernel for its launch-selected variant
        # (``coarsen.plan_for``); the first analysis in a process loads its rules and
        # makes its records' classes, which the first launch would otherwise wait for.
        independence.analyse(result.outputs["passes"])
        major, minor = state.arch
        state.outcome = f"compiled for sm_{major}{minor}"
    except BaseException as exc:  # noqa: BLE001 - the real compile reports its own errors
        state.outcome = f"failed: {type(exc).__name__}: {exc}"


def _load(state: _State) -> None:
    """Import what a compile imports and load libNVVM and nvJitLink (step 1)."""
    _yield_to_the_driver(state)
    try:
        from cujit import pipeline
        from cujit.ptx import libs

        pipeline.import_stages()
        # and what a kernel's compile imports besides (its launch-selected variants)
        from cujit import coarsen, index_width  # noqa: F401
        from cujit.ir import independence  # noqa: F401

        # and what its first launch imports: ``cuda.to_device`` loads only the memory
        # part of the runtime before the driver starts (``cujit.runtime``)
        from cujit.runtime import launch  # noqa: F401

        libs.nvvm_module()
        libs.nvjitlink_module()
    except BaseException as exc:  # noqa: BLE001 - the real compile reports its own errors
        state.outcome = f"failed: {type(exc).__name__}: {exc}"


def _yield_to_the_driver(state: _State) -> None:
    """Run this thread at the lowest priority (nice 19) where the machine has idle cores.

    ``cuInit`` spreads its work over a pool of threads, about one per core, and waits
    for the slowest: a busy thread beside them makes one of them a straggler, and the
    warm-up's imports made a cold ``cuInit`` ~25% slower on the H200 (bench/NOTES.md,
    "Start-up, sixth look").  At nice 19 this thread takes what the pool leaves, and the
    whole of a core once the pool is done.  Only on Linux, where a thread has a nice
    value of its own (the process's other threads keep theirs, and those this thread
    starts inherit its value: numpy, whose import starts OpenBLAS's, must be loaded
    already), and only when the load average leaves at least half the usable cores
    idle: an unprivileged thread cannot raise its priority again, and on a machine
    whose cores are all busy the first compile, which waits for this thread, would wait
    for one that gets a sliver of a core.
    """
    if not sys.platform.startswith("linux") or "numpy" not in sys.modules:
        return  # (a thread pool numpy starts in this thread would keep nice 19 for good)
    try:
        if os.getloadavg()[0] > len(os.sched_getaffinity(0)) / 2:
            return
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, 19)
        state.nice = os.getpriority(os.PRIO_PROCESS, tid)
    except (AttributeError, OSError):
        pass


startup.register(before_init=start, arch_known=set_arch, before_compile=wait)


def _tiny_kernel(out):
    # The shape of most first kernels: a thread index, a bounds check, a store.
    i = cuda.grid(1)
    if i < out.size:
        out[i] = i
