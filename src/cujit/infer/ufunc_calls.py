"""NumPy ufuncs called on arrays inside a kernel: ``np.sin(x, out)``, ``np.hypot(x, y,
out=r)`` (numba-cuda's "calling ufuncs in kernels").

The calling thread computes the whole result, element by element, as numba's does.
The call becomes a call of a device function generated for the ufunc, the arity, which
operands are arrays and the output's number of dimensions; its body is plain kernel
Python that the other stages already know::

    def np_sin_a_1(x0, out):          # np.sin(x, out) with a 1-d out
        for i0 in range(out.shape[0]):
            out[i0] = np.sin(x0[i0])
        return out

The operands are arrays of ``out``'s shape or scalars (no other broadcasting); ``out``
is required, since a kernel cannot allocate the result.  Element types convert as the
scalar ufunc and the store convert them.
"""

from __future__ import annotations

import functools
import linecache
from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.types import Array, Scalar

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def takes_arrays(site: CallSite) -> bool:
    """Whether a NumPy function call has an array operand or an ``out``: the array form."""
    return "out" in site.kwargs or any(isinstance(v.type, Array) for v in site.args)


def with_arrays(np_name: str, nin: int, scalar_rule):  # noqa: C901 -- its inner rule checks a NumPy ufunc call's operands and out= in the order NumPy does
    """The rule for ``np.<np_name>`` (``nin`` inputs): ``scalar_rule`` for scalar operands,
    the generated element-wise device function for arrays."""

    def rule(t: Typer, site: CallSite):  # noqa: C901 -- checks a NumPy ufunc call's operands and out= in the order NumPy reports errors
        from cujit.infer.function_calls import call_device_function

        if not takes_arrays(site):
            return scalar_rule(t, site)

        args = list(site.args)
        out = site.kwargs.get("out")
        extra = set(site.kwargs) - {"out"}
        if extra:
            raise TypingError(
                f"np.{np_name}() on arrays takes only 'out' by keyword, not "
                + ", ".join(sorted(extra)),
                site.loc,
            )
        if out is None and len(args) == nin + 1:
            out = args.pop()
        if len(args) != nin:
            raise TypingError(
                f"np.{np_name}() takes {nin} input{'s' if nin > 1 else ''} and "
                f"an 'out' array ({len(args)} inputs given)",
                site.loc,
            )
        if out is None:
            raise TypingError(
                f"np.{np_name}() of an array needs an 'out' array inside a "
                "kernel, which cannot allocate one",
                site.loc,
                hint=f"np.{np_name}(x, out) writes into out",
            )
        if not isinstance(out.type, Array):
            raise TypingError(
                f"np.{np_name}()'s 'out' must be an array, not {describe(out.type)}", site.loc
            )
        for v in args:
            t.check_defined(v, site.loc)
            if isinstance(v.type, Array):
                if v.type.ndim != out.type.ndim:
                    raise TypingError(
                        f"np.{np_name}() in a kernel takes arrays of out's {out.type.ndim} "
                        f"dimensions or scalars; an operand has {v.type.ndim}",
                        site.loc,
                    )
            elif not isinstance(v.type, Scalar):
                raise TypingError(f"np.{np_name}() cannot take {describe(v.type)}", site.loc)
        pattern = "".join("a" if isinstance(v.type, Array) else "s" for v in args)
        devfn = _elementwise(np_name, pattern, out.type.ndim)
        site.args[:] = [*args, out]
        site.kwargs.clear()
        call_device_function(t, site.op, devfn, site)
        return site.result(out.type)

    return rule


@functools.cache
def _elementwise(np_name: str, pattern: str, ndim: int):
    """The generated device function for ``np.<np_name>`` over operands of ``pattern``
    ('a' array, 's' scalar) into an ``ndim``-d ``out``."""
    import numpy as np

    from cujit.device_function import DeviceFunction

    name = f"np_{np_name}_{pattern}_{ndim}"
    params = [f"x{k}" for k in range(len(pattern))]
    index = ", ".join(f"i{d}" for d in range(ndim))
    operands = [
        f"{p}[{index}]" if kind == "a" else p for p, kind in zip(params, pattern, strict=True)
    ]
    lines = [f"def {name}({', '.join(params)}, out):"]
    for d in range(ndim):
        lines.append("    " * (d + 1) + f"for i{d} in range(out.shape[{d}]):")
    lines.append("    " * (ndim + 1) + f"out[{index}] = np.{np_name}({', '.join(operands)})")
    lines.append("    return out")
    source = "\n".join(lines) + "\n"
    filename = f"<cujit np.{np_name} on arrays>"
    # Messages about the generated body show its lines, as for a user's file.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)
    return DeviceFunction(namespace[name])
