"""``print()`` in kernels: one printf-style ``print`` intrinsic per call.

Inference fixes the whole format string, so lowering only has to pack the
values (vprintf on the GPU, printf on the host).  The conversions are numba's
(``numba.cuda.printimpl``): signed integers print with ``%lld`` as int64,
unsigned ones with ``%llu`` as uint64, floats with ``%f`` as float64 (C's
variadic promotion); items are separated by one space and the line ends with
``\\n``.  String constants go into the format itself (``%`` doubled); a bool
prints ``True``/``False`` through ``%s``; ``None`` prints ``None``.

    print("i =", i, x)          # i: int32, x: float32
  becomes
    %7: int64 = cast %3
    %8: float64 = cast %4
    %9: none = intrinsic print (%7, %8) {format='i = %lld %f\\n'}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import UnsupportedError
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, Value
from cujit.types import NoneType, PyObject, Scalar, float64, int64, none, uint64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def call_print(t: Typer, site: CallSite) -> Value:
    if site.kwargs:
        raise UnsupportedError(
            "print() in a kernel takes no keyword arguments (sep=, end=, file=, flush=)", site.loc
        )
    pieces: list[str] = []
    values: list[Value] = []
    for v in site.args:
        ty = v.type
        if isinstance(ty, PyObject) and isinstance(ty.value, str):
            pieces.append(ty.value.replace("%", "%%"))
            continue
        t.check_defined(v, site.loc)
        if isinstance(ty, NoneType):
            pieces.append("None")
        elif isinstance(ty, Scalar) and ty.kind == "b":
            pieces.append("%s")
            values.append(v)
        elif isinstance(ty, Scalar):
            fmt, wide = {"f": ("%f", float64), "u": ("%llu", uint64)}.get(ty.kind, ("%lld", int64))
            pieces.append(fmt)
            values.append(t.cast(v, wide, site.loc))
        else:
            raise UnsupportedError(
                f"print() of {describe(ty)} is not supported in kernels; "
                "print numbers, bools and string constants",
                site.loc,
            )
    fmt = " ".join(pieces) + "\n"
    return t.emit(
        Intrinsic(
            loc=site.loc,
            result=site.result(none),
            name="print",
            args=tuple(values),
            attrs=(("format", fmt),),
        )
    )
