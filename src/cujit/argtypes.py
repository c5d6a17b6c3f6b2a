"""The launch path's ``typeof``: the kernel-argument types of launch arguments, fast.

``cujit.types.typeof`` works out a type from scratch (dtype, layout from the strides);
a launch repeats the same few kinds of argument millions of times, so this module
answers from caches keyed by what determines the type:

- Python and NumPy scalars: by class;
- cujit device arrays: once per array (their shape, strides and dtype never change);
- NumPy arrays: by (dtype, ndim, contiguity flags);
- anything else: ``typeof``.

Every answer is interned: equal types are one object, kept alive here for the life
of the process.  So the identities of an argument list's types name its kind of
launch exactly, and the dispatcher finds the specialisation by ``id``s (hashing
small ints) instead of hashing and comparing type objects.
"""

from __future__ import annotations

from cujit.types import typeof
from cujit.types.core import boolean, float64, int64

_BY_CLASS: dict[type, object] = {bool: boolean, int: int64, float: float64}
_ND: dict[tuple, object] = {}
_classes: dict[str, type] = {}
_INTERNED: dict = {}


def intern(t):
    """The one object standing for type ``t`` (never freed: ids stay unique)."""
    return _INTERNED.setdefault(t, t)


def _numpy_classes() -> None:
    """Fill the scalar-class table and learn ndarray/DeviceArray (on first launch only)."""
    import numpy as np

    from cujit.runtime.memory import DeviceArray
    from cujit.types.core import SCALARS

    for t in SCALARS:
        _BY_CLASS[t.dtype.type] = intern(t)
    for t in (boolean, int64, float64):
        intern(t)
    _classes["ndarray"] = np.ndarray
    _classes["device"] = DeviceArray


def fast_typeof(a):
    """``typeof(a)`` from a cache where the kind of ``a`` allows."""
    cls = a.__class__
    t = _BY_CLASS.get(cls)
    if t is not None:
        return t
    if not _classes:
        _numpy_classes()
        return fast_typeof(a)
    if cls is _classes["device"]:
        t = a.cujit_type
        if t is None:
            t = a.cujit_type = intern(typeof(a))
        return t
    if cls is _classes["ndarray"] and a.size > 1:
        flags = a.flags
        key = (a.dtype, a.ndim, flags.c_contiguous, flags.f_contiguous)
        t = _ND.get(key)
        if t is None:
            t = intern(typeof(a))
            if len(_ND) < 4096:
                _ND[key] = t
        return t
    return intern(typeof(a))
