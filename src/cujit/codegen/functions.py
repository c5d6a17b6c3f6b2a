"""Device functions: each typed callee of a kernel (``Function.callees``) becomes a
function lowered when first called, in numba's calling convention:

    %.9 = call i32 @"cujit$dev$add_float32_int64"(double* %.8, float %v14, i64 %v15)
    define linkonce_odr i32 @"cujit$dev$add_float32_int64"(double* %".ret", float %a, i64 %b)

A callee takes the IR values themselves (an array is its struct, a bool an ``i1``)
after a pointer to where it stores its result (``i8**``, never written, when it
returns nothing; a library's struct-model value is stored as its struct), and
returns a status: 0, or 1 when it ended in a ``raise`` or a failed debug-mode check
(its caller reads the debug record, ``checks.after_call``).  Targets whose device
code reads hidden parameters (the CPU target's thread state) name them in
``Target.callee_hidden_params``, a prefix of the kernel's own ``hidden_params``:
they come first, and every call forwards the caller's.

Where the target links modules (``Target.callee_module``: libNVVM links the modules
of one program), each device function has a module of its own, as numba builds a
library per function: defined ``linkonce_odr`` there and declared, with its
attributes, in each module that calls it; ``codegen.module_texts`` lists the
modules.  Elsewhere (the CPU target's one JIT module) the functions are
``internal`` in the kernel's module.  Neither is ``noinline``: LLVM on the host
and NVVM on the GPU inline them where that pays, and at ``-O0`` they stay real
calls.  The symbol prefix keeps a device function named ``sin`` from capturing the
C library's ``sin`` on the host.  A function that two callers reach is lowered
once: entries are keyed by the typed function object, which
``cujit.device_function`` shares between compilations with the same options.
A callee's body is lowered when it is first called, inside its caller's lowering, up
to ``NESTING`` callees deep; a deeper one is defined there and its body lowered once
the outermost callee's is done (``DeviceFunctions._pending``), so that a chain of
device functions of any length lowers on a bounded Python stack.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen import checks, debuginfo
from cujit.codegen.context import FunctionLowering
from cujit.codegen.lltypes import I8, I32, RECORD_POINTER, value_type
from cujit.codegen.target import Target
from cujit.types import Record

_I8_PTR = ll.PointerType(I8)
OK, FAILED = 0, 1  # a callee's status
# How many callees' bodies one lowering nests on Python's stack (see the module doc).
NESTING = 16


def callee_symbol(fn: ir.Function) -> str:
    """A readable name: ``add(float32, int64)`` -> ``cujit.dev.add_float32_int64``.  The
    dot before the function's name sets it apart from a longer name ending the same way
    (``set_zero`` and ``call_set_zero``); the PTX backend turns an internal function's
    into ``_$_``, and a visible one is spelled with ``$`` (``DeviceFunctions._symbol``)."""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", fn.name).strip("_") or "function"
    return f"cujit.dev.{stem}"


def result_type(fn: ir.Function) -> ll.Type | None:
    """What callee ``fn`` stores through its result pointer (None: nothing)."""
    return _returned_struct(fn.return_type) or value_type(fn.return_type)


class DeviceFunctions:
    """The device functions of one kernel's (or entry's) LLVM module, made on first use."""

    def __init__(
        self, module: ll.Module, target: Target, lower_body: Callable[[FunctionLowering], None]
    ):
        self.module = module
        self.target = target
        self._lower_body = lower_body  # module.lower_body (passed in: no import cycle)
        self._made: dict[int, tuple[ir.Function, ll.Function]] = {}
        self.modules: list[ll.Module] = []  # the functions' own modules, in creation order
        module.cujit_callee_modules = self.modules
        self._depth = 0  # callee bodies being lowered now, one inside another
        self._pending: list[FunctionLowering] = []  # defined; bodies lowered later
        self._names: set[str] = set()  # the globals of every module (``_taken``)
        self._counted: dict[int, int] = {}  # id(module) -> its globals in _names

    def get(self, fn: ir.Function, into: ll.Module | None = None) -> ll.Function:
        """Typed callee ``fn`` as module ``into`` (default: the kernel's) sees it: its
        definition, lowered on first request, or a declaration of it."""
        made = self._made.get(id(fn))
        defined = made[1] if made is not None else self._define(fn)
        into = into or self.module
        if defined.module is into:
            return defined
        seen = into.globals.get(defined.name)
        if seen is not None:
            return seen
        declared = ll.Function(into, defined.function_type, defined.name)
        for attr in defined.attributes:
            declared.attributes.add(attr)
        return declared

    def call(self, ctx: FunctionLowering, fn: ir.Function, args: list[ll.Value]):
        """Call ``fn`` from ``ctx``'s function: its result (None when it has none)."""
        callee = self.get(fn, ctx.module)
        hidden = list(ctx.llfn.args[: len(self.target.callee_hidden_params)])
        rt = result_type(fn)
        b = ctx.builder
        slot = ll.Constant(ll.PointerType(_I8_PTR), None) if rt is None else ctx.alloca(rt, 8)
        b.call(callee, [*hidden, slot, *args])
        return None if rt is None else b.load(slot)

    def _home(self, symbol: str) -> ll.Module:
        if self.target.callee_module is None:
            return self.module
        home = ll.Module(name=symbol)
        home.triple, home.data_layout = self.module.triple, self.module.data_layout
        debuginfo.enable_like(home, self.module)
        checks.share(self.module, home)
        self.target.callee_module(home)
        self.modules.append(home)
        return home

    def _symbol(self, fn: ir.Function) -> str:
        """A name unique in the program (every module of it).  A function visible
        across modules keeps its name in the PTX, where no ``.`` may appear: ``$``
        stands for it (``cujit$dev$f``; still no ``_`` before the function's name)."""
        taken = self._taken()
        dot = "." if self.target.callee_module is None else "$"
        stem = callee_symbol(fn).replace(".", dot)
        name, k = stem, 0
        while name in taken:
            k += 1
            name = f"{stem}{dot}{k}"
        return name

    def _taken(self) -> set[str]:
        """Every global's name in the program's modules.  Modules only gain globals:
        each module's new names are added once (a program of n device functions
        finds its n names in linear time)."""
        for m in (self.module, *self.modules):
            counted = self._counted.get(id(m), 0)
            if len(m.globals) != counted:
                self._names.update(itertools.islice(m.globals, counted, None))
                self._counted[id(m)] = len(m.globals)
        return self._names

    def _define(self, fn: ir.Function) -> ll.Function:
        hidden = list(self.target.callee_hidden_params)
        params = [ty for _, ty in hidden]
        params.append(ll.PointerType(result_type(fn) or _I8_PTR))
        for p in fn.args:
            lt = value_type(p.type)
            if lt is None:
                raise AssertionError(f"{fn.name}: argument %{p.id} has no machine form")
            params.append(lt)
        name = self._symbol(fn)
        home = self._home(name)
        llfn = ll.Function(home, ll.FunctionType(I32, params), name)
        llfn.linkage = "internal" if home is self.module else "linkonce_odr"
        llfn.attributes.add("nounwind")
        if fn.forceinline:  # jit(forceinline=True): LLVM/NVVM must inline every call
            llfn.attributes.add("alwaysinline")
        # Entered before lowering the body: a function is lowered once.
        self._made[id(fn)] = (fn, llfn)
        for arg, (n, _) in zip(llfn.args, hidden, strict=False):  # the hidden ones come first
            arg.name = n
        llfn.args[len(hidden)].name = ".ret"
        ctx = FunctionLowering(fn, self.target, home, llfn, self, kernel=False)
        debuginfo.begin_function(ctx, fn.name, fn.loc, tuple(p.type for p in fn.args))
        for p, arg, n in zip(fn.args, llfn.args[len(hidden) + 1 :], fn.arg_names, strict=True):
            arg.name = n
            ctx.set(p, arg)
        debuginfo.describe_params(ctx, fn.args)
        if self._depth >= NESTING:
            self._pending.append(ctx)
            return llfn
        self._lower(ctx)
        while self._depth == 0 and self._pending:
            self._lower(self._pending.pop())
        return llfn

    def _lower(self, ctx: FunctionLowering) -> None:
        self._depth += 1
        try:
            self._lower_body(ctx, self.target.callee_prologue)
        finally:
            self._depth -= 1


def _returned_struct(t) -> ll.Type | None:
    """A library's struct-model value is returned by value, as the struct of its
    members: its Record reference in the callee may be the callee's own stack slot."""
    if isinstance(t, Record) and t.origin is not None:
        from cujit.codegen.struct_proxy import struct_type

        return struct_type(t.origin)[0]
    return None


def lower_call_function(ctx: FunctionLowering, op: ir.CallFunction) -> None:
    """``callfunction``: call the callee, forwarding the target's hidden parameters."""
    callee = ctx.fn.callee(op.callee)
    result = ctx.functions.call(ctx, callee, [ctx.get(a) for a in op.args])
    if result is not None and _returned_struct(op.result.type) is not None:
        slot = ctx.alloca(result.type, 8)  # the caller's own copy: a Record is its address
        ctx.builder.store(result, slot)
        result = ctx.builder.bitcast(slot, RECORD_POINTER)
    ctx.set(op.result, result)
    checks.after_call(ctx)  # debug mode: leave too if the callee failed


def lower_device_return(ctx: FunctionLowering, term: ir.Terminator) -> None:
    """A device function's ``return`` (or ``raise``: like a kernel's, it is not
    reported; the function fails, its result unwritten)."""
    b = ctx.builder
    if isinstance(term, ir.Return) and term.value is not None and result_type(ctx.fn):
        out = result_pointer(ctx)
        value = ctx.get(term.value)
        if value.type == RECORD_POINTER and out.type.pointee != RECORD_POINTER:
            value = b.load(b.bitcast(value, out.type))  # an extension value's members
        b.store(value, out)
    leave(ctx, OK if isinstance(term, ir.Return) else FAILED)


def result_pointer(ctx: FunctionLowering) -> ll.Value:
    """Where the device function being lowered stores its result."""
    return ctx.llfn.args[len(ctx.target.callee_hidden_params)]


def leave(ctx: FunctionLowering, status: int) -> None:
    """Return from the device function being lowered with ``status``."""
    ctx.builder.ret(ll.Constant(I32, status))
