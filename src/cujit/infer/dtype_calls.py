"""``np.dtype(spec)`` in a kernel: a compile-time constant, as numba types it (a dtype
object exists only while compiling: it is passed on as a constant, such as a shared
array's ``dtype=``).  ``spec`` must be a constant: a type (``np.float32``, cujit's or
numba's ``float32``), a dtype, or a dtype's name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import Value

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

_MISSING = object()


def call_dtype(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1, keywords=("dtype",))
    arg = site.arg(0, "dtype")
    spec = t.const_value(arg, default=_MISSING)
    if spec is _MISSING:
        raise TypingError(
            f"np.dtype() needs a constant type or dtype name, not a {describe(arg.type)} "
            "known only at run time",
            site.loc,
        )
    return t.const(_numpy_dtype(spec, site), site.loc)


def _numpy_dtype(spec: object, site: CallSite):
    import numpy as np

    from cujit.types import to_type

    try:
        return np.dtype(spec)
    except TypeError:
        pass
    try:  # cujit's or numba's type objects
        return to_type(spec).dtype
    except (TypeError, AttributeError):
        raise TypingError(f"Invalid NumPy dtype specified: {spec!r}", site.loc) from None


def dtype_rules() -> dict:
    import numpy as np

    return {np.dtype: call_dtype}
