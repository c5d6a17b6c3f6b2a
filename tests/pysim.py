"""A plain-Python reference runner for kernels: the differential tests' oracle.

    from pysim import run_kernel
    run_kernel(kernel_or_function, grid, block, args, shmem=0)

runs a kernel's Python function (``kernel.py_func``) over the whole grid as
ordinary Python, one CUDA thread after another, mutating the NumPy arrays in
``args`` in place, as a launch would.  The function is rebuilt with
``types.FunctionType(code, globals, name, defaults, closure)`` over a copy of its
globals in which the cujit ``cuda`` module (and any cujit device object imported
by name: ``grid``, ``syncthreads``, ``threadIdx``...) is replaced by a stand-in
that knows the running thread: ``grid``, ``gridsize``, ``threadIdx``/``blockIdx``/
``blockDim``/``gridDim`` ``.x/.y/.z``, ``syncthreads``, ``shared.array`` (one array
per call site per block; shape 0 is the launch's dynamic shared memory, shared by
every such call site as on the GPU), ``local.array`` (fresh per call) and
``atomic.add``.

Kernels that never name ``syncthreads`` run thread after thread.  Kernels that
do run each block's threads on a pool of Python threads, one at a time: a thread
runs until it reaches ``syncthreads`` or returns, then hands control back; when
every thread still running has reached the barrier, they all pass it.  A thread
that returns no longer counts at the barrier (so the others are not stranded); an
exception in any thread aborts the block and is re-raised on the caller's thread.
The order is deterministic and atomics are trivially atomic.

Numeric semantics, and where they differ from cujit's (numba's typing):

- Array elements read back as NumPy scalars, so arithmetic follows NumPy's scalar
  rules (NEP 50).  Python int and float launch arguments are passed as
  ``np.int64`` / ``np.float64``, the types cujit gives them.
- ``cuda.grid``, ``threadIdx.x`` and friends, ``range`` loop variables and int
  literals are Python ints (unbounded); in cujit they are int64 (int32 for the
  special registers).  They differ only where a value leaves int64's range.
- ``int32 + int32`` is int32 in NumPy but int64 in cujit (numba's rule), and
  ``np.int32 + <Python int>`` stays int32 in NumPy: results differ when the int32
  result would overflow.
- A Python int or float literal combined with a ``float32`` stays float32 in NumPy
  (NEP 50's weak scalars) but is float64 in cujit (literals are int64/float64), and
  ``math.f(float32)`` is a Python float here but float32 in cujit: results differ in
  the float32 rounding.  ``min``/``max`` return one of their arguments unchanged
  here; cujit casts both to a common type first.  Where a float meets a NaN they
  follow numba (fmin/fmax: the NaN loses), not Python, and of two zeros -0.0 is the
  smaller (PTX's min/max; the CPU target orders them alike).
- Python raises where the GPU cannot: ``1 // 0`` on Python ints, ``1.0 / 0.0`` on
  Python floats, ``math.sqrt(-1)``, ``int(nan)``.  NumPy scalars give the IEEE
  result with a warning instead; this module silences NumPy's floating-point
  warnings (``np.errstate(all="ignore")``) but lets Python's exceptions through.

The random-kernel generator (``kernelgen.py``) writes only programs on which these
differences cannot show; the differential tests use inputs that avoid them.
"""

from __future__ import annotations

import math
import sys
import threading
import types
import warnings

import numpy as np

from cujit import cuda as _cujit_cuda
from cujit import device_api as _api
from cujit.types import Scalar


class KernelAborted(Exception):
    """Raised in a block's other threads when one thread of the block failed."""


class _State(threading.local):
    k = 0  # the thread's position in its block (scheduler workers)
    tid = (0, 0, 0)
    bid = (0, 0, 0)


class _Launch:
    """What every thread of one launch shares: its shape, shared memory, atomics' lock."""

    def __init__(self, grid, block, shmem):
        self.grid = grid
        self.block = block
        self.shmem = shmem
        self.state = _State()
        self.shared: dict = {}  # (block index, call site) -> array
        self.lock = threading.Lock()
        self.scheduler = None  # the block scheduler (kernels with syncthreads)


class _Dim3:
    def __init__(self, get):
        self._get = get

    @property
    def x(self):
        return self._get()[0]

    @property
    def y(self):
        return self._get()[1]

    @property
    def z(self):
        return self._get()[2]


def _dtype(dtype) -> np.dtype:
    if isinstance(dtype, Scalar):  # a cujit type; else a NumPy type or dtype
        return dtype.dtype
    return np.dtype(dtype)


def _shape(shape) -> tuple:
    return tuple(int(s) for s in shape) if isinstance(shape, tuple) else (int(shape),)


class _Shared:
    def __init__(self, launch: _Launch):
        self._launch = launch

    def array(self, shape, dtype):
        launch = self._launch
        dt = _dtype(dtype)
        shape = _shape(shape)
        bid = launch.state.bid
        if shape == (0,):  # dynamic shared memory: one buffer per block, every view of it
            key = (bid, "dynamic")
            with launch.lock:
                raw = launch.shared.get(key)
                if raw is None:
                    raw = launch.shared[key] = np.zeros(launch.shmem, np.uint8)
            return raw[: launch.shmem // dt.itemsize * dt.itemsize].view(dt)
        caller = sys._getframe(1)
        key = (bid, caller.f_code, caller.f_lasti)  # one array per call site per block
        with launch.lock:
            arr = launch.shared.get(key)
            if arr is None:
                # Uninitialised on the GPU: fill with garbage-like values so a kernel
                # that reads before writing does not pass by luck.
                arr = launch.shared[key] = _poisoned(shape, dt)
        return arr


class _Local:
    @staticmethod
    def array(shape, dtype):
        return _poisoned(_shape(shape), _dtype(dtype))


def _poisoned(shape, dt: np.dtype) -> np.ndarray:
    if dt.kind == "f":
        return np.full(shape, np.nan, dt)
    if dt.kind == "b":
        return np.zeros(shape, dt)
    return np.full(shape, 0x5A, dt)


class _Atomic:
    def __init__(self, launch: _Launch):
        self._launch = launch

    def add(self, ary, idx, val):
        with self._launch.lock:
            old = ary[idx]
            ary[idx] = old + val
            return old


class StandInCuda:
    """The ``cuda`` namespace a kernel sees while it runs under pysim."""

    def __init__(self, launch: _Launch):
        st = launch.state
        self._launch = launch
        self.threadIdx = _Dim3(lambda: st.tid)
        self.blockIdx = _Dim3(lambda: st.bid)
        self.blockDim = _Dim3(lambda: launch.block)
        self.gridDim = _Dim3(lambda: launch.grid)
        self.shared = _Shared(launch)
        self.local = _Local()
        self.atomic = _Atomic(launch)
        self.warpsize = 32
        # Everything else (types, host functions) falls through to cujit's namespace.

    def __getattr__(self, name):
        return getattr(_cujit_cuda, name)

    def grid(self, ndim):
        st, b = self._launch.state, self._launch.block
        idx = tuple(t + i * n for t, i, n in zip(st.tid, st.bid, b, strict=True))
        return idx[0] if ndim == 1 else idx[:ndim]

    def gridsize(self, ndim):
        g, b = self._launch.grid, self._launch.block
        size = tuple(i * n for i, n in zip(g, b, strict=True))
        return size[0] if ndim == 1 else size[:ndim]

    def syncthreads(self):
        sched = self._launch.scheduler
        if sched is None:
            raise RuntimeError("pysim: syncthreads reached in a kernel run thread by thread")
        sched.sync()


def _stand_in_for(obj, cuda_ns: StandInCuda):
    """The stand-in for a global that is a cujit device object, or None."""
    if obj is _cujit_cuda:
        return cuda_ns
    if isinstance(obj, (_api.DeviceOnly, _api.SpecialRegister)):
        key = obj.key
        if isinstance(obj, _api.SpecialRegister):
            if key == "warpsize":
                return 32
            raise TypeError(f"pysim: import the cuda module rather than {key} by name")
        target = cuda_ns
        for part in key.split("."):
            target = getattr(target, part)
        return target
    if isinstance(obj, _api.Dim3):
        return getattr(cuda_ns, obj.__qualname__)
    if isinstance(obj, _api.Namespace):
        return getattr(cuda_ns, obj.__qualname__)
    return None


def _is_float(x) -> bool:
    return isinstance(x, (float, np.floating))


def _nan_loses(pick):
    """numba's float ``min``/``max`` on the GPU (C's fmin/fmax, PTX's min/max): a NaN
    operand loses to a number, and of two zeros -0.0 is the smaller; other operands
    take Python's rule.  Several arguments chain pairwise, as cujit does."""

    def minmax(*args):
        if len(args) == 1:
            args = tuple(args[0])
        acc = args[0]
        for v in args[1:]:
            if _is_float(acc) or _is_float(v):
                if acc != acc:  # nan
                    acc = v
                    continue
                if v != v:
                    continue
                if acc == 0 and v == 0:  # two zeros: -0.0 below +0.0
                    acc_negative = math.copysign(1.0, acc) < 0
                    v_negative = math.copysign(1.0, v) < 0
                    if v_negative != acc_negative and v_negative == (pick is min):
                        acc = v
                    continue
            acc = pick(acc, v)
        return acc

    return minmax


_NUMBA_BUILTINS = {"min": _nan_loses(min), "max": _nan_loses(max)}


def rebuild(fn, cuda_ns: StandInCuda):
    """``fn`` with its cujit device globals swapped for ``cuda_ns``'s, and numba's
    float ``min``/``max`` in place of Python's (where the module defines neither)."""
    g = dict(fn.__globals__)
    for name, impl in _NUMBA_BUILTINS.items():
        g.setdefault(name, impl)
    for name in fn.__code__.co_names:
        if name in g:
            sub = _stand_in_for(g[name], cuda_ns)
            if sub is not None:
                g[name] = sub
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def uses_syncthreads(fn) -> bool:
    names = set(fn.__code__.co_names)
    return "syncthreads" in names


def _as_dim(v):
    d = tuple(v) if isinstance(v, tuple) else (v,)
    return d + (1,) * (3 - len(d))


def _arg(a):
    if isinstance(a, bool):
        return np.bool_(a)
    if isinstance(a, int):
        return np.int64(a)
    if isinstance(a, float):
        return np.float64(a)
    return a


def run_kernel(kernel, grid, block, args, shmem: int = 0) -> None:
    """Run ``kernel`` (a cujit kernel or its Python function) over ``grid`` x ``block``
    as plain Python; NumPy arrays in ``args`` are updated in place."""
    pyfunc = getattr(kernel, "py_func", kernel)
    grid, block = _as_dim(grid), _as_dim(block)
    launch = _Launch(grid, block, shmem)
    fn = rebuild(pyfunc, StandInCuda(launch))
    args = [_arg(a) for a in args]
    threaded = uses_syncthreads(pyfunc)
    blocks = [(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])]
    threads = [(x, y, z) for z in range(block[2]) for y in range(block[1]) for x in range(block[0])]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if threaded:
            launch.scheduler = _Scheduler(fn, launch, threads, args)
        try:
            for bid in blocks:
                if threaded:
                    launch.scheduler.run_block(bid)
                    _free_shared(launch, bid)
                    continue
                st = launch.state
                st.bid = bid
                for tid in threads:
                    st.tid = tid
                    fn(*args)
                _free_shared(launch, bid)
        finally:
            if launch.scheduler is not None:
                launch.scheduler.close()
                launch.scheduler = None


def _free_shared(launch: _Launch, bid) -> None:
    """Shared memory lives as long as its block."""
    for key in [k for k in launch.shared if k[0] == bid]:
        del launch.shared[key]


def _taken_lock():
    lock = threading.Lock()
    lock.acquire()
    return lock


class _Scheduler:
    """Runs a block's threads one at a time, each on its own Python thread: a thread
    runs until it reaches ``syncthreads`` or returns, then hands control back.  When
    every live thread of the block has reached the barrier they all pass it, in
    order.  Deterministic, and atomics are trivially atomic.  A pool of block-size
    workers serves every block of the launch."""

    def __init__(self, fn, launch: _Launch, threads, args):
        self.fn, self.launch, self.threads, self.args = fn, launch, threads, args
        n = len(threads)
        # Each is a binary semaphore, taken (0) at the start: a plain lock, which any
        # thread may release, hands control over in C (threading.Semaphore, a Condition
        # in Python, took most of the time of kernels that synchronise).
        self.go = [_taken_lock() for _ in range(n)]
        self.done = _taken_lock()
        self.status = [""] * n
        self.task = None  # the block to run; None stops the workers
        self.abort = False
        self.error: BaseException | None = None
        self.workers = [
            threading.Thread(target=self._worker, args=(k,), daemon=True) for k in range(n)
        ]
        for w in self.workers:
            w.start()

    def _worker(self, k: int) -> None:
        st = self.launch.state
        st.k, st.tid = k, self.threads[k]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            while True:
                self.go[k].acquire()
                if self.task is None:
                    return
                st.bid = self.task
                try:
                    self.fn(*self.args)
                except KernelAborted:
                    pass
                except BaseException as exc:  # noqa: BLE001 - re-raised by run_block
                    self.error = exc
                self.status[k] = "exit"
                self.done.release()

    def sync(self) -> None:
        """``syncthreads`` on a worker: hand control back until the block passes."""
        k = self.launch.state.k
        self.status[k] = "sync"
        self.done.release()
        self.go[k].acquire()
        if self.abort:
            raise KernelAborted

    def _step(self, k: int) -> None:
        self.go[k].release()
        self.done.acquire()

    def run_block(self, bid) -> None:
        self.task = bid
        live = list(range(len(self.threads)))
        while live:
            waiting = []
            for k in live:
                self._step(k)
                if self.error is not None:
                    self.abort = True
                    for j in waiting + [j for j in live if j > k and self.status[j] == "sync"]:
                        self._step(j)
                    self.abort = False
                    raise self.error
                if self.status[k] == "sync":
                    waiting.append(k)
            live = waiting

    def close(self) -> None:
        self.task = None
        for g in self.go:
            g.release()
        for w in self.workers:
            w.join()
