"""numba's inspection of device functions: what ``jit(device=True)`` returns.

``InspectableDeviceFunction`` is a ``DeviceFunction`` (the class stage 4 knows) with
numba's queries, answered by compiling the function alone, as ``cuda.compile(...,
device=True)`` does (C ABI, its ``jit`` options: ``opt``, ``debug``, ``fastmath``):

- ``compile_device(args)``: the compiled function (``DeviceCompileResult``, in
  ``cujit.device_results``: its signature and ``fndesc.mangled_name``, the symbol its
  LLVM IR and PTX define);
- ``inspect_llvm(args)``, ``inspect_asm(args)``: that compile's LLVM IR and PTX
  (``inspect_llvm()`` alone: a dict over the signatures);
- ``signatures``: the argument types declared, then those kernels' calls compiled;
  ``overloads``: each of them compiled alone in numba's ABI (``.library``);
- ``inspect_sass``: refused, as numba refuses it (a device function alone is not a
  loadable kernel);
- ``f[grid, block]``: refused with numba's words (it cannot be compiled as a kernel).

Each signature compiles once; the result is kept on the object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from cujit.device_function import DeviceFunction, specializations
from cujit.diagnostics import api_boundary

if TYPE_CHECKING:  # made by the first compile (``cujit.device_results``)
    from cujit.device_results import DeviceCompileResult


class Overloads(Mapping):
    """A device function's ``overloads``: argument types -> ``DeviceCompileResult`` in
    numba's ABI (an ``i32`` status returned, the value through a pointer), as numba
    compiles the device functions kernels call; each compiled when first read."""

    def __init__(self, devfn) -> None:
        self._devfn = devfn
        self._keys = devfn.signatures

    def __getitem__(self, args) -> DeviceCompileResult:
        args = tuple(args)
        if args not in self._keys:
            raise KeyError(args)
        return self._devfn._compiled(self._devfn._key_for(args), "numba")

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _signature_key(signature):
    return tuple(signature) if isinstance(signature, list) else signature


class InspectableDeviceFunction(DeviceFunction):
    """What ``jit(device=True)`` returns: a ``DeviceFunction`` with numba's inspection
    (kept above the compiler: stage 4 names only ``DeviceFunction``)."""

    @api_boundary
    def compile_device(self, args, return_type=None) -> DeviceCompileResult:
        """numba's ``compile_device``: this function compiled alone for ``args``."""
        from cujit.types import Signature

        key = _signature_key(args)
        if return_type is not None:
            key = Signature(return_type, tuple(key))
        return self._compiled(key)

    @property
    def signatures(self) -> list[tuple]:
        """numba's: the argument types of each signature declared, then of each one
        compiled for calls from kernels so far."""
        found = [tuple(s.args) for s in self.declared_signatures]
        for key in specializations(self):
            args = tuple(key[0])
            if args not in found:
                found.append(args)
        return found

    @property
    def overloads(self) -> Overloads:
        """numba's: argument types -> the function compiled alone in numba's ABI for
        them (compiled when first read): ``.library.get_llvm_str()`` and so on."""
        return Overloads(self)

    def _key_for(self, args: tuple):
        """A declared signature taking ``args`` (its return type kept), else ``args``."""
        for sig in self.declared_signatures:
            if tuple(sig.args) == tuple(args):
                return sig
        return tuple(args)

    @api_boundary
    def inspect_llvm(self, signature=None):
        """The LLVM IR of this function compiled alone for ``signature``; without one,
        numba's form: a dict from the argument types of each signature to its IR."""
        if signature is None:
            return {args: self._compiled(self._key_for(args)).llvm for args in self.signatures}
        return self._compiled(_signature_key(signature)).llvm

    @api_boundary
    def inspect_asm(self, signature) -> str:
        """The PTX of this function compiled alone for ``signature`` (argument types, or
        a signature string): what ``cuda.compile_ptx(..., device=True)`` gives."""
        return self._compiled(_signature_key(signature)).ptx

    def inspect_sass(self, signature=None):
        raise RuntimeError(
            "Cannot inspect SASS of a device function: it is not a kernel on its own; "
            "inspect the SASS of a kernel that calls it (kernel.inspect_sass())"
        )

    def _compiled(self, key, abi: str = "c") -> DeviceCompileResult:
        cache = self.__dict__.setdefault("_alone", {})
        found = cache.get((key, abi))
        if found is None:
            found = cache[key, abi] = self._compile_alone(key, abi)
        return found

    def _compile_alone(self, key, abi: str = "c") -> DeviceCompileResult:
        from cujit.codegen.entry import entry_symbol
        from cujit.compile_api import compile_device_alone
        from cujit.device_results import DeviceCompileResult, FunctionDescriptor
        from cujit.types import Signature

        flags = self._flags
        result, args, rtype = compile_device_alone(
            self.py_func,
            key,
            debug=flags.get("debug"),
            fastmath=bool(flags.get("fastmath")),
            opt=flags.get("opt"),
            abi=abi,
        )
        name = getattr(self.py_func, "__name__", "function")
        qualname = getattr(self.py_func, "__qualname__", name)
        fndesc = FunctionDescriptor(entry_symbol(name), qualname)
        outputs = result.outputs
        return DeviceCompileResult(
            Signature(rtype, tuple(args)), fndesc, str(outputs["llvm"]), outputs["ptx"]
        )
