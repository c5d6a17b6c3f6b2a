"""Typing of ``cuda.libdevice.<name>(...)`` calls from the libdevice table.

Each argument converts to the table's type for its position (as numba's one
signature per function does), and the call becomes the intrinsic
``libdevice.<name>`` typed with the function's Python result: a scalar, or a tuple
of the C result and the pointer outputs (``sincos`` -> ``(sin, cos)``).

    %4 = call %3(%2)           # libdevice.sincos(x), x: float32
  becomes
    %5: float64 = cast %2
    %4: tuple(float64, float64) = intrinsic libdevice.sincos (%5)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer.context import Typer
from cujit.ir import Intrinsic, Value
from cujit.libdevice import FUNCTIONS, PLACEHOLDERS, LibdeviceFunction

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def _rule(fn: LibdeviceFunction):
    def rule(t: Typer, site: CallSite) -> Value:
        if site.kwargs:
            raise TypingError(f"libdevice.{fn.name}() takes its arguments by position", site.loc)
        site.expect(len(fn.args), len(fn.args))
        args = []
        for k, (a, want) in enumerate(zip(site.args, fn.args, strict=True)):
            t.scalar(a, site.loc, f"libdevice.{fn.name}'s argument {k + 1}")
            args.append(t.cast(a, want, site.loc))
        return t.emit(
            Intrinsic(
                loc=site.loc,
                result=site.result(fn.returns),
                name=f"libdevice.{fn.name}",
                args=tuple(args),
            )
        )

    return rule


def libdevice_rules() -> dict:
    """The call table's entries: each ``cuda.libdevice`` placeholder -> its rule."""
    return {PLACEHOLDERS[name]: _rule(fn) for name, fn in FUNCTIONS.items()}


__all__ = ["libdevice_rules"]
