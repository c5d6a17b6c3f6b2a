"""Checks reported to the host: array bounds (``jit(boundscheck=True)``,
``CUJIT_BOUNDSCHECK=1``, and the CPU target's default) and, in debug mode
(``jit(debug=True)``, ``CUJIT_DEBUG=1``), ``assert``, ``raise`` and division by zero.
As in numba, debug mode alone does not check array bounds.

A kernel cannot raise a Python exception, and ``trap`` would take the CUDA
context down with it.  So a failing check claims the module's error record (the
layout is ``cujit.abi``'s ``DEBUG_*``) and the thread returns::

    %ok = icmp ult i64 %i.wrapped, %n            ; per axis, on the wrapped index
    br i1 %ok, label %inbounds, label %oob
  oob:
    call void @cujit_claim_error(i64 <code>, threadIdx, blockIdx, i64 %i, i64 <axis>, i64 %n)
    ret void                                      ; (the target's return)

  define internal void @cujit_claim_error(...) noinline cold   ; one per module
    %old = cmpxchg i64* @cujit_debug_error[0], i64 0, i64 %code monotonic monotonic
    br i1 <won>, label %fill, label %done        ; the first failure wins
  fill:
    store threadIdx, blockIdx, index, axis, extent into the record; br label %done

Each code names an ``abi.ErrorSite`` (source location, exception class, message);
``error_sites(module)`` is that table, which the compile result keeps and the host
reads the record against (``cujit.runtime.debug``).  A device function that fails
returns to its caller, which leaves as well once it sees the record claimed
(``after_call``).  Nothing here emits anything unless ``enable`` was called for
the module: without debug mode, ``raise`` and a failed ``assert`` just end the thread.
"""

from __future__ import annotations

from dataclasses import field

from llvmlite import ir as ll

from cujit import abi, ir
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I32, I64, i64
from cujit.frozen import mutable
from cujit.types import PyObject, int32

_ATTR = "cujit_checks"  # the per-module state, kept on the llvmlite Module object


@mutable
class _ModuleChecks:
    """What the checks of one module need: which are on, and the error records."""

    addrspace: int
    bounds: bool = True  # array bounds (a tuple indexed at run time: under either flag)
    errors: bool = True  # debug mode: ``raise``, ``assert``, division by zero
    home: ll.Module | None = None  # the module that defines the record
    records: dict[int, ll.GlobalVariable] = field(default_factory=dict)  # id(module) ->
    claimers: dict[int, ll.Function] = field(default_factory=dict)  # id(module) ->
    sites: dict[int, abi.ErrorSite] = field(default_factory=dict)
    codes: dict[abi.ErrorSite, int] = field(default_factory=dict)
    # Per function (by id): the ids of its local copies of tuples' items.
    tuple_copies: dict[int, frozenset[int]] = field(default_factory=dict)

    def code(self, site: abi.ErrorSite) -> int:
        if site not in self.codes:
            self.codes[site] = len(self.codes) + 1  # 0 means "nothing failed"
            self.sites[self.codes[site]] = site
        return self.codes[site]


def enable(module: ll.Module, addrspace: int, bounds: bool = True, errors: bool = True) -> None:
    """Turn checks on for everything lowered into ``module``; the record global lives
    in ``addrspace`` (the target's global memory).  ``bounds``: array bounds;
    ``errors``: debug mode's ``raise``, ``assert`` and division by zero (without it
    they keep their release meaning)."""
    if bounds or errors:
        setattr(module, _ATTR, _ModuleChecks(addrspace, bounds, errors, module))


def share(module: ll.Module, other: ll.Module) -> None:
    """Code lowered into ``other`` (a device function's own module, linked with
    ``module``) reports into ``module``'s table and record, which it declares."""
    state = getattr(module, _ATTR, None)
    if state is not None:
        setattr(other, _ATTR, state)


def error_sites(module: ll.Module) -> dict[int, abi.ErrorSite]:
    """The module's code -> ErrorSite table (empty when no check was emitted)."""
    state = getattr(module, _ATTR, None)
    return dict(state.sites) if state is not None else {}


def _state(ctx: FunctionLowering) -> _ModuleChecks | None:
    return getattr(ctx.module, _ATTR, None)


def _record(ctx: FunctionLowering, state: _ModuleChecks) -> ll.GlobalVariable:
    return _record_in(ctx.module, state)


def _record_in(module: ll.Module, state: _ModuleChecks) -> ll.GlobalVariable:
    """The record as ``module`` sees it: defined in the home module (where the host
    finds it by name), declared in the modules linked with it."""
    g = state.records.get(id(module))
    if g is None:
        ty = ll.ArrayType(I64, abi.DEBUG_RECORD_WORDS)
        # External linkage: the host finds it by name (cuModuleGetGlobal, or the
        # JIT's symbol table on the CPU target).
        g = ll.GlobalVariable(module, ty, abi.DEBUG_RECORD_SYMBOL, addrspace=state.addrspace)
        if module is state.home:
            g.initializer = ll.Constant(ty, None)
        g.align = 8
        state.records[id(module)] = g
    return g


def define_record(module: ll.Module) -> None:
    """Once ``module`` (the home) is lowered: it defines the record when any module
    linked with it reports into it (a check reached only through a call that no
    ``after_call`` follows, such as an extension's ``compile_internal``)."""
    state = getattr(module, _ATTR, None)
    if state is not None and state.sites and state.home is module:
        _record_in(module, state)


def _word(ctx: FunctionLowering, record: ll.GlobalVariable, k: int) -> ll.Value:
    return ctx.builder.gep(record, [ll.Constant(I32, 0), ll.Constant(I32, k)])


def _sreg(ctx: FunctionLowering, reg: str) -> ll.Value:
    """``threadIdx.x`` and friends (int32), through the target's own lowering."""
    op = ir.Intrinsic(
        loc=ctx.loc, result=ir.Value(-1, int32), name="cuda.sreg", args=(), attrs=(("reg", reg),)
    )
    return ctx.target.intrinsics["cuda.sreg"](ctx, op, [])


def _claim(
    ctx: FunctionLowering,
    state: _ModuleChecks,
    site: abi.ErrorSite,
    extra: tuple[ll.Value, ll.Value, ll.Value] | None = None,
) -> None:
    """Claim the record for ``site`` unless a thread already has, and fill it in: one
    call of the module's claiming function, given this thread's indices (through the
    target's own lowering) and, for a bounds check, the index, axis and extent."""
    where = [_sreg(ctx, f"{kind}.{axis}") for axis in "xyz" for kind in ("threadIdx", "blockIdx")]
    bounds = list(extra) if extra is not None else [i64(0)] * 3
    ctx.builder.call(_claimer(ctx.module, state), [i64(state.code(site)), *where, *bounds])


def report_site(
    ctx: FunctionLowering, site: abi.ErrorSite
) -> tuple[ll.GlobalVariable, int, list[ll.Value]]:
    """For a failure a target detects in its own code (the CPU target's recursion
    guard): the module's error record (made now if no check is on), ``site``'s code,
    and this thread's indices in the claiming order (``_CLAIMER_TYPE``)."""
    state = _state(ctx)
    if state is None:  # neither bounds nor debug checks: a record for this site alone
        state = _ModuleChecks(ctx.target.global_addrspace, bounds=False, errors=False)
        state.home = ctx.module
        setattr(ctx.module, _ATTR, state)
    where = [_sreg(ctx, f"{kind}.{axis}") for axis in "xyz" for kind in ("threadIdx", "blockIdx")]
    return _record(ctx, state), state.code(site), where


_CLAIMER = "cujit_claim_error"
# code; threadIdx.x, blockIdx.x, threadIdx.y, blockIdx.y, threadIdx.z, blockIdx.z;
# index, axis, extent
_CLAIMER_TYPE = ll.FunctionType(ll.VoidType(), [I64] + [I32] * 6 + [I64] * 3)
_CLAIMER_SLOTS = (
    abi.DEBUG_THREAD,
    abi.DEBUG_BLOCK,
    abi.DEBUG_THREAD + 1,
    abi.DEBUG_BLOCK + 1,
    abi.DEBUG_THREAD + 2,
    abi.DEBUG_BLOCK + 2,
)


def _claimer(module: ll.Module, state: _ModuleChecks) -> ll.Function:
    """The module's claiming function, made at its first failing check: a
    compare-and-swap of the record's code from 0 (the first failure wins), then, for
    the winner, the rest of the record.  Internal, cold and never inlined: a kernel
    with hundreds of checks (the CPU target checks every array access) carries one
    copy of this, not one per check."""
    fn = state.claimers.get(id(module))
    if fn is not None:
        return fn
    fn = ll.Function(module, _CLAIMER_TYPE, name=_CLAIMER)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.attributes.add("cold")
    record = _record_in(module, state)
    b = ll.IRBuilder(fn.append_basic_block("entry"))

    def word(k: int) -> ll.Value:
        return b.gep(record, [ll.Constant(I32, 0), ll.Constant(I32, k)])

    code, *where = fn.args[:7]
    # monotonic suffices: the host reads the record only after the whole grid ended.
    pair = b.cmpxchg(word(abi.DEBUG_CODE), i64(0), code, "monotonic", "monotonic")
    fill = fn.append_basic_block("fill")
    done = fn.append_basic_block("done")
    b.cbranch(b.extract_value(pair, 1), fill, done)
    b.position_at_end(fill)
    for slot, v in zip(_CLAIMER_SLOTS, where, strict=True):
        b.store(b.zext(v, I64), word(slot))
    for slot, v in zip((abi.DEBUG_INDEX, abi.DEBUG_AXIS, abi.DEBUG_SIZE), fn.args[7:], strict=True):
        b.store(v, word(slot))
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    state.claimers[id(module)] = fn
    return fn


def _leave(ctx: FunctionLowering) -> None:
    """End the thread (a kernel) or return to the caller (a device function)."""
    if not ctx.kernel:  # status 1, as functions.lower_device_return does for a ``raise``
        ctx.builder.ret(ll.Constant(I32, 1))
    elif ctx.target.lower_return is not None:
        ctx.target.lower_return(ctx)
    else:
        ctx.builder.ret_void()


BOUNDS_MESSAGE = "index {index} is out of bounds for axis {axis} with size {size}"


TUPLE_INDEX_MESSAGE = "tuple index out of range"


def _indexes_a_tuple(ctx: FunctionLowering, state: _ModuleChecks, op: ir.Op | None) -> bool:
    """Whether ``op`` reads a tuple through the local copy of its items that stage 4
    indexes at run time (``shape[i]``): the local.array marked ``tuple``."""
    obj = getattr(op, "obj", None)
    if obj is None:
        return False
    copies = state.tuple_copies.get(id(ctx.fn))
    if copies is None:
        copies = state.tuple_copies[id(ctx.fn)] = frozenset(
            o.result.id
            for block in ctx.fn.blocks
            for o in block.ops
            if isinstance(o, ir.Intrinsic) and o.attr("tuple")
        )
    return obj.id in copies


def check_bounds(
    ctx: FunctionLowering,
    indices: list[ll.Value],
    wrapped: list[ll.Value],
    extents: list[ll.Value],
    op: ir.Op | None = None,
) -> None:
    """Bounds checks: each index must lie in ``[-n, n)`` of its extent ``n`` (Python's rule;
    ``wrapped`` has the negative ones already moved up by ``n``, so one unsigned
    compare per axis does it).  Reported as IndexError at ``ctx.loc``: for a tuple's
    items (``op`` reads one), with Python's message for a tuple."""
    state = _state(ctx)
    if state is None:
        return
    b = ctx.builder
    if _indexes_a_tuple(ctx, state, op):
        site = abi.ErrorSite(ctx.loc, IndexError, TUPLE_INDEX_MESSAGE)
    elif state.bounds:
        site = abi.ErrorSite(ctx.loc, IndexError, BOUNDS_MESSAGE, bounds=True)
    else:
        return
    for axis, (i, w, n) in enumerate(zip(indices, wrapped, extents, strict=True)):
        ok = b.icmp_unsigned("<", w, n)
        good = ctx.llfn.append_basic_block("inbounds")
        bad = ctx.llfn.append_basic_block("outofbounds")
        b.cbranch(ok, good, bad)
        b.position_at_end(bad)
        _claim(ctx, state, site, (i, i64(axis), n))
        _leave(ctx)
        b.position_at_end(good)


def record_raise(ctx: FunctionLowering, term: ir.Raise) -> None:
    """Debug mode: report ``raise`` / a failed ``assert`` before the thread ends.  The
    caller emits the ending itself, so this only claims the record."""
    state = _state(ctx)
    if state is None or not state.errors:
        return
    exc = (
        term.exc.type.value
        if term.exc is not None and isinstance(term.exc.type, PyObject)
        else None
    )
    if not (isinstance(exc, type) and issubclass(exc, BaseException)):
        exc = RuntimeError  # ``raise`` of something inference could not pin down
    message = term.message
    if message is None:
        message = "assertion failed" if exc is AssertionError else f"{exc.__name__} raised"
    _claim(ctx, state, abi.ErrorSite(ctx.loc, exc, message))


ZERO_DIVISION_MESSAGE = "integer division or modulo by zero"


FLOAT_ZERO_DIVISION = {
    "/": "float division by zero",
    "//": "float floor division by zero",
    "%": "float modulo by zero",
}


def check_float_divisor(ctx: FunctionLowering, op: str, divisor: ll.Value) -> None:
    """Debug mode: a float ``/``, ``//`` or ``%`` by zero raises ZeroDivisionError, as
    Python does and as numba's debug mode does (its Python error model); outside
    debug mode the result is IEEE's (+-inf or nan)."""
    state = _state(ctx)
    if state is None or not state.errors:
        return
    zero = ll.Constant(divisor.type, 0.0)
    check_divisor(ctx, ctx.builder.fcmp_ordered("==", divisor, zero), FLOAT_ZERO_DIVISION[op])


def check_divisor(
    ctx: FunctionLowering, by_zero: ll.Value, message: str = ZERO_DIVISION_MESSAGE
) -> None:
    """Debug mode: a ``//`` or ``%`` whose divisor is zero (``by_zero`` is true)
    reports ZeroDivisionError at ``ctx.loc``, as Python raises it."""
    state = _state(ctx)
    if state is None or not state.errors:
        return
    b = ctx.builder
    good = ctx.llfn.append_basic_block("divisor.ok")
    bad = ctx.llfn.append_basic_block("divisor.zero")
    b.cbranch(by_zero, bad, good)
    b.position_at_end(bad)
    _claim(ctx, state, abi.ErrorSite(ctx.loc, ZeroDivisionError, message))
    _leave(ctx)
    b.position_at_end(good)


def after_call(ctx: FunctionLowering) -> None:
    """Debug mode, after a device-function call: if the record is claimed (the callee,
    or any thread, failed), this thread leaves too rather than run on with the
    callee's undefined result."""
    state = _state(ctx)
    if state is None or not state.sites:
        return  # nothing lowered so far can fail: the callee was lowered before this
    b = ctx.builder
    # A plain load: only this thread's own callee must be seen, and its cmpxchg
    # precedes the load in this thread (LLVM knows the callee may write the global).
    code = b.load(_word(ctx, _record(ctx, state), abi.DEBUG_CODE), align=8)
    go_on = ctx.llfn.append_basic_block("debug.ok")
    stop = ctx.llfn.append_basic_block("debug.stop")
    b.cbranch(b.icmp_unsigned("==", code, i64(0)), go_on, stop)
    b.position_at_end(stop)
    _leave(ctx)
    b.position_at_end(go_on)
