"""What compiling a device function alone gives (``cujit.device_inspection``'s
``compile_device``, ``inspect_llvm``, ``overloads``): numba's compile result, its
``fndesc`` and its ``library``.  A module of its own, imported by the first such
compile, so that ``from cujit import cuda`` makes none of these classes.
"""

from __future__ import annotations

from cujit.frozen import frozen


@frozen
class FunctionDescriptor:
    """numba's ``fndesc``, as far as a device function's inspection names it."""

    mangled_name: str
    qualname: str


@frozen
class CodeLibrary:
    """numba's ``library`` of a compile result: its code as text."""

    llvm: str
    ptx: str

    def get_llvm_str(self) -> str:
        return self.llvm

    def get_asm_str(self) -> str:
        return self.ptx


@frozen
class DeviceCompileResult:
    """One signature of a device function compiled alone (``compile_device``)."""

    signature: object  # cujit.types.Signature: argument and return types
    fndesc: FunctionDescriptor
    llvm: str
    ptx: str

    @property
    def return_type(self):
        return self.signature.return_type

    @property
    def library(self) -> CodeLibrary:
        return CodeLibrary(self.llvm, self.ptx)
