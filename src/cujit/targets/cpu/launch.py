"""Launching a compiled CPU kernel: arguments, per-worker buffers, host threads.

``CPUKernel.launch`` packs the kernel's flat ABI parameters (``cujit.abi``) into
one C struct, fills the launch descriptor the runner reads (``runner_abi.LAUNCH``),
gives every worker its own shared-memory buffers, and calls the runner on one
host thread, or on several at once when the grid is large enough to repay
starting them.  ctypes releases the GIL around the call, so the workers run in
parallel; they divide the blocks among themselves (``runner.py``).  The launch
returns when the whole grid has run: the CPU target is synchronous.

Host arrays are used in place (the CPU target's device memory is host memory).
"""

from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

from cujit.abi import POINTER, param_kinds, passes_strides
from cujit.diagnostics import LaunchError
from cujit.targets.cpu import guard
from cujit.targets.cpu.runner_abi import block_stride, warp_slots
from cujit.targets.cpu.warp import ACTIVE, BAR, DONE, GRID, RESULT_SLOTS, WARP
from cujit.types import Array, CPointer, Record, Scalar, Tuple, Type
from cujit.types.enums import EnumMember

_CTYPES = {
    "uint8": ctypes.c_uint8,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float,
    "float16": ctypes.c_uint16,
    "bfloat16": ctypes.c_uint16,
    "float64": ctypes.c_double,
    POINTER: ctypes.c_void_p,
}
# CUDA's launch limits (CUDA C Programming Guide, "Compute Capabilities"), kept so a
# launch that fails on the GPU fails here too.
MAX_BLOCK = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
# Shared memory per block on sm_90 with the opt-in (the same table: 227 KB), static
# and dynamic together: what the H200 accepts.
MAX_SHARED_PER_BLOCK = 227 * 1024
# Below this many threads a launch runs on the calling thread: waking a worker
# costs tens of microseconds, more than small grids take in all.
PARALLEL_MIN_THREADS = 1 << 15
BUFFER_ALIGN = 64
FIRST_FRAME_GUESS = 256  # bytes; most frames are smaller (the scalars live across barriers)
# A kernel that syncs the grid runs every thread of the grid at once, each with its own
# coroutine frame: at most this many threads (as many as an H200 holds resident, 132 SMs
# x 2048), the CPU target's answer to ``max_cooperative_grid_blocks``.
MAX_GRID_SYNC_THREADS = 132 * 2048


class _Launch(ctypes.Structure):  # runner_abi.LAUNCH
    _fields_ = [
        ("grid", ctypes.c_int32 * 3),
        ("block", ctypes.c_int32 * 3),
        ("dynbytes", ctypes.c_int64),
        ("nblocks", ctypes.c_int64),
        ("chunk", ctypes.c_int64),
        ("next", ctypes.c_int64),
    ]


class _Worker(ctypes.Structure):  # runner_abi.WORKER
    _fields_ = [
        ("shared", ctypes.c_void_p),
        ("dynshared", ctypes.c_void_p),
        ("handles", ctypes.c_void_p),
        ("frames", ctypes.c_void_p),
        ("slot_bytes", ctypes.c_int64),
        ("frame_bytes", ctypes.c_int64),
        ("parked", ctypes.c_void_p),
        ("state", ctypes.c_void_p),
        ("mask", ctypes.c_void_p),
        ("val", ctypes.c_void_p),
        ("snap", ctypes.c_void_p),
        ("result", ctypes.c_void_p),
        ("stuck", ctypes.c_int64),
    ]


_pool: ThreadPoolExecutor | None = None


def host_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _workers_pool(n: int) -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(n, 1), thread_name_prefix="cujit-cpu")
    return _pool


_threads = threading.local()


def _records(n: int) -> list[int]:
    """``n`` aligned ``guard.RECORD_BYTES`` records, the calling thread's own (a launch
    from another thread at the same time has its own), kept for its next launch."""
    at = getattr(_threads, "records", None)
    if at is None or len(at) < n:
        buf = np.zeros((n, guard.RECORD_BYTES + BUFFER_ALIGN), np.uint8)
        _threads.buffer = buf
        at = _threads.records = [
            (row.ctypes.data + BUFFER_ALIGN - 1) // BUFFER_ALIGN * BUFFER_ALIGN for row in buf
        ]
    return at


def _after_fork_in_child() -> None:
    """A forked child has only the thread that forked: the pool's threads are gone
    (a launch handed to them would wait forever), so the next parallel launch makes
    a new pool; the support module's state starts afresh (``guard.py``)."""
    global _pool
    _pool = None
    guard.after_fork_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _aligned(nbytes: int) -> tuple[np.ndarray, int]:
    """A zeroed host buffer and its first ``BUFFER_ALIGN``-aligned address."""
    buf = np.zeros(nbytes + BUFFER_ALIGN, np.uint8)
    addr = buf.ctypes.data
    return buf, (addr + BUFFER_ALIGN - 1) // BUFFER_ALIGN * BUFFER_ALIGN


class CPUKernel:
    """A kernel compiled for the host: ``launch(grid, block, shmem, arg_types, args)``."""

    # Debug mode (``debug.py``): code -> ErrorSite, and the record read after a launch.
    debug_sites: dict = {}
    debug_record = None
    # Per argument: may the kernel store into it (ir.analysis.written_arguments); and
    # the parameters' names, for the errors that refuse a read-only array.
    written: tuple[bool, ...] = ()
    arg_names: tuple[str, ...] = ()

    def __init__(
        self,
        name: str,
        jit,
        symbol: str,
        arg_types: tuple[Type, ...],
        static_shared: int,
        barriers: bool,
        llvm_ir: str,
        grid_sync: bool = False,
        warp: bool = False,
    ):
        self.name = name
        self.arg_types = tuple(arg_types)
        self.static_shared = static_shared
        self.barriers = barriers
        self.grid_sync = grid_sync  # syncs the grid: all blocks run under one scheduler
        self.warp = warp  # warp functions or block votes: the warp scheduler (warp.py)
        self.llvm_ir = llvm_ir  # before optimisation (what lowering produced)
        self.jit = jit  # keeps the machine code alive
        self.runner_symbol = symbol  # the compiled grid runner (what a cache entry names)
        kinds = [k for t in self.arg_types for k in param_kinds(t)]
        self._args_struct = type(
            "Args",
            (ctypes.Structure,),
            {"_fields_": [(f"p{k}", _CTYPES[kind]) for k, kind in enumerate(kinds)]},
        )
        self._entry = jit.address(symbol)  # the runner, called through guard.protect
        # Bytes per coroutine frame slot: a guess until a launch reports the real size.
        self._frame_bytes = FIRST_FRAME_GUESS

    @property
    def optimized_llvm_ir(self) -> str:
        return self.jit.llvm_ir

    def _run_grid(self, args: int, desc: _Launch, workers: list[_Worker]) -> int:
        """Run the runner on this thread and, for all but the first worker, on the pool;
        each call goes through ``guard``'s ``protect``, which returns why a runner was
        left early (``guard.STOPPED`` by Ctrl-C, ``guard.TOO_DEEP`` by a recursion out of
        stack) or 0.  Those of all workers or'd together."""
        support = guard.begin()
        at = _records(len(workers))
        entry, launch = self._entry, ctypes.addressof(desc)
        futures = []
        try:
            if len(workers) > 1:
                pool = _workers_pool(host_cores() - 1)
                futures = [
                    pool.submit(support.protect, entry, args, launch, ctypes.addressof(w), r)
                    for w, r in zip(workers[1:], at[1:], strict=False)
                ]
            reasons = support.protect(entry, args, launch, ctypes.addressof(workers[0]), at[0])
            for f in futures:
                reasons |= f.result()
        except BaseException:  # Ctrl-C while waiting: the workers stop too before it goes on
            support.stop.value = 1
            wait(futures)
            raise
        finally:
            guard.end(support)
        return reasons

    def _forget_errors(self) -> None:
        """Clear what an interrupted launch's threads left in the error record."""
        if self.debug_record is not None:
            try:
                self.debug_record.check(self.name)
            except Exception:  # noqa: BLE001, S110 -- the launch is reported as interrupted
                pass

    def launch(self, grid, block, shmem_bytes: int, arg_types, args) -> None:  # noqa: C901 -- checks a CPU launch as CUDA does, then picks one of the schedulers; each check is one branch
        grid, block = _check_dims(grid, MAX_GRID, "grid"), _check_dims(block, MAX_BLOCK, "block")
        nthreads = block[0] * block[1] * block[2]
        if nthreads > MAX_THREADS_PER_BLOCK:
            raise LaunchError(
                f"kernel {self.name!r}: {nthreads} threads per block; "
                f"the limit is {MAX_THREADS_PER_BLOCK}"
            )
        if shmem_bytes < 0:
            raise LaunchError(
                f"kernel {self.name!r}: dynamic shared memory size must be >= 0, got {shmem_bytes}"
            )
        if shmem_bytes + self.static_shared > MAX_SHARED_PER_BLOCK:
            raise LaunchError(
                f"kernel {self.name!r} asks for {shmem_bytes} bytes of dynamic shared memory; "
                f"a block may have {MAX_SHARED_PER_BLOCK} bytes (CUDA's limit on sm_90) and the "
                f"kernel already uses {self.static_shared} statically"
            )
        if tuple(arg_types) != self.arg_types:
            raise LaunchError(f"kernel {self.name!r} was compiled for different argument types")
        flat: list = []
        keep: list = []  # arrays whose memory the kernel uses: alive until it returns
        for k, (t, a) in enumerate(zip(self.arg_types, args, strict=True)):
            _flatten(self.name, t, a, flat, keep)
            if k < len(self.written) and self.written[k]:
                _check_writeable(self, k, keep, len(keep) - _count_arrays(t))
        packed = self._args_struct(*flat)

        nblocks = grid[0] * grid[1] * grid[2]
        if self.grid_sync:  # one worker runs the whole grid (runner.py)
            self._check_cooperative(nblocks, nthreads)
            workers, chunk = 1, nblocks
            states = [self._worker(nthreads, shmem_bytes, nblocks)]
        else:
            workers, chunk = plan(nblocks, nthreads)
            states = [self._worker(nthreads, shmem_bytes) for _ in range(workers)]
        desc = _Launch(grid, block, shmem_bytes, nblocks, chunk, 0)
        reasons = self._run_grid(ctypes.addressof(packed), desc, [w for w, _ in states])
        if reasons & guard.TOO_DEEP and self.debug_record is not None:
            self.debug_record.check(self.name)  # a recursion ran out of stack: its error
        if reasons & guard.STOPPED:
            self._forget_errors()
            raise guard.interrupted(self.name)
        if self.barriers:  # frames that did not fit their slot were on the heap: fit them next time
            self._frame_bytes = max([self._frame_bytes] + [w.frame_bytes for w, _ in states])
        for w, bufs in states:
            if self.warp and w.stuck:
                raise LaunchError(
                    _stuck_message(
                        self.name,
                        w.stuck - 1,
                        grid,
                        nthreads,
                        bufs[-2],
                        bufs[-1],
                        nblocks if self.grid_sync else 0,
                    )
                )
        if self.debug_record is not None:
            self.debug_record.check(self.name)

    def max_cooperative_grid_blocks(self, threads_per_block: int) -> int:
        return MAX_GRID_SYNC_THREADS // threads_per_block

    def _check_cooperative(self, nblocks: int, nthreads: int) -> None:
        most = self.max_cooperative_grid_blocks(nthreads)
        if nblocks > most:
            raise LaunchError(
                f"kernel {self.name!r} syncs the grid (cuda.cg.this_grid().sync()), so all "
                f"its blocks must run at once: a grid of {nblocks} blocks exceeds the maximum "
                f"of {most} blocks of {nthreads} threads on the CPU target "
                f"({MAX_GRID_SYNC_THREADS} threads in all); see "
                "kernel.max_cooperative_grid_blocks(blockdim)"
            )

    def _worker(self, nthreads: int, shmem_bytes: int, nblocks: int = 0) -> tuple[_Worker, list]:
        """One worker's private shared memory (static and dynamic) and coroutine slots;
        with ``nblocks`` (grid sync), all of it for every block of the grid at once."""
        if nblocks:
            static, static_at = _aligned(nblocks * block_stride(self.static_shared))
            dyn, dyn_at = _aligned(nblocks * block_stride(shmem_bytes))
            nthreads *= nblocks
        else:
            static, static_at = _aligned(self.static_shared)
            dyn, dyn_at = _aligned(shmem_bytes)
        bufs = [static, dyn]
        if not self.barriers:
            return _Worker(static_at, dyn_at, 0, 0, 0, 0, 0), bufs
        handles = np.zeros(nthreads, np.uintp)
        slot = -(-self._frame_bytes // BUFFER_ALIGN) * BUFFER_ALIGN
        frames, frames_at = _aligned(nthreads * slot)
        parked = np.zeros(nthreads if nblocks and not self.warp else 0, np.uint8)
        bufs += [handles, frames, parked]
        worker = _Worker(
            static_at, dyn_at, handles.ctypes.data, frames_at, slot, 0, parked.ctypes.data
        )
        if self.warp:  # the exchange buffers: whole warps per block (warp.py)
            n = warp_slots(nthreads // max(nblocks, 1)) * max(nblocks, 1)
            result = np.zeros(RESULT_SLOTS * max(nblocks, 1), np.int32)
            val, snap = np.zeros(n, np.int64), np.zeros(n, np.int64)
            state, mask = np.zeros(n, np.uint8), np.zeros(n, np.uint32)
            worker.state, worker.mask, worker.val, worker.snap, worker.result = (
                a.ctypes.data for a in (state, mask, val, snap, result)
            )
            bufs += [val, snap, result, state, mask]
        return worker, bufs


def _stuck_message(
    kernel: str, block: int, grid, nthreads: int, state: np.ndarray, mask: np.ndarray, nblocks: int
) -> str:
    """Why block ``block`` (linear) could not go on: its threads' states as the scheduler
    left them (in a grid-sync run the buffers hold every block, ``nblocks`` of them)."""
    gx, gy = grid[0], grid[1]
    where = (block % gx, block // gx % gy, block // (gx * gy))
    stride = warp_slots(nthreads)
    first = block * stride if nblocks else 0
    st, mk = state[first : first + nthreads], mask[first : first + nthreads]
    what = {
        BAR: "at a block barrier",
        DONE: "exited",
        WARP: "in a warp function",
        ACTIVE: "in activemask()",
        GRID: "at the grid barrier",
    }
    detail = ""
    for t in np.flatnonzero(st == WARP):
        lane, base = t % 32, t - t % 32
        m = int(mk[t])
        if not m >> lane & 1:
            detail = (
                f": thread {t} (lane {lane}) called a warp function with mask "
                f"0x{m:08x}, which does not name its own lane"
            )
            break
        for k in range(32):
            o = base + k
            if m >> k & 1 and o < nthreads and st[o] != DONE and (st[o] != WARP or mk[o] != m):
                other = what.get(int(st[o]), "elsewhere")
                if st[o] == WARP:
                    other += f" with mask 0x{int(mk[o]):08x}"
                detail = (
                    f": thread {t} (lane {lane}) waits in a warp function with mask "
                    f"0x{m:08x}, but lane {k} of its warp is {other}"
                )
                break
        if detail:
            break
    if not detail:
        counts = ", ".join(
            f"{int((st == s).sum())} {what[s]}" for s in (BAR, WARP, GRID) if (st == s).any()
        )
        detail = f" ({counts})"
    return (
        f"kernel {kernel!r}: the threads of block {where} cannot make progress{detail}; "
        "every non-exited lane that a warp function's mask names must call a warp "
        "function with the same mask, and every thread of a block must reach its "
        "barriers"
    )


def plan(nblocks: int, threads_per_block: int) -> tuple[int, int]:
    """How many host threads run a grid, and how many blocks each claims at a time."""
    workers = 1
    if nblocks > 1 and nblocks * threads_per_block >= PARALLEL_MIN_THREADS:
        workers = min(host_cores(), nblocks)
    # Claims of a few blocks each: small enough to balance, big enough to be rare.
    return workers, max(1, nblocks // (workers * 16))


def _check_dims(dims, limits, what: str) -> tuple[int, int, int]:
    dims = tuple(int(d) for d in dims)
    if len(dims) != 3 or any(d < 1 for d in dims):
        raise LaunchError(f"{what} must be three positive extents, got {dims}")
    for d, lim, axis in zip(dims, limits, "xyz", strict=True):
        if d > lim:
            raise LaunchError(f"{what}.{axis} = {d} exceeds CUDA's limit of {lim}")
    return dims


def _count_arrays(t: Type) -> int:
    if isinstance(t, (Array, Record)):
        return 1
    return sum(map(_count_arrays, t.items)) if isinstance(t, Tuple) else 0


def _check_writeable(kernel: CPUKernel, k: int, keep: list, first: int) -> None:
    """Argument ``k`` (its arrays are ``keep[first:]``) is stored into by the kernel:
    refuse a read-only array (``writeable=False``, a view of ``bytes``, a memmap opened
    with mode "r"), whose memory may be shared or not even writable."""
    for a in keep[first:]:
        if not a.flags.writeable:
            name = kernel.arg_names[k] if k < len(kernel.arg_names) else str(k)
            raise LaunchError(
                f"kernel {kernel.name!r}: argument {k} ({name!r}) is a read-only "
                "array, but the kernel writes to it: pass a writeable array "
                "(for instance a copy: np.array(a))"
            )


def _scalar_param(kernel: str, t: Scalar, value, out: list) -> None:
    if t.kind == "b":
        out.append(int(bool(value)))
    elif t.name == "bfloat16":  # its bits too (cujit.types.bf16)
        from cujit.types.bf16 import value_bits

        out.append(value_bits(value))
    elif t.kind == "f" and t.bits == 16:  # a half travels as its bits
        out.append(int(np.float16(value).view(np.uint16)))
    elif t.kind == "f":
        out.append(float(value))
    elif t.kind == "c":  # the two parts (cujit.abi)
        z = complex(value)
        out.extend((z.real, z.imag))
    elif t.kind in "Mm":  # a datetime64 / timedelta64: its int64 count of t's unit
        out.append(int(np.asarray(value).astype(t.dtype).view(np.int64)))
    else:  # as the GPU launch: an int of the type's bits is taken as those bits (0xFFFFFFFF
        # is an int32's -1, as numba passes it); one needing more bits is refused, not cut
        v = int(value)
        half = 1 << (t.bits - 1)
        if not -half <= v < 2 * half:
            raise LaunchError(
                f"kernel {kernel!r}: an argument of type {t} cannot hold {v} "
                f"(it takes {-half} to {2 * half - 1}, as {t.bits}-bit patterns)"
            )
        v &= 2 * half - 1
        out.append(v - 2 * half if t.kind == "i" and v >= half else v)


def _address(kernel: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise LaunchError(f"kernel {kernel!r}: a pointer argument takes an address, not {value!r}")
    return int(value) & (2**64 - 1)


def _foreign_array(kernel: str, value) -> np.ndarray:
    """Another object's CUDA Array Interface as a host array (it must describe memory
    the CPU target allocated: ``interop.py``); its stream is synchronized, as numba's
    launch does."""
    from cujit.targets.cpu.interop import as_cuda_array

    try:
        return as_cuda_array(value)
    except TypeError as e:
        raise LaunchError(
            f"kernel {kernel!r} runs on the CPU target but was given a GPU device array "
            f"({e}); pass a NumPy array or an array from cujit.targets.cpu.memory"
        ) from None


def _flatten(kernel: str, t: Type, value, out: list, keep: list) -> None:
    """Append argument ``value``'s flat parameters (``cujit.abi``) to ``out``."""
    if isinstance(t, EnumMember):  # an enum member: its value (cujit.abi)
        t, value = t.dtype, value.value
    _flatten_value(kernel, t, value, out, keep)


def _flatten_value(kernel: str, t: Type, value, out: list, keep: list) -> None:
    if isinstance(t, Array):
        if hasattr(value, "__cuda_array_interface__") and not isinstance(value, np.ndarray):
            value = _foreign_array(kernel, value)
        a = value if isinstance(value, np.ndarray) else np.asarray(value)
        if a.dtype != t.dtype.dtype or a.ndim != t.ndim:
            raise LaunchError(
                f"kernel {kernel!r}: argument of dtype {a.dtype}, ndim {a.ndim} "
                f"does not match the compiled type {t}"
            )
        keep.append(a)
        out.extend((a.ctypes.data, *a.shape, *(a.strides if passes_strides(t) else ())))
    elif isinstance(t, Record):  # a structured scalar: the bytes it shares with its array
        if not isinstance(value, np.void) or value.dtype.itemsize != t.size:
            raise LaunchError(f"kernel {kernel!r}: expected a record of {t}, got {value!r}")
        a = np.asarray(value)
        keep.append(a)
        out.append(a.ctypes.data)
    elif isinstance(t, Tuple):
        for item_t, item in zip(t.items, value, strict=True):
            _flatten(kernel, item_t, item, out, keep)
    elif isinstance(t, Scalar):
        _scalar_param(kernel, t, value, out)
    elif isinstance(t, CPointer):  # an address (an int)
        out.append(_address(kernel, value))
    else:
        raise LaunchError(f"kernel {kernel!r}: cannot pass a value of type {t}")
