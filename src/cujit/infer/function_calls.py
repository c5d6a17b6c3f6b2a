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
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

from cujit import device_function
from cujit.device_function import DeviceFunction
from cujit.diagnostics import CompileError, Loc, TypingError, UnsupportedError
from cujit.infer.context import Typer, accepts_array
from cujit.infer.numeric import describe
from cujit.ir import Call, CallFunction, Function, Value
from cujit.types import Array, NoneType, Scalar, Tuple, Type, none

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

# front_end(pyfunc, arg_types, return_type, callees) -> the typed IR after stages 1-5.
FrontEnd = Callable[[object, tuple[Type, ...], "Type | None", "Callees"], Function]


class Callees:
    """The device functions one compilation calls, compiled once per argument types."""

    def __init__(self, front_end: FrontEnd, key: Hashable):
        self._front_end = front_end
        self.key = key  # everything besides the types that decides what front_end returns
        self._chain: list[tuple[DeviceFunction, Loc]] = []  # callees being compiled now

    def typed(self, devfn: DeviceFunction, arg_types: tuple[Type, ...],
              return_type: Type | None, loc: Loc) -> Function:
        """``devfn``'s typed IR for ``arg_types``, compiled now or earlier."""
        key = (arg_types, return_type, self.key)
        fn = device_function.lookup(devfn, key)
        if fn is not None:
            return fn
        if any(d is devfn for d, _ in self._chain):
            names = [d.__name__ for d, _ in self._chain] + [devfn.__name__]
            start = names.index(devfn.__name__)
            raise UnsupportedError("recursive device functions are not supported ("
                                   + " -> ".join(names[start:]) + ")", loc)
        self._chain.append((devfn, loc))
        try:
            fn = self._front_end(devfn.py_func, arg_types, return_type, self)
        except CompileError as exc:
            # The error points into the device function; say which call led there.
            exc.call_chain.append(f"{loc} (calling device function '{devfn.__name__}')")
            raise
        finally:
            self._chain.pop()
        fn = dataclasses.replace(fn, name=symbol_for(fn.name, arg_types))
        device_function.remember(devfn, key, fn)
        return fn


def symbol_for(fn_name: str, arg_types: tuple[Type, ...]) -> str:
    """The callee's symbol in its caller's IR: ``add(float32, float32)``."""
    return f"{fn_name}(" + ", ".join(map(str, arg_types)) + ")"


def is_argument_type(t: Type) -> bool:
    """Whether a value of type ``t`` exists at run time and can be passed (or returned)."""
    if isinstance(t, Tuple):
        return all(is_argument_type(i) for i in t.items)
    return isinstance(t, (Scalar, Array))


def _bind(t: Typer, devfn: DeviceFunction, site: CallSite) -> list[Value]:
    """The call's arguments in parameter order, defaults filled in as constants."""
    try:
        sig = inspect.signature(devfn.py_func)
        bound = sig.bind(*site.args, **site.kwargs)
    except TypeError as exc:
        raise TypingError(f"{devfn.__name__}(): {exc}", site.loc) from None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY)
           for p in sig.parameters.values()):
        raise UnsupportedError(f"device function '{devfn.__name__}' has *args, **kwargs or "
                               "keyword-only parameters, which are not supported", site.loc)
    bound.apply_defaults()
    args = []
    for v in bound.arguments.values():
        if not isinstance(v, Value):  # a default: the Python value itself
            v = t.const(v, site.loc)
        args.append(v)
    return args


def _declared(devfn: DeviceFunction, types: tuple[Type, ...], loc: Loc):
    """The declared signature a call uses, if ``devfn`` was given any."""
    if not devfn.signatures:
        return None
    for sig in devfn.signatures:
        if tuple(sig.args) == types:
            return sig
    for sig in devfn.signatures:  # scalars convert, arrays to layout 'A', as numba converts
        if len(sig.args) == len(types) and all(
                a == b or (isinstance(a, Scalar) and isinstance(b, Scalar))
                or accepts_array(a, b) for a, b in zip(sig.args, types, strict=True)):
            return sig
    declared = ", ".join(str(s) for s in devfn.signatures)
    raise TypingError(f"device function '{devfn.__name__}' is declared as {declared} and "
                      "cannot take arguments of types (" + ", ".join(map(str, types)) + ")", loc)


def call_device_function(t: Typer, op: Call, devfn: DeviceFunction, site: CallSite) -> None:
    """Type ``devfn(*args)``: compile the callee for the argument types, emit CallFunction."""
    if t.callees is None:
        raise UnsupportedError(f"device function '{devfn.__name__}' called outside a "
                               "compilation that can compile it", site.loc)
    args = _bind(t, devfn, site)
    for v in args:
        t.check_not_string(v, site.loc)
        t.check_defined(v, site.loc)
        if not is_argument_type(v.type):
            raise TypingError(f"cannot pass {describe(v.type)} to device function "
                              f"'{devfn.__name__}'", site.loc)
    types = tuple(v.type for v in args)
    sig = _declared(devfn, types, site.loc)
    if sig is not None:
        args = [t.cast(v, ty, site.loc) for v, ty in zip(args, sig.args, strict=True)]
        types = tuple(sig.args)
    callee = t.callees.typed(devfn, types, sig.return_type if sig else None, site.loc)
    symbol = add_callee(t, callee)
    ret = none if isinstance(callee.return_type, NoneType) else callee.return_type
    t.emit(CallFunction(loc=site.loc, result=site.result(ret), callee=symbol, args=tuple(args)))


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
