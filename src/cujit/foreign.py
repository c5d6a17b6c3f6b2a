"""``cuda.declare_device``: a device function defined in foreign code, called from kernels.

    mul = cuda.declare_device("mul_f32", "float32(float32, float32)", link=["mul.cu"],
                              abi="c")

The declaration is the function's name (its linker symbol), its signature, the files
that define it (``cujit.linking``) and its ABI: "numba", numba's default
(``int f(T *result, args...)``, the status ignored), or "c" (``extern "C"``: arguments
in, the result returned, a bool as one byte).  A call types as the signature says, its
arguments converted to the declared types; stage 6 declares the symbol in the kernel's
module, and the kernel links the declaration's files.  Like ``device_function``, this
module imports nothing of the compiler, so stage 4 can name ``DeclaredFunction``.
"""

from __future__ import annotations

import sys

from cujit.diagnostics import CujitError, Loc, api_boundary
from cujit.linking import LinkFile, link_files
from cujit.types import Signature, Type, parse_signature

ABIS = ("c", "numba")


class DeclaredFunction:
    """A declared foreign device function: callable from kernels, never from the host."""

    def __init__(
        self,
        name: str,
        sig: Signature,
        files: tuple[LinkFile, ...],
        abi: str,
        loc: Loc | None,
        use_cooperative: bool = False,
    ):
        self.name, self.sig, self.files, self.abi, self.loc = name, sig, files, abi, loc
        self.use_cooperative = use_cooperative

    def __repr__(self) -> str:  # stable: it is this object's part of the cache key
        files = ", ".join(repr(f) for f in self.files)
        return f"<declared device function {self.name}: {self.sig} abi={self.abi} [{files}]>"

    @property
    def args(self) -> tuple[Type, ...]:
        return tuple(self.sig.args)

    def __call__(self, *args, **kwargs):
        raise CujitError(
            f"'{self.name}' (cuda.declare_device) is foreign device code: it "
            "can only be called from a kernel or a device function"
        )


def _caller_loc() -> Loc | None:
    frame = sys._getframe(2)  # the user's call of declare_device (through api_boundary)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("cujit"):
        frame = frame.f_back
    return None if frame is None else Loc(frame.f_code.co_filename, frame.f_lineno, 0)


@api_boundary
def declare_device(
    name: str, sig, link=None, use_cooperative: bool = False, abi: str = "numba"
) -> DeclaredFunction:
    """numba's ``cuda.declare_device``: ``name`` defined in ``link`` (or in a file the
    calling kernel links), with signature ``sig`` and ABI ``abi``."""
    if abi not in ABIS:
        raise NotImplementedError(f"Unsupported ABI: {abi}")
    if not isinstance(name, str) or not name.isidentifier():
        raise CujitError(f"declare_device: {name!r} is not a symbol name")
    if isinstance(sig, (tuple, list)) or (isinstance(sig, str) and sig.lstrip().startswith("(")):
        raise TypeError("Return type must be provided for device declarations")
    parsed = sig if isinstance(sig, Signature) else parse_signature(sig)
    return DeclaredFunction(name, parsed, link_files(link), abi, _caller_loc(), use_cooperative)
