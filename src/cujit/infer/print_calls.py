"""``print()`` in kernels: one printf-style ``print`` intrinsic per call.

Inference fixes the whole format string, so lowering only has to pack the
values (vprintf on the GPU, printf on the host).  The conversions are numba's
(``numba.cuda.printimpl``): signed integers print with ``%lld`` as int64,
unsigned ones with ``%llu`` as uint64, floats with ``%f`` as float64 (C's
variadic promotion); items are separated by one space and the line ends with
``\\n``.  String constants go into the format itself (``%`` doubled); a bool
prints ``True``/``False`` through ``%s``; ``None`` prints ``None``; a tuple prints as
Python writes it (``(1, (2.000000, 3))``, ``(4,)``), and ``cuda.threadIdx`` (or
``blockIdx``, ``blockDim``, ``gridDim``) as the tuple of its x, y and z.  More than 32
values (vprintf's limit) print the format string itself, with a RuntimeWarning at
compile time, as numba.

    print("i =", i, x)          # i: int32, x: float32
  becomes
    %7: int64 = cast %3
    %8: float64 = cast %4
    %9: none = intrinsic print (%7, %8) {format='i = %lld %f\\n'}
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from cujit.device_api import SpecialRegister
from cujit.diagnostics import UnsupportedError
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, TupleGet, Value
from cujit.types import NoneType, PyObject, Scalar, Tuple, float64, int32, int64, none, uint64

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite

MAX_PRINT_ITEMS = 32  # vprintf's limit ("CUDA C++ Programming Guide", "Formatted Output")


def call_print(t: Typer, site: CallSite) -> Value:
    if site.kwargs:
        raise UnsupportedError(
            "print() in a kernel takes no keyword arguments (sep=, end=, file=, flush=)", site.loc
        )
    values: list[Value] = []
    pieces = [_item_format(t, v, site.loc, values) for v in site.args]
    fmt = " ".join(pieces) + "\n"
    if len(values) > MAX_PRINT_ITEMS:
        # vprintf takes 32 arguments at most: numba prints the format itself instead,
        # and says so at compile time; both targets do the same.
        warnings.warn(
            f"{site.loc}: CUDA print() cannot print more than {MAX_PRINT_ITEMS} items. "
            "The raw format string will be emitted by the kernel instead.",
            RuntimeWarning,
            stacklevel=2,
        )
        fmt, values = fmt.replace("%", "%%"), []
    return t.emit(
        Intrinsic(
            loc=site.loc,
            result=site.result(none),
            name="print",
            args=tuple(values),
            attrs=(("format", fmt),),
        )
    )


def _item_format(t: Typer, v: Value, loc, values: list[Value]) -> str:
    """The format of one printed value; the values it formats are appended to ``values``."""
    ty = v.type
    if isinstance(ty, PyObject) and isinstance(ty.value, str):
        return ty.value.replace("%", "%%")
    t.check_defined(v, loc)
    if isinstance(ty, NoneType):
        return "None"
    if isinstance(ty, Scalar) and ty.kind == "b":
        values.append(v)
        return "%s"
    if isinstance(ty, Scalar):
        fmt, wide = {"f": ("%f", float64), "u": ("%llu", uint64)}.get(ty.kind, ("%lld", int64))
        values.append(t.cast(v, wide, loc))
        return fmt
    if isinstance(ty, Tuple):  # as Python: (1, 2), (1,), ()
        items = [
            _item_format(t, t.emit(TupleGet(loc=loc, result=t.fresh(it), tuple=v, index=i)), loc,
                         values)
            for i, it in enumerate(ty.items)
        ]  # fmt: skip
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(ty, PyObject) and isinstance(getattr(ty.value, "x", None), SpecialRegister):
        return _dim3_format(t, ty.value, loc, values)  # cuda.threadIdx...: (x, y, z)
    raise UnsupportedError(
        f"print() of {describe(ty)} is not supported in kernels; "
        "print numbers, bools, tuples of them and string constants",
        loc,
    )


def _dim3_format(t: Typer, dim3, loc, values: list[Value]) -> str:
    for axis in "xyz":
        reg = Intrinsic(
            loc=loc,
            result=t.fresh(int32),
            name="cuda.sreg",
            args=(),
            attrs=(("reg", getattr(dim3, axis).key),),
        )
        values.append(t.cast(t.emit(reg), int64, loc))
    return "(%lld, %lld, %lld)"


def print_rules() -> dict:
    """The call table's row for ``print``."""
    return {print: call_print}
