"""Calls to device functions (``@cuda.jit(device=True)``), typed per argument types.

    %5 = call %3(%1, %2)          # %3 = const <DeviceFunction add>; %1, %2: float32
  becomes
    %5: float32 = callfunction 'add(float32, float32)' (%1, %2)

and the callee's typed IR (stages 1-5 run for ``(float32, float32)``) joins the
caller's ``Function.callees`` under that symbol.  A callee that calls further
device functions carries its own ``callees``: the typed IR of a kernel is a
tree of functions that lowering emits into one LLVM module.

``Callees`` is the context one compilation hands to inference: it knows how to
run stages 1-5 for a callee (the pipeline gives it that front end, so stage 4
imports no later stage) and the key of what that front end does (the options
and the pass list), remembers the call chain to reject recursion, and files
each specialisation in ``cujit.device_function``'s table under the argument
types, the return type and that key, so that later compilations with the same
options (other kernels, other argument types of the same kernel) reuse it and
compilations with other options (a debug build keeps ``assert``) do not.
"""

from __future__ import annotations

import dataclasses
import inspect
import types as pytypes
import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

from cujit import device_function, overloads
from cujit.device_function import DeviceFunction
from cujit.diagnostics import CompileError, Loc, TypingError, UnsupportedError
from cujit.frozen import frozen, mutable
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import SELF_CALL, Block, BuildTuple, Call, CallFunction, Const, Function, Value
from cujit.types import Array, CPointer, NoneType, PyObject, Record, Scalar, Tuple, Type, none
from cujit.types.enums import EnumMember
from cujit.types.extension import is_extension_type

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

# front_end(pyfunc, arg_types, return_type, callees) -> the typed IR after stages 1-5.
FrontEnd = Callable[[object, tuple[Type, ...], "Type | None", "Callees"], Function]


@mutable
class _Compiling:
    """A device function whose typing is under way: its argument types, its declared
    return type, and the inference state (``driver._State``) once typing starts."""

    devfn: DeviceFunction
    arg_types: tuple[Type, ...]
    return_type: Type | None
    state: object = None


@mutable
class SelfCall:
    """What ``Callees.typed`` gives for a device function's call of itself: the
    return type is the declared one, or what typing has found so far (the paths that
    return without recursing), as numba types self-recursion."""

    entry: _Compiling

    def result_type(self, final: bool, loc: Loc) -> Type | None:
        ret = self.entry.return_type
        state = self.entry.state
        if ret is None and state is not None:
            ret = state.return_type
            state.self_called, state.self_seen = True, ret
            if ret is None and state.returns_nothing is not None:
                return none  # the paths typed so far return nothing
        if ret is None and final:
            raise TypingError(
                f"cannot type infer runaway recursion: '{self.entry.devfn.__name__}' has no "
                "path that returns without calling itself",
                loc,
            )
        return ret


# How many device functions deep one compilation's calls nest on Python's stack: a
# deeper callee waits for ``Callees`` to compile it from the bottom of the chain
# (``_Deferred``), so that a chain of any length uses a bounded stack.
NESTING = 16


class _Deferred(BaseException):
    """A callee too deep to compile where its call is: unwinds (past the ``except
    Exception`` of the stages in between, as no error) to the ``Callees.typed`` at the
    bottom of the chain, which compiles it and types its callers again."""

    def __init__(self, request: _Request):
        super().__init__(request.devfn.__name__)
        self.request = request


@mutable
class _Request:
    """A callee to compile: what ``Callees.typed`` was asked, and the chain of callers
    being compiled when it was asked (for recursion and for the depth)."""

    devfn: DeviceFunction
    arg_types: tuple[Type, ...]
    return_type: Type | None
    chain: list[_Compiling]


class Callees:
    """The device functions one compilation calls, compiled once per argument types.

    Typing a call compiles its callee there and then, on Python's stack, up to
    ``NESTING`` callees deep.  A deeper call raises ``_Deferred``: the ``typed`` at the
    bottom of the chain compiles that callee first (the same way, from a short stack),
    files it, and types the callers again, which now find it.  A chain of n functions
    types each about twice.

    A callee whose compile failed fails the same way when the same callers call it
    again (``_failed``: a copy of its error, with the notes it had): typing retries a
    call that failed before its final sweep, and without the record a chain of n
    callers would compile a failing callee 2**n times."""

    def __init__(self, front_end: FrontEnd, key: Hashable):
        self._front_end = front_end
        self.key = key  # everything besides the types that decides what front_end returns
        self._chain: list[_Compiling] = []  # callees being compiled now, outermost first
        self._base = 0  # the length of _chain where the stack's own nesting starts
        self._failed: dict[tuple, tuple[CompileError, list[str]]] = {}

    def attach(self, state) -> None:
        """The inference state of the callee being compiled now (for its own calls)."""
        if self._chain:
            self._chain[-1].state = state

    def _recursive(self, devfn: DeviceFunction, arg_types, loc: Loc) -> SelfCall:
        start = next(i for i, e in enumerate(self._chain) if e.devfn is devfn)
        entry = self._chain[start]
        if start != len(self._chain) - 1:
            names = [e.devfn.__name__ for e in self._chain[start:]] + [devfn.__name__]
            raise UnsupportedError(
                "mutually recursive device functions are not supported ("
                + " -> ".join(names)
                + "); a device function may call itself",
                loc,
            )
        if entry.arg_types != arg_types:
            raise UnsupportedError(
                f"device function '{devfn.__name__}' calls itself with argument types ("
                + ", ".join(map(str, arg_types))
                + ") other than its own ("
                + ", ".join(map(str, entry.arg_types))
                + ")",
                loc,
                hint="convert the arguments of the recursive call to the parameters' types",
            )
        return SelfCall(entry)

    def typed(
        self, devfn: DeviceFunction, arg_types: tuple[Type, ...], return_type: Type | None, loc: Loc
    ) -> Function | SelfCall:
        """``devfn``'s typed IR for ``arg_types``, compiled now or earlier (a SelfCall
        for a function's call of itself)."""
        key = (arg_types, return_type, self.key)
        fn = device_function.lookup(devfn, key)
        if fn is not None:
            return fn
        if any(e.devfn is devfn for e in self._chain):
            return self._recursive(devfn, arg_types, loc)
        request = _Request(devfn, arg_types, return_type, self._chain)
        try:
            failed = self._failed.get((devfn, key, self._callers()))
            if failed is not None:
                raise _copy_error(*failed)
            if len(self._chain) - self._base >= NESTING:
                request.chain = list(self._chain)
                raise _Deferred(request)
            return (
                self._schedule(request)
                if len(self._chain) == self._base
                else self._compile(request)
            )
        except CompileError as exc:
            # The error points into the device function; say which call led there.
            # numba's phrase too, which its users search for.
            exc.call_chain.append(
                f"{loc} (calling device function '{devfn.__name__}'; during: resolving "
                f"callee type: type(CUDADispatcher(<function {devfn.py_func.__qualname__}>)))"
            )
            raise

    def _callers(self) -> tuple:
        """The chain of callers being compiled, as far as a callee's compile depends on
        it (which calls are recursive)."""
        return tuple((e.devfn, e.arg_types, e.return_type) for e in self._chain)

    def _schedule(self, first: _Request) -> Function:
        """Compile ``first`` and, before it, every callee deferred on the way
        (innermost first), each from the bottom of this stack."""
        todo = [first]
        chain, base = self._chain, self._base
        try:
            while True:
                request = todo[-1]
                self._chain, self._base = list(request.chain), len(request.chain)
                try:
                    fn = self._compile(request)
                except _Deferred as deeper:
                    todo.append(deeper.request)
                    continue
                except CompileError:
                    if request is first:
                        raise
                todo.pop()
                if not todo:
                    return fn
        finally:
            self._chain, self._base = chain, base

    def _compile(self, request: _Request) -> Function:
        """Stages 1-5 of the callee ``request`` asks for, filed for later calls."""
        devfn, arg_types, return_type = request.devfn, request.arg_types, request.return_type
        callers = self._callers()
        self._chain.append(_Compiling(devfn, arg_types, return_type))
        try:
            fn = self._front_end(devfn.py_func, arg_types, return_type, self)
        except CompileError as exc:  # the same call from the same callers fails the same way
            key = (arg_types, return_type, self.key)
            self._failed[(devfn, key, callers)] = (exc, list(exc.call_chain))
            raise
        finally:
            self._chain.pop()
        fn = dataclasses.replace(fn, name=symbol_for(fn.name, arg_types))
        fn = dataclasses.replace(
            fn, inline=device_function.wants_inline(devfn, fn), forceinline=devfn.forceinline
        )
        device_function.remember(devfn, (arg_types, return_type, self.key), fn)
        return fn


def _copy_error(exc: CompileError, call_chain: list[str]) -> CompileError:
    """A fresh copy of a callee's compile error, as it was raised (its notes then)."""
    copy = type(exc).__new__(type(exc))
    copy.__dict__.update(exc.__dict__)
    copy.args = exc.args
    copy.call_chain = list(call_chain)
    copy.__cause__, copy.__suppress_context__ = exc.__cause__, exc.__suppress_context__
    return copy


# Kernels and numba's CPU-jitted functions called from a kernel, as the device
# functions they compile to (weak: the table lets the callable go).
_AS_DEVICE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def as_device_function(fn: object) -> DeviceFunction | None:
    """The device function a call to ``fn`` compiles: ``fn`` itself when it is one; for
    a ``@cuda.jit`` kernel or a ``numba.njit``/``numba.jit`` function (an object with
    ``py_func`` from numba's dispatchers, recognised without importing numba), its
    Python function compiled as a device function, as numba-cuda compiles them."""
    if isinstance(fn, DeviceFunction):
        return fn
    device_function = getattr(fn, "device_function", None)
    if type(fn).__name__ == "FunctionValue" and callable(device_function):
        return device_function()  # a nested function (infer/closures.py)
    pyfunc = getattr(fn, "py_func", None)
    if not isinstance(pyfunc, pytypes.FunctionType):
        return None
    module = type(fn).__module__ or ""
    if not (module.startswith("numba.") or module == "cujit.dispatcher"):
        return None
    view = getattr(fn, "device_view", None)
    if module == "cujit.dispatcher" and callable(view):  # a cujit kernel keeps its own
        return view()
    try:
        devfn = _AS_DEVICE.get(fn)
    except TypeError:  # not weakly referable
        return DeviceFunction(pyfunc)
    if devfn is None:
        # A cujit kernel's inlining options carry over (numba's dispatchers keep theirs
        # in targetoptions, for their own compiler).
        flags = {k: getattr(fn, k) for k in ("inline", "forceinline") if hasattr(fn, k)}
        devfn = _AS_DEVICE[fn] = DeviceFunction(pyfunc, **flags)
    return devfn


def refuse_closed_dispatcher(fn: object, site: CallSite) -> None:
    """A numba CPU function whose compilation is disabled (``numba.jit`` given explicit
    signatures) cannot be compiled for the device either: numba's error."""
    if getattr(fn, "_can_compile", True) is False and type(fn).__module__.startswith("numba."):
        raise TypingError(
            f"Untyped global name '{site.name}': using cpu function on device but its "
            "compilation is disabled (numba.jit was given explicit signatures; call it with "
            "none to compile it for the device)",
            site.loc,
        )


def symbol_for(fn_name: str, arg_types: tuple[Type, ...]) -> str:
    """The callee's symbol in its caller's IR: ``add(float32, float32)``."""
    return f"{fn_name}(" + ", ".join(map(str, arg_types)) + ")"


def is_argument_type(t: Type) -> bool:
    """Whether a value of type ``t`` exists at run time and can be passed (or returned)."""
    if isinstance(t, Tuple):
        return all(is_argument_type(i) for i in t.items)
    return isinstance(t, (Scalar, Array, Record, CPointer, EnumMember)) or is_extension_type(t)


@frozen
class LiteralArg(Type):
    """An argument type that also fixes the argument's value: a device function whose
    typing needs a constant (``cuda.shared.array(n, dtype)`` with ``n`` a parameter)
    is compiled again for the call's constant arguments, as numba retries with
    literal types."""

    base: Type
    value: object

    def __str__(self) -> str:
        return f"{self.base}={self.value!r}"


def is_constant_argument(t: Type) -> bool:
    """Whether an argument of type ``t`` is a compile-time value (a function, a dtype
    class, a module, None): the callee is compiled for that value and takes no
    parameter for it, so a call through it resolves statically."""
    return isinstance(t, (PyObject, NoneType, LiteralArg))


def bake_constant_params(
    blocks: list[Block], arg_names: tuple[str, ...], loc: Loc, literals: dict[int, object]
):
    """A typed device function's entry with its compile-time parameters made constants.

    The parameter's value id is kept (its uses need no rewrite): a ``Const`` of the
    object (or of the literal's value, ``literals``) now defines it at the top of the
    entry block, which has no predecessors.
    """
    entry = blocks[0]

    def baked(p: Value) -> bool:
        return p.id in literals or isinstance(p.type, (PyObject, NoneType))

    keep = [(p, n) for p, n in zip(entry.params, arg_names, strict=True) if not baked(p)]
    if len(keep) == len(entry.params):
        return blocks, arg_names
    consts = tuple(
        Const(
            loc=loc,
            result=p,
            value=literals[p.id]
            if p.id in literals
            else p.type.value
            if isinstance(p.type, PyObject)
            else None,
        )
        for p in entry.params
        if baked(p)
    )
    entry = Block(entry.id, tuple(p for p, _ in keep), consts + entry.ops, entry.term)
    return [entry, *blocks[1:]], tuple(n for _, n in keep)


def _bind(t: Typer, devfn: DeviceFunction, site: CallSite) -> list[Value]:
    """The call's arguments in parameter order, defaults filled in as constants and
    the ones ``*args`` takes as one tuple."""
    try:
        sig = inspect.signature(devfn.py_func)
        bound = sig.bind(*site.args, **site.kwargs)
    except TypeError as exc:
        raise TypingError(f"{devfn.__name__}(): {exc}", site.loc) from None
    params = sig.parameters.values()
    if any(p.kind in (p.VAR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        raise UnsupportedError(
            f"device function '{devfn.__name__}' has **kwargs or "
            "keyword-only parameters, which are not supported",
            site.loc,
        )
    bound.apply_defaults()
    args = []
    for name, v in bound.arguments.items():
        if sig.parameters[name].kind == inspect.Parameter.VAR_POSITIONAL:
            v = t.emit(
                BuildTuple(loc=site.loc, result=t.fresh(Tuple(tuple(a.type for a in v))), items=v)
            )
        elif not isinstance(v, Value):  # a default: the Python value itself
            v = t.const(v, site.loc)
        args.append(v)
    return args


def _declared(devfn: DeviceFunction, types: tuple[Type, ...], loc: Loc):
    """The declared signature a call uses, if ``devfn`` was given any."""
    if not devfn.declared_signatures:
        return None
    for sig in devfn.declared_signatures:
        if tuple(sig.args) == types:
            return sig
    # numba's choice by its conversion rules (cujit.overloads); a tie between the best
    # goes to the first declared, as numba's typing of a call allows it.
    by_args: dict = {}
    for sig in devfn.declared_signatures:
        by_args.setdefault(tuple(sig.args), sig)
    try:
        best = overloads.select(by_args, types)
    except overloads.Ambiguous as tie:
        best = tie.best[0]
    if best is not None:
        return by_args[best]
    declared = ", ".join(str(s) for s in devfn.declared_signatures)
    raise TypingError(
        f"device function '{devfn.__name__}' is declared as {declared} and "
        "cannot take arguments of types (" + ", ".join(map(str, types)) + ") "
        f"(Invalid use of type {devfn.__name__} with parameters "
        "(" + ", ".join(map(str, types)) + "))",
        loc,
    )


def _return_inferred(devfn: DeviceFunction, sig) -> bool:
    """Whether ``sig`` was declared without a return type (typing infers it)."""
    flags = getattr(devfn, "inferred_returns", ())
    # flags is empty where no signature left its return type out
    return any(s is sig and f for s, f in zip(devfn.declared_signatures, flags, strict=False))


def call_device_function(
    t: Typer, op: Call, devfn: DeviceFunction, site: CallSite, captured: list[Value] = ()
) -> None:
    """Type ``devfn(*args)``: compile the callee for the argument types, emit CallFunction.
    ``captured``: a nested function's captured run-time values, its leading parameters."""
    if t.callees is None:
        raise UnsupportedError(
            f"device function '{devfn.__name__}' called outside a compilation that can compile it",
            site.loc,
        )
    args = [*captured, *_bind(t, devfn, site)]
    for v in args:  # a string constant is a compile-time argument, as numba's literal
        t.check_defined(v, site.loc)
        if not (is_argument_type(v.type) or is_constant_argument(v.type)):
            raise TypingError(
                f"cannot pass {describe(v.type)} to device function '{devfn.__name__}'", site.loc
            )
    types = tuple(v.type for v in args)
    sig = _declared(devfn, types, site.loc)
    if sig is not None:
        args = [t.cast(v, ty, site.loc) for v, ty in zip(args, sig.args, strict=True)]
        types = tuple(sig.args)
    ret = sig.return_type if sig and not _return_inferred(devfn, sig) else None
    callee, types = _typed_callee(t, devfn, args, types, ret, site.loc)
    if isinstance(callee, SelfCall):  # recursion: typed as far as typing has got
        symbol, ret = SELF_CALL, callee.result_type(t.final, site.loc)
    else:
        symbol, ret = add_callee(t, callee), callee.return_type
    ret = none if isinstance(ret, NoneType) else ret
    args = [v for v, ty in zip(args, types, strict=True) if not is_constant_argument(ty)]
    t.emit(CallFunction(loc=site.loc, result=site.result(ret), callee=symbol, args=tuple(args)))


def _typed_callee(
    t: Typer,
    devfn: DeviceFunction,
    args: list[Value],
    types: tuple[Type, ...],
    ret: Type | None,
    loc: Loc,
) -> tuple[Function, tuple[Type, ...]]:
    """The callee typed for ``types``; where that fails, for the call's constant
    arguments fixed to their values (the first failure is reported if that fails too)."""
    try:
        return t.callees.typed(devfn, types, ret, loc), types
    except TypingError as first:
        literal = _literal_types(t, args, types)
        if literal == types:
            raise
        try:
            return t.callees.typed(devfn, literal, ret, loc), literal
        except CompileError:
            raise first from None


def _literal_types(t: Typer, args: list[Value], types: tuple[Type, ...]) -> tuple[Type, ...]:
    """The argument types with each compile-time number or tuple of numbers fixed to its
    value (``LiteralArg``)."""
    out = []
    for v, ty in zip(args, types, strict=True):
        value = t.consts.get(v.id)
        out.append(
            LiteralArg(ty, value) if value is not None and isinstance(ty, (Scalar, Tuple)) else ty
        )
    return tuple(out)


def add_callee(t: Typer, callee: Function) -> str:
    """Enter ``callee`` in the caller's table (``t.callee_fns``); return the symbol
    its calls use.

    Two different functions with one name and argument types (closures made by
    one factory) get ``#2``, ``#3``... so that each symbol names one function.
    """
    symbol = t.callee_symbols.get(id(callee))
    if symbol is not None:
        return symbol
    symbol, n = callee.name, 1
    while symbol in t.callee_fns:
        n += 1
        symbol = f"{callee.name}#{n}"
    t.callee_symbols[id(callee)] = symbol
    t.callee_fns[symbol] = callee if n == 1 else dataclasses.replace(callee, name=symbol)
    return symbol
