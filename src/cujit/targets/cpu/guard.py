"""Stopping a CPU launch from inside: Ctrl-C (SIGINT) and runaway recursion.

A kernel runs as compiled code on host threads, where neither Python's signal
handling nor its recursion limit reaches.  One small support module, compiled once
per process, gives the kernels what they need, as symbols every kernel module (and
every cached object) links against:

- ``cujit_cpu_stop``: an ``i32`` set by the process's SIGINT handler.  Kernels read it
  (volatile) at each loop back-edge of the user's code (``poll_loops``) and the runner
  before each claim of blocks; once it is set they call ``cujit_cpu_bail``.
- ``cujit_cpu_protect(run, args, launch, worker, rec)``: runs the grid runner ``run``
  after a ``setjmp`` into the per-thread record ``rec`` (``RECORD_BYTES``), which it
  makes this host thread's (a pthread key): ``cujit_cpu_bail(reason)`` jumps back
  there and ``protect`` returns the reason (``STOPPED``, ``TOO_DEEP``), 0 when the
  runner ended.  Coroutine frames on the heap that a jump leaves behind are lost.
- ``cujit_cpu_stack_guard(record, code, tid.xyz, ctaid.xyz)``: called on entry of
  every device function that calls itself (``recursion_prologue``, which compares the
  stack pointer with the thread's floor inline and calls it only to measure the
  stack or to fail).  Once the host
  thread's stack is within ``STACK_MARGIN`` bytes of its end, it fills the kernel's
  error record (``codegen.checks``'s layout, a ``RecursionError`` site at the
  function's call of itself) and bails with ``TOO_DEEP``; the launch then raises that error.
- ``cujit_cpu_on_sigint(sig)``: the SIGINT handler ``arm`` puts in front of
  Python's: it sets ``cujit_cpu_stop`` and calls Python's, so the launch stops and
  Python raises ``KeyboardInterrupt`` once it returns.  It is (re)installed on
  Linux whenever Python's handler is a Python callable it has not seen.

The cost: one volatile load and branch per loop iteration of the user's code, and a
``pthread_getspecific`` call and a compare per call of a recursive device function;
kernels without loops or recursion pay nothing inside the thread loop.
"""

from __future__ import annotations

import ctypes
import signal
import sys
import threading

from llvmlite import ir as ll

from cujit import forksafe
from cujit.codegen.lltypes import I8, I32, I64, VOID

I8P = ll.PointerType(I8)
STOP_SYMBOL = "cujit_cpu_stop"
BAIL_SYMBOL = "cujit_cpu_bail"
GUARD_SYMBOL = "cujit_cpu_stack_guard"
PROTECT_SYMBOL = "cujit_cpu_protect"
HANDLER_SYMBOL = "cujit_cpu_on_sigint"
_KEY_SYMBOL = "cujit_cpu_key"
_PREVIOUS_SYMBOL = "cujit_cpu_previous_handler"

STOPPED, TOO_DEEP = 1, 2  # why a runner was left (what ``protect`` returns): bits
_JMPBUF_BYTES = 512  # glibc's jmp_buf: 200 bytes on x86-64, 312 on aarch64
_REASON_AT = _JMPBUF_BYTES  # i64: why the thread bailed
_FLOOR_AT = _JMPBUF_BYTES + 8  # i64: the lowest stack address recursion may reach
RECORD_BYTES = _JMPBUF_BYTES + 64
STACK_MARGIN = 256 * 1024  # bytes left below the deepest frame: the bail path, libm calls
_FALLBACK_DEPTH = 512 * 1024  # stack a recursion may take where the thread's is not known
_ATTR_BYTES = 256  # pthread_attr_t: 56 bytes on x86-64, 64 on aarch64

# The claiming layout of codegen.checks's error record (cujit.abi's DEBUG_* words).
_GUARD_TYPE = ll.FunctionType(VOID, [I8P, I64] + [I32] * 6)


def _fn(module, name, ret, args, *attrs) -> ll.Function:
    f = module.globals.get(name)
    if f is None:
        f = ll.Function(module, ll.FunctionType(ret, args), name)
        for a in attrs:
            f.attributes.add(a)
    return f


def _support_module(triple: str, layout: str) -> ll.Module:  # noqa: C901 -- one module, four functions
    from cujit import abi

    m = ll.Module(name="cujit_cpu_support")
    m.triple, m.data_layout = triple, layout
    stop = ll.GlobalVariable(m, I32, STOP_SYMBOL)
    stop.initializer = ll.Constant(I32, 0)
    key = ll.GlobalVariable(m, I32, _KEY_SYMBOL)
    key.initializer = ll.Constant(I32, 0)
    handler_t = ll.FunctionType(VOID, [I32]).as_pointer()
    previous = ll.GlobalVariable(m, handler_t, _PREVIOUS_SYMBOL)
    previous.initializer = ll.Constant(handler_t, None)
    get = _fn(m, "pthread_getspecific", I8P, [I32], "nounwind")
    put = _fn(m, "pthread_setspecific", I32, [I32, I8P], "nounwind")
    setjmp = _fn(m, "_setjmp", I32, [I8P], "returns_twice")
    longjmp = _fn(m, "longjmp", VOID, [I8P, I32], "noreturn")
    zero64 = ll.Constant(I64, 0)

    def slot(b, rec, at):
        return b.bitcast(b.gep(rec, [ll.Constant(I64, at)]), I64.as_pointer())

    # void cujit_cpu_on_sigint(i32 sig)
    h = ll.Function(m, ll.FunctionType(VOID, [I32]), HANDLER_SYMBOL)
    b = ll.IRBuilder(h.append_basic_block("entry"))
    b.store_atomic(ll.Constant(I32, 1), stop, "seq_cst", 4)
    prev = b.load(previous)
    with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(prev, I64), zero64)):
        b.call(prev, [h.args[0]])
    b.ret_void()

    # void cujit_cpu_bail(i32 reason): back to this thread's protect, if it has one
    bail = ll.Function(m, ll.FunctionType(VOID, [I32]), BAIL_SYMBOL)
    bail.attributes.add("cold")
    bail.attributes.add("noinline")
    b = ll.IRBuilder(bail.append_basic_block("entry"))
    rec = b.call(get, [b.load(key)])
    with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(rec, I64), zero64)):
        b.store(b.zext(bail.args[0], I64), slot(b, rec, _REASON_AT))
        b.call(longjmp, [rec, ll.Constant(I32, 1)])
        b.unreachable()
    b.ret_void()

    # i32 cujit_cpu_protect(run, args, launch, worker, rec)
    run_t = ll.FunctionType(VOID, [I8P, I8P, I8P])
    p = ll.Function(
        m, ll.FunctionType(I32, [run_t.as_pointer(), I8P, I8P, I8P, I8P]), PROTECT_SYMBOL
    )
    run, args, launch, worker, rec = p.args
    b = ll.IRBuilder(p.append_basic_block("entry"))
    k = b.load(key)
    outer = b.call(get, [k])
    b.store(zero64, slot(b, rec, _REASON_AT))
    b.store(zero64, slot(b, rec, _FLOOR_AT))
    b.call(put, [k, rec])
    jumped = b.call(setjmp, [rec])
    with b.if_then(b.icmp_unsigned("==", jumped, ll.Constant(I32, 0))):
        b.call(run, [args, launch, worker])
    b.call(put, [k, outer])
    b.ret(b.trunc(b.load(slot(b, rec, _REASON_AT)), I32))

    # void cujit_cpu_stack_guard(i8* record, i64 code, i32 tid.x, ctaid.x, ...)
    g = ll.Function(m, _GUARD_TYPE, GUARD_SYMBOL)
    record, code, *where = g.args
    b = ll.IRBuilder(g.append_basic_block("entry"))
    probe = b.alloca(I8, name="probe")  # this frame: just below the caller's
    rec = b.call(get, [b.load(key)])
    known = g.append_basic_block("known")
    leave = g.append_basic_block("leave")
    b.cbranch(b.icmp_unsigned("==", b.ptrtoint(rec, I64), zero64), leave, known)
    b.position_at_end(known)
    sp = b.ptrtoint(probe, I64)
    floor_p = slot(b, rec, _FLOOR_AT)
    floor = b.load(floor_p)
    measured = g.append_basic_block("measure")
    compare = g.append_basic_block("compare")
    b.cbranch(b.icmp_unsigned("==", floor, zero64), measured, compare)
    b.position_at_end(measured)  # once per launch and thread: where this stack ends
    attr = b.alloca(ll.ArrayType(I8, _ATTR_BYTES), name="attr")
    attr.align = 16
    base, size = b.alloca(I8P, name="base"), b.alloca(I64, name="size")
    attr_p = b.bitcast(attr, I8P)
    self_t = b.call(_fn(m, "pthread_self", I64, [], "nounwind"), [])
    got = b.call(_fn(m, "pthread_getattr_np", I32, [I64, I8P], "nounwind"), [self_t, attr_p])
    b.store(ll.Constant(I8P, None), base)
    b.store(zero64, size)
    ok = b.icmp_unsigned("==", got, ll.Constant(I32, 0))
    with b.if_then(ok):
        b.call(
            _fn(m, "pthread_attr_getstack", I32, [I8P, I8P.as_pointer(), I64.as_pointer()]),
            [attr_p, base, size],
        )
        b.call(_fn(m, "pthread_attr_destroy", I32, [I8P]), [attr_p])
    low = b.ptrtoint(b.load(base), I64)
    sane = b.and_(
        b.icmp_unsigned("!=", low, zero64),
        b.icmp_unsigned("<", b.add(low, ll.Constant(I64, STACK_MARGIN)), sp),
    )
    computed = b.select(
        sane,
        b.add(low, ll.Constant(I64, STACK_MARGIN)),
        b.sub(sp, ll.Constant(I64, _FALLBACK_DEPTH)),
    )
    b.store(computed, floor_p)
    measured_end = b.block
    b.branch(compare)
    b.position_at_end(compare)
    limit = b.phi(I64)
    limit.add_incoming(floor, known)
    limit.add_incoming(computed, measured_end)
    deep = g.append_basic_block("too_deep")
    b.cbranch(b.icmp_unsigned("<", sp, limit), deep, leave)
    b.position_at_end(deep)
    words = b.bitcast(record, I64.as_pointer())

    def word(k: int) -> ll.Value:
        return b.gep(words, [ll.Constant(I32, k)])

    pair = b.cmpxchg(word(abi.DEBUG_CODE), zero64, code, "monotonic", "monotonic")
    with b.if_then(b.extract_value(pair, 1)):  # the first failure wins, as in checks.py
        slots = (abi.DEBUG_THREAD, abi.DEBUG_BLOCK)
        for k, v in enumerate(where):
            b.store(b.zext(v, I64), word(slots[k % 2] + k // 2))
        for at in (abi.DEBUG_INDEX, abi.DEBUG_AXIS, abi.DEBUG_SIZE):
            b.store(zero64, word(at))
    b.call(bail, [ll.Constant(I32, TOO_DEEP)])
    b.branch(leave)
    b.position_at_end(leave)
    b.ret_void()
    return m


class _Support:
    """The support module, loaded, and the addresses Python uses."""

    def __init__(self) -> None:
        from llvmlite import binding as llvm

        from cujit.targets.cpu.engine import host_data_layout, host_machine, host_triple

        module = llvm.parse_assembly(str(_support_module(host_triple(), host_data_layout())))
        module.verify()
        self.engine = llvm.create_mcjit_compiler(module, host_machine())  # kept alive
        self.engine.finalize_object()
        data = {
            n: self.engine.get_global_value_address(n)
            for n in (STOP_SYMBOL, _KEY_SYMBOL, _PREVIOUS_SYMBOL)
        }
        code = {
            n: self.engine.get_function_address(n)
            for n in (BAIL_SYMBOL, GUARD_SYMBOL, PROTECT_SYMBOL, HANDLER_SYMBOL)
        }
        if not all(data.values()) or not all(code.values()):
            raise AssertionError("the CPU target's support module lacks a symbol")
        key = ctypes.c_uint32(0)
        if ctypes.CDLL(None).pthread_key_create(ctypes.byref(key), None) != 0:
            raise OSError("pthread_key_create failed: no thread-specific slot is left")
        ctypes.c_uint32.from_address(data[_KEY_SYMBOL]).value = key.value
        for name, addr in {**data, **code}.items():
            llvm.add_symbol(name, addr)
        self.stop = ctypes.c_int32.from_address(data[STOP_SYMBOL])
        self.previous = ctypes.c_void_p.from_address(data[_PREVIOUS_SYMBOL])
        self.handler = code[HANDLER_SYMBOL]
        self.protect = _PROTECT(code[PROTECT_SYMBOL])
        self.lock = threading.Lock()
        self.active = 0  # launches under way (the stop flag is cleared by the first)
        self.seen_handler = None  # Python's SIGINT handler the native one was put before


_PROTECT = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_void_p,
)


_made: list[_Support] = []
_making = forksafe.renewed(threading.Lock())


def support() -> _Support:
    """The loaded support module (made once, at the first CPU compile or load: threads
    compiling their first kernels at once wait for the one that makes it)."""
    if not _made:
        with _making:
            if not _made:
                _made.append(_Support())
    return _made[0]


# --- SIGINT -----------------------------------------------------------------------

_SA_SIGINFO = 4


class _Sigaction(ctypes.Structure):  # glibc's struct sigaction on Linux
    _fields_ = [
        ("handler", ctypes.c_void_p),
        ("mask", ctypes.c_ulong * (128 // ctypes.sizeof(ctypes.c_ulong))),
        ("flags", ctypes.c_int),
        ("restorer", ctypes.c_void_p),
    ]


try:  # the C module's getsignal: signal.getsignal's enum conversion costs microseconds
    from _signal import getsignal as _handler_now
except ImportError:  # pragma: no cover - another Python
    _handler_now = signal.getsignal


def _install_handler(s: _Support) -> None:
    """Put the native handler before the process's SIGINT handler (Python's), unless it
    is there already or the disposition is not a plain handler."""
    current = _handler_now(signal.SIGINT)
    if current is s.seen_handler:
        return
    s.seen_handler = current
    if not callable(current) or not sys.platform.startswith("linux"):
        return  # SIG_DFL / SIG_IGN: Ctrl-C ends or is ignored, as the program asked
    libc = ctypes.CDLL(None, use_errno=True)
    old = _Sigaction()
    if libc.sigaction(signal.SIGINT, None, ctypes.byref(old)) != 0:
        return
    if old.handler == s.handler or old.handler in (None, 0, 1) or old.flags & _SA_SIGINFO:
        return
    s.previous.value = old.handler
    new = _Sigaction.from_buffer_copy(old)
    new.handler = s.handler
    libc.sigaction(signal.SIGINT, ctypes.byref(new), None)


def begin() -> _Support:
    """A launch starts: the handler in place, the stop flag clear unless another launch
    is under way (whose Ctrl-C stops this one too)."""
    s = support()
    if _handler_now(signal.SIGINT) is not s.seen_handler:
        _install_handler(s)
    with s.lock:
        if s.active == 0:
            s.stop.value = 0
        s.active += 1
    return s


def end(s: _Support) -> None:
    with s.lock:
        s.active -= 1


def interrupted(kernel: str) -> BaseException:
    """The error of a launch that SIGINT stopped: Python's own (KeyboardInterrupt, or
    whatever the program's handler raises) if its handler raises, else a LaunchError."""
    from cujit.diagnostics import LaunchError

    try:
        ctypes.pythonapi.PyErr_CheckSignals()  # runs the pending handler here
    except BaseException as exc:  # noqa: BLE001 -- the program's handler decides
        return exc
    return LaunchError(
        f"kernel {kernel!r} was interrupted (SIGINT) before the grid finished; "
        "its outputs are incomplete"
    )


def after_fork_in_child() -> None:
    """The support module's state in a forked child: no launch is under way there."""
    if support.cache_info().currsize:
        s = support()
        s.lock = threading.Lock()
        s.active = 0
        s.stop.value = 0


# --- what kernels emit ------------------------------------------------------------


def _declare_stop(module: ll.Module) -> ll.GlobalVariable:
    g = module.globals.get(STOP_SYMBOL)
    if g is None:
        g = ll.GlobalVariable(module, I32, STOP_SYMBOL)  # external: the support module's
    return g


def emit_poll(b: ll.IRBuilder, module: ll.Module) -> None:
    """``if (cujit_cpu_stop) cujit_cpu_bail(STOPPED)`` at ``b``'s position, leaving
    ``b`` in a new block after it."""
    flag = b.load(_declare_stop(module))
    flag.volatile = True
    bail = _fn(module, BAIL_SYMBOL, VOID, [I32], "cold", "nounwind")
    stopped = b.icmp_unsigned("!=", flag, ll.Constant(I32, 0))
    with b.if_then(stopped, likely=False):
        b.call(bail, [ll.Constant(I32, STOPPED)])


def _successors(term) -> list[ll.Block]:
    if term is None:
        return []
    found = [op for op in term.operands if isinstance(op, ll.Block)]
    if isinstance(term, ll.SwitchInstr):  # its targets are not operands
        found += [term.default, *(blk for _, blk in term.cases)]
    return list({id(b): b for b in found}.values())


def _back_edges(fn: ll.Function) -> list[ll.Block]:
    """The blocks of ``fn`` whose terminator jumps back to a block on the depth-first
    path that reached them (loop latches)."""
    succ = {id(block): _successors(block.terminator) for block in fn.blocks}
    latches: list[ll.Block] = []
    state: dict[int, int] = {}  # 1 on the path, 2 done
    stack = [(fn.blocks[0], iter(succ[id(fn.blocks[0])]))]
    state[id(fn.blocks[0])] = 1
    while stack:
        block, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[id(block)] = 2
            stack.pop()
            continue
        seen = state.get(id(nxt))
        if seen == 1:
            if not latches or latches[-1] is not block:
                latches.append(block)
        elif seen is None:
            state[id(nxt)] = 1
            stack.append((nxt, iter(succ[id(nxt)])))
    return latches


def poll_loops(module: ll.Module, functions) -> None:
    """Add a stop poll before the back-edge of every loop of ``functions`` (the kernel
    and its device functions): a spinning thread reaches one within an iteration."""
    for fn in functions:
        if fn.is_declaration or not fn.blocks:
            continue
        for latch in dict.fromkeys(_back_edges(fn)):
            _poll_before_terminator(module, fn, latch)


def _poll_before_terminator(module: ll.Module, fn: ll.Function, latch: ll.Block) -> None:
    """Move ``latch``'s terminator into a new block that a poll in ``latch`` leads to;
    phis of its successors now come from that block."""
    term = latch.terminator
    cont = fn.append_basic_block(f"{latch.name}.polled")
    latch.instructions.remove(term)
    latch.terminator = None
    cont.instructions.append(term)
    cont.terminator = term
    term.parent = cont
    for target in _successors(term):
        for instr in target.instructions:
            if not isinstance(instr, ll.PhiInstr):
                break
            instr.incomings = [(v, cont if blk is latch else blk) for v, blk in instr.incomings]
            instr._clear_string_cache()  # llvmlite keeps an instruction's text once printed
    b = ll.IRBuilder(latch)
    # The poll is the back-edge's own code: its line where the function has debug info
    # (a call without one in such a function is invalid IR).
    b.debug_metadata = getattr(term, "metadata", {}).get("dbg")
    flag = b.load(_declare_stop(module))
    flag.volatile = True
    stop = fn.append_basic_block(f"{latch.name}.stop")
    b.cbranch(b.icmp_unsigned("!=", flag, ll.Constant(I32, 0)), stop, cont)
    b.position_at_end(stop)
    bail = _fn(module, BAIL_SYMBOL, VOID, [I32], "cold", "nounwind")
    b.call(bail, [ll.Constant(I32, STOPPED)])
    b.branch(cont)


def self_call(fn):
    """The first call of itself in typed IR function ``fn``, or None."""
    from cujit import ir

    for block in fn.blocks:
        for op in block.ops:
            if isinstance(op, ir.CallFunction) and (
                op.callee == ir.SELF_CALL or fn.callee(op.callee) is fn
            ):
                return op
    return None


def recursion_prologue(ctx) -> None:
    """A device function's entry (``Target.callee_prologue``): in one that calls itself,
    the stack guard, reporting a ``RecursionError`` at its (first) call of itself."""
    from cujit import abi
    from cujit.codegen import checks

    call = self_call(ctx.fn)
    if call is None:
        return
    name = ctx.fn.name
    site = abi.ErrorSite(
        call.loc,
        RecursionError,
        f"device function {name!r} called itself until the host thread's stack was "
        f"nearly used up (the CPU target stops {STACK_MARGIN // 1024} KiB before its "
        "end): a recursion that does not reach its base case?",
    )
    record, code, where = checks.report_site(ctx, site)
    guard = _fn(ctx.module, GUARD_SYMBOL, VOID, list(_GUARD_TYPE.args), "nounwind")
    b = ctx.builder
    # The fast path inline: this thread's record, and its stack floor (0 until the
    # guard has measured the stack); the guard itself only when it must look.
    m = ctx.module
    key = m.globals.get(_KEY_SYMBOL) or ll.GlobalVariable(m, I32, _KEY_SYMBOL)
    get = _fn(m, "pthread_getspecific", I8P, [I32], "nounwind")
    rec = b.call(get, [b.load(key)])
    probe = ctx.alloca(I8, 1, name="stack.probe")
    sp = b.ptrtoint(probe, I64)
    floor_p = b.bitcast(b.gep(rec, [ll.Constant(I64, _FLOOR_AT)]), I64.as_pointer())
    live = b.icmp_unsigned("!=", b.ptrtoint(rec, I64), ll.Constant(I64, 0))
    with b.if_then(live, likely=True):
        floor = b.load(floor_p)
        unknown = b.icmp_unsigned("==", floor, ll.Constant(I64, 0))
        look = b.or_(unknown, b.icmp_unsigned("<", sp, floor))
        with b.if_then(look, likely=False):
            b.call(guard, [b.bitcast(record, I8P), ll.Constant(I64, code), *where])


__all__ = [
    "RECORD_BYTES",
    "STOPPED",
    "TOO_DEEP",
    "begin",
    "emit_poll",
    "end",
    "interrupted",
    "poll_loops",
    "recursion_prologue",
    "support",
]
