"""Device functions (``@cuda.jit(device=True)``) and the typed IR compiled for them.

A ``DeviceFunction`` is what the user's decorator returns: the Python function and
its declared signatures, nothing compiled.  Stage 4 types each call to one by
running stages 1-5 for the call (``infer.function_calls.Callees``) and files the
result here, in a table the compiler owns, under everything that decides the typed
IR: the argument types, the declared return type, the compile options and the pass
list (a release build drops ``assert``, a debug build keeps it).  Every later
compilation with the same key reuses that typed IR.

This module sits below ``infer/`` and imports nothing of the compiler, so stage 4
can name ``DeviceFunction`` without importing the user API (``dispatcher``).
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Hashable

from cujit import guards
from cujit.diagnostics import CujitError, api_boundary
from cujit.types import Signature, parse_signature

# DeviceFunction -> {(arg types, return type, front-end key): typed ir.Function}.
# Weak: a device function that is gone takes its specialisations with it.
_TYPED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class DeviceFunction:
    """A ``@cuda.jit(device=True)`` function: called from kernels and from other
    device functions, never launched.

    Each call is compiled for its argument types (stages 1-5, by the calling
    compilation's ``cujit.infer.function_calls.Callees``) and lowered into the
    caller's module; :func:`specializations` lists what was compiled.  Declared
    signatures (``cuda.jit("float32(float32)", device=True)``) fix the argument
    and return types; calls convert to them.
    """

    def __init__(self, pyfunc, signatures=(), **flags):
        self.py_func = pyfunc
        self.__name__ = getattr(pyfunc, "__name__", "device_function")
        self.__qualname__ = getattr(pyfunc, "__qualname__", self.__name__)
        self.__module__ = getattr(pyfunc, "__module__", None)
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.__wrapped__ = pyfunc
        self.declared_signatures: tuple[Signature, ...] = tuple(
            parse_signature(s) for s in signatures
        )
        # "(int64, int64)", with no return type: numba infers it for a device function.
        self.inferred_returns: tuple[bool, ...] = tuple(
            isinstance(s, str) and s.lstrip().startswith("(") for s in signatures
        )
        self._flags = flags
        # numba's inlining options: ``inline`` ("always"/True, "never"/False, or a cost
        # model ``f(call, caller, callee) -> bool``) and ``forceinline``.
        self.inline = flags.get("inline", "never")
        self.forceinline = bool(flags.get("forceinline", False))

    @property
    def signatures(self) -> tuple[Signature, ...]:
        """The declared signatures (``jit(device=True)`` shows numba's view instead:
        ``device_inspection``)."""
        return self.declared_signatures

    def __repr__(self) -> str:
        return f"<cujit device function {self.__name__}>"

    __getitem__ = api_boundary(guards.launch_device_function)  # refused: say what to do

    def __reduce__(self):  # as Kernel.__reduce__
        if is_importable(self):
            return self.__qualname__
        return (type(self), (self.py_func, self.declared_signatures), {"_flags": self._flags})

    @api_boundary
    def __call__(self, *args, **kwargs):
        raise CujitError(
            f"device function {self.__name__!r} can only be called from a kernel "
            "or from another device function, not from the host; launch a "
            "@cuda.jit kernel that calls it"
        )


def lookup(devfn: DeviceFunction, key: Hashable):
    """The typed IR compiled for ``devfn`` under ``key``, or None."""
    table = _TYPED.get(devfn)
    return None if table is None else table.get(key)


def remember(devfn: DeviceFunction, key: Hashable, fn) -> None:
    """File ``fn``, the typed IR of ``devfn`` under ``key``, for later compilations."""
    table = _TYPED.get(devfn)
    if table is None:
        table = _TYPED[devfn] = {}
    table[key] = fn


def specializations(devfn: DeviceFunction) -> dict:
    """Every typed IR compiled for ``devfn``: key -> ``ir.Function`` (a copy)."""
    return dict(_TYPED.get(devfn, {}))


def is_importable(obj) -> bool:
    """Whether ``obj`` is what its module's global of its qualified name holds."""
    target = sys.modules.get(getattr(obj, "__module__", None) or "")
    for part in getattr(obj, "__qualname__", "<locals>").split("."):
        target = getattr(target, part, None)
    return target is obj


def wants_inline(devfn: DeviceFunction, typed) -> bool:
    """Whether stage 5 inlines ``devfn``'s calls: ``inline="always"`` or True, or a cost
    model that says so when asked with cujit's objects (no call or caller: the answer
    holds for every call of this specialisation, ``typed``, its typed IR)."""
    inline = devfn.inline
    if callable(inline):
        return bool(inline(None, None, typed))
    return inline is True or inline == "always"
