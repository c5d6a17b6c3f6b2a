"""numba's ``cuda.libdevicefuncs``: the libdevice table in numba's shape.

``functions`` maps each libdevice symbol to ``(result type, [arg(name, ty, is_ptr)...])``
(void results as ``types.void``) and ``create_signature`` gives a function's Python
signature (pointer outputs returned after the result), both built from
``cujit.libdevice.FUNCTIONS``.
"""

from __future__ import annotations

from collections import namedtuple

from cujit.libdevice import FUNCTIONS
from cujit.types import Signature, Tuple, void

arg = namedtuple("arg", ("name", "ty", "is_ptr"))
_NAMES = "xyzwuv"


def _entry(fn) -> tuple:
    params, it_args, it_outs = [], iter(fn.args), iter(fn.outs)
    for k in range(len(fn.args) + len(fn.outs)):
        out = k in fn.out_positions
        params.append(arg(_NAMES[k], next(it_outs) if out else next(it_args), out))
    return (fn.result if fn.result is not None else void, params)


functions: dict[str, tuple] = {fn.symbol: _entry(fn) for fn in FUNCTIONS.values()}


def create_signature(retty, args) -> Signature:
    """The Python signature: pointer arguments become results after ``retty``."""
    results = ([] if retty == void else [retty]) + [a.ty for a in args if a.is_ptr]
    ret = results[0] if len(results) == 1 else Tuple(tuple(results))
    return Signature(ret, tuple(a.ty for a in args if not a.is_ptr))


__all__ = ["arg", "create_signature", "functions"]
