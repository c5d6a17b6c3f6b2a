"""NumPy's whole-array reductions in kernels: ``np.sum(a)``, ``a.max()``, ``np.nanmean(a)``...

The calling thread reduces the whole array, as numba's do.  Each call becomes a call
of a device function generated for the reduction, the array's number of dimensions
and its dtype (the accumulator and result types are NumPy's for that dtype); its body
is plain kernel Python over the array's indices::

    def np_sum_2_float64(a):            # np.sum of a 2-d float64 array
        acc = R(0)
        for i0 in range(a.shape[0]):
            for i1 in range(a.shape[1]):
                v = a[i0, i1]
                acc += R(v)
        return acc

NaN handling follows NumPy: ``min``/``max`` return the first NaN, the ``nan*`` forms
skip NaNs (an all-NaN ``nanmin`` is NaN), ``mean`` of nothing is NaN, and ``min``/``max``
of an empty array raise ValueError.  A global or closure NumPy array (frozen into the
kernel) is reduced the same way; a 0-d one, which kernels cannot hold, is reduced
when the kernel is compiled.
"""

from __future__ import annotations

import functools
import linecache
import math
from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer.context import Typer
from cujit.infer.cuda_calls import constant_array, is_frozen_array
from cujit.infer.numeric import describe
from cujit.ir import Value
from cujit.types import Array, PyObject, Scalar

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

_EMPTY = (
    "if a.size == 0:\n"
    "    raise ValueError('zero-size array to reduction operation {op} "
    "which has no identity')\n"
)
# NumPy function (its result dtype is the reduction's) -> (before the loop, per element, after)
_BODIES: dict[str, tuple[str, str, str]] = {
    "sum": ("acc = R(0)", "acc += R(v)", "return acc"),
    "prod": ("acc = R(1)", "acc *= R(v)", "return acc"),
    "nansum": ("acc = R(0)", "if v == v:\n    acc += R(v)", "return acc"),
    "nanprod": ("acc = R(1)", "if v == v:\n    acc *= R(v)", "return acc"),
    "min": (
        _EMPTY.format(op="minimum") + "acc = R(a[{first}])",
        "if v != v:\n    return R(v)\nif v < acc:\n    acc = R(v)",
        "return acc",
    ),
    "max": (
        _EMPTY.format(op="maximum") + "acc = R(a[{first}])",
        "if v != v:\n    return R(v)\nif v > acc:\n    acc = R(v)",
        "return acc",
    ),
    "nanmin": (
        _EMPTY.format(op="fmin") + "acc = R(a[{first}])",
        "if v == v and (acc != acc or v < acc):\n    acc = R(v)",
        "return acc",
    ),
    "nanmax": (
        _EMPTY.format(op="fmax") + "acc = R(a[{first}])",
        "if v == v and (acc != acc or v > acc):\n    acc = R(v)",
        "return acc",
    ),
    "mean": ("acc = R(0)", "acc += R(v)", "return acc / R(a.size)"),
    "nanmean": (
        "acc = R(0)\nn = 0",
        "if v == v:\n    acc += R(v)\n    n += 1",
        "return acc / R(n)",
    ),
    "var": ("m = _mean(a)\nacc = R(0)", "d = R(v) - m\nacc += d * d", "return acc / R(a.size)"),
    "std": (
        "m = _mean(a)\nacc = R(0)",
        "d = R(v) - m\nacc += d * d",
        "return math.sqrt(acc / R(a.size))",
    ),
    "all": ("", "if not v:\n    return False", "return True"),
    "any": ("", "if v:\n    return True", "return False"),
    "count_nonzero": ("acc = 0", "if v:\n    acc += 1", "return acc"),
}
ALIASES = {"amin": "min", "amax": "max"}
# The reductions that are also array methods (``a.sum()``).
METHODS = ("sum", "prod", "min", "max", "mean", "var", "std", "all", "any")


def reduction(name: str):
    """The rule for ``np.<name>(a)`` of a whole array."""

    def rule(t: Typer, site: CallSite) -> Value:
        from cujit.infer.function_calls import call_device_function

        site.expect(1, 1, ("a",))
        a = site.arg(0, "a")
        if isinstance(a.type, PyObject) and is_frozen_array(a.type.value):
            value = a.type.value
            if value.ndim == 0:  # kernels hold no 0-d arrays: reduced now
                import numpy as np

                return t.const(getattr(np, name)(value), site.loc)
            a = constant_array(t, value, site.loc, t.fresh, "a global array")
        if not isinstance(a.type, Array) or not isinstance(a.type.dtype, Scalar):
            raise TypingError(
                f"np.{name}() in a kernel takes an array of numbers, not {describe(a.type)}",
                site.loc,
            )
        if a.type.dtype.is_complex and name not in ("sum", "prod", "all", "any", "mean"):
            raise TypingError(f"np.{name}() of a complex array is not supported", site.loc)
        devfn = _reducer(name, a.type.ndim, str(a.type.dtype.dtype))
        site.args[:] = [a]
        site.kwargs.clear()
        call_device_function(t, site.op, devfn, site)
        return t.value(site.op.result)

    return rule


def _result_dtype(name: str, dtype: str):
    import warnings

    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = getattr(np, name)(np.ones(2, dtype))
    return np.asarray(result).dtype


def _indent(text: str, depth: int) -> list[str]:
    return ["    " * depth + line for line in text.split("\n") if line]


@functools.cache
def _reducer(name: str, ndim: int, dtype: str):
    """The generated device function for ``np.<name>`` of an ``ndim``-d ``dtype`` array."""
    import numpy as np

    from cujit.device_function import DeviceFunction

    before, step, after = _BODIES[name]
    fname = f"np_{name}_{ndim}_{dtype}"
    index = ", ".join(f"i{d}" for d in range(ndim))
    lines = [f"def {fname}(a):"]
    if before:
        lines += _indent(before.format(first=", ".join(["0"] * ndim)), 1)
    for d in range(ndim):
        lines.append("    " * (d + 1) + f"for i{d} in range(a.shape[{d}]):")
    lines.append("    " * (ndim + 1) + f"v = a[{index}]")
    lines += _indent(step, ndim + 1)
    lines += _indent(after, 1)
    source = "\n".join(lines) + "\n"
    filename = f"<cujit np.{name} of a {ndim}-d {dtype} array>"
    # Messages about the generated body show its lines, as for a user's file.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    result = _result_dtype(name, dtype)
    namespace = {"np": np, "math": math, "R": result.type}
    if name in ("var", "std"):
        namespace["_mean"] = _reducer("mean", ndim, dtype)
    exec(compile(source, filename, "exec"), namespace)
    return DeviceFunction(namespace[fname])


def reduction_rules() -> dict:
    import numpy as np

    names = [*_BODIES, *ALIASES]
    return {getattr(np, n): reduction(ALIASES.get(n, n)) for n in names}


__all__ = ["METHODS", "reduction_rules"]
