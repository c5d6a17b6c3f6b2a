"""How kernels travel between processes (``Kernel.__reduce__``).

A kernel defined at module level travels by name, like a function: the receiver
imports its module.  Any other kernel travels as its Python function and decorator
arguments, and the receiver compiles it for its own GPU.  Two refinements make
that fit Dask, whose workers unpickle one copy of a task's arguments per task:

- A kernel sent by value carries a random token.  A process that already rebuilt
  that token returns the kernel it rebuilt then, with its compiled
  specialisations, so a worker compiles it once, not once per task.  The sender
  registers its own kernel under the token too: a round trip in one process
  returns the same object.  The table is bounded; the oldest entries go first.
- A kernel in a script's ``__main__`` goes by value through cloudpickle, which
  carries ``__main__`` functions by value, as it does for plain functions: a remote
  worker has no such script to import.  Without cloudpickle it goes by name.
- A kernel of a function defined inside another (a closure, a test's local kernel)
  has no name to import: its function goes by value through cloudpickle too, with
  the device functions it calls.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable

LIMIT = 256
_BY_TOKEN: dict[str, object] = {}  # token -> kernel, least recently used first


def reduce_kernel(kernel, importable: bool, rebuild: Callable):
    """``kernel.__reduce__()``: its name when ``importable``, else how to rebuild it."""
    func = kernel.py_func
    if importable and (kernel.__module__ != "__main__" or _cloudpickle() is None):
        return kernel.__qualname__
    if kernel.__module__ == "__main__" or not importable and _cloudpickle() is not None:
        func = _ByValue(func)  # a script's or a local function: its code travels
    return (
        rebuild,
        (
            func,
            kernel._signatures,
            kernel._flags,
            token_of(kernel),
            kernel.py_func.__code__.co_filename,
        ),
    )


def by_value(func):
    """``func`` to be pickled by value (its code travels) where cloudpickle is installed;
    else ``func`` itself, pickled by name."""
    return func if _cloudpickle() is None else _ByValue(func)


def restored(func, filename: str):
    """``func`` with the file name its code had at home: cloudpickle sends code without
    it (it writes "<dynamic-code>"), and errors must name the kernel's file:line."""
    if func.__code__.co_filename != filename:
        func.__code__ = _relocated(func.__code__, filename)
    return func


def token_of(kernel) -> str:
    """The kernel's token, made (and registered) at its first pickling."""
    token = kernel.__dict__.get("_pickle_token")
    if token is None:
        token = kernel._pickle_token = os.urandom(12).hex()
    _remember(token, kernel)
    return token


def rebuilt(token: str | None, make: Callable[[], object]):
    """The kernel this process holds for ``token``, else ``make()``'s, registered."""
    kernel = _BY_TOKEN.get(token) if token is not None else None
    if kernel is None:
        kernel = make()
        if token is not None:
            kernel._pickle_token = token
    if token is not None:
        _remember(token, kernel)
    return kernel


def _remember(token: str, kernel) -> None:
    _BY_TOKEN.pop(token, None)
    _BY_TOKEN[token] = kernel
    while len(_BY_TOKEN) > LIMIT:
        del _BY_TOKEN[next(iter(_BY_TOKEN))]


def _relocated(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(
        _relocated(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    return code.replace(co_filename=filename, co_consts=consts)


def _cloudpickle():
    try:
        import cloudpickle
    except ImportError:
        return None
    return cloudpickle


class _ByValue:
    """A function pickled by value by cloudpickle (inside any pickler)."""

    __slots__ = ("func",)

    def __init__(self, func):
        self.func = func

    def __reduce__(self):
        cloudpickle = _cloudpickle()
        return (cloudpickle.loads, (cloudpickle.dumps(self.func),))
