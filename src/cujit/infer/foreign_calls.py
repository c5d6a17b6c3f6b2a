"""Calls to foreign device functions (``cuda.declare_device``):

    %5 = call %3(%1, %2)     # %3 = const <declared device function mul: float32(float32, float32)>
  becomes
    %5: float32 = intrinsic 'foreign.call' (%1, %2) [symbol=mul, abi=c, ...]

The arguments convert to the declared types (scalars as assignments convert); the
result has the declared return type.  The op's attributes carry what stage 6 and the
linker need: the symbol, the ABI, the declared types and the files that define it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.foreign import DeclaredFunction
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic
from cujit.types import NoneType, Scalar, Type, none

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def _convertible(have: Type, want: Type) -> bool:
    return have == want or (isinstance(have, Scalar) and isinstance(want, Scalar))


def call_foreign(t: Typer, fn: DeclaredFunction, site: CallSite) -> None:
    """Type a call of a declared foreign function."""
    if site.kwargs:
        raise TypingError(f"'{fn.name}' (cuda.declare_device) takes no keyword arguments", site.loc)
    want = fn.args
    if len(site.args) != len(want) or not all(
        _convertible(v.type, w) for v, w in zip(site.args, want, strict=True)
    ):
        got = ", ".join(describe(v.type) for v in site.args)
        raise TypingError(f"'{fn.name}' is declared as {fn.sig} and cannot take ({got})", site.loc)
    for v in site.args:
        t.check_defined(v, site.loc)
    args = tuple(t.cast(v, w, site.loc) for v, w in zip(site.args, want, strict=True))
    ret = fn.sig.return_type
    ret = none if ret is None or isinstance(ret, NoneType) else ret
    attrs = (
        ("symbol", fn.name),
        ("abi", fn.abi),
        ("args", want),
        ("return", ret),
        ("files", fn.files),
        ("declared", fn.loc),
        ("cooperative", bool(fn.use_cooperative)),  # declare_device(use_cooperative=True)
    )
    t.emit(
        Intrinsic(
            loc=site.loc, result=site.result(ret), name="foreign.call", args=args, attrs=attrs
        )
    )
