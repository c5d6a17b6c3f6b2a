"""``intrinsic``: a function a library writes at the level of LLVM IR.

The decorated ``defn(typing_context, *arg_types)`` returns ``(signature, codegen)``
(or None: not for these types); a kernel's call of the intrinsic becomes the typed
IR's ``extension.call`` of ``codegen(context, builder, signature, args)``, which builds
the result with the function's llvmlite builder.  The object is filed in
``types.extension.INTRINSICS`` (the table inference reads) when it is made.

An intrinsic pickles as numba's does: by a token that a process keeps in ``_memo``
while the object lives (and while it is among the ``_recent`` ones), so unpickling in
the process that made it returns the same object; elsewhere its ``defn`` travels by
value (cloudpickle) and is rebuilt once per token.
"""

from __future__ import annotations

import collections
import functools
import uuid
import weakref
from typing import Callable

from cujit.types import extension


class _Intrinsic:
    """A library's intrinsic (made by ``intrinsic``); see the module docstring."""

    _memo: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
    _recent: collections.deque = collections.deque(maxlen=32)

    def __init__(self, name: str, defn: Callable, prefer_literal: bool = False, **kw) -> None:
        self._name = name
        self._defn = defn
        self.prefer_literal = prefer_literal
        self._token: str | None = None
        functools.update_wrapper(self, defn)
        extension.INTRINSICS[self] = defn

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other) -> bool:
        return self is other

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"intrinsic {self._name!r} can only be called in a kernel")

    def __repr__(self) -> str:
        return f"<intrinsic {self._name}>"

    def _remember(self) -> str:
        if self._token is None:
            self._token = uuid.uuid4().hex
            self._memo[self._token] = self
            self._recent.append(self)
        return self._token

    def __reduce__(self):
        token = self._remember()
        try:
            import cloudpickle
        except ImportError:
            # By reference: the receiver imports the module whose name for it is this
            # intrinsic (``@intrinsic`` replaced the function there, so the function
            # itself cannot be pickled by name).
            return (_by_name, (self._defn.__module__, self._defn.__qualname__))
        return (_rebuild, (token, self._name, cloudpickle.dumps(self._defn)))


def _by_name(module: str, qualname: str) -> _Intrinsic:
    import importlib

    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _rebuild(token: str, name: str, defn) -> _Intrinsic:
    known = _Intrinsic._memo.get(token)
    if known is not None:
        return known
    if isinstance(defn, bytes):
        import pickle

        defn = pickle.loads(defn)
    rebuilt = _Intrinsic(name, defn)
    rebuilt._token = token
    _Intrinsic._memo[token] = rebuilt
    _Intrinsic._recent.append(rebuilt)
    return rebuilt


def intrinsic(*args, **kwargs):
    """``@intrinsic`` or ``@intrinsic(prefer_literal=True)`` over
    ``defn(typing_context, *arg_types) -> (signature, codegen)``."""

    def wrap(defn: Callable) -> _Intrinsic:
        return _Intrinsic(defn.__name__, defn, **kwargs)

    if len(args) == 1 and not kwargs and callable(args[0]):
        return wrap(args[0])
    return wrap


__all__ = ["_Intrinsic", "intrinsic"]
