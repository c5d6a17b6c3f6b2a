"""numba's kernel inspection and resource queries, for ``Kernel`` (a mixin).

Each query takes an optional signature (a tuple of argument types, or a
``Signature``); without one it answers for every specialisation, as a dict keyed by
argument types, except on a kernel made by ``specialize``, which has exactly one:

- ``inspect_llvm``: the LLVM IR; ``inspect_asm``: the PTX (on the CPU target, the
  host's assembly); ``inspect_lto_ptx``: the linked PTX, which is ``inspect_asm``'s
  (cujit links libdevice into the module before PTX);
- ``inspect_sass``/``inspect_sass_cfg``: the cubin through ``nvdisasm`` (found by
  ``cuda.pathfinder`` or on PATH; a clear error without it);
- ``inspect_types(file=None)``: each specialisation's typed IR, printed;
- ``get_regs_per_thread``, ``get_shared_mem_per_block``, ``get_local_mem_per_thread``,
  ``get_const_mem_size``, ``get_max_threads_per_block``: the driver's function
  attributes of the loaded kernel (on the CPU target: no registers, its static shared
  and constant bytes, its launch limit);
- ``signatures``, ``definitions``; ``specialize(*args)``: a kernel fixed to the types
  of ``args`` (values or types).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from cujit.device_inspection import InspectableDeviceFunction
from cujit.types import Signature, Type


class KernelInspection:
    """Mixed into ``dispatcher.Kernel``; uses its ``overloads``, ``compile``, ``target``."""

    _specialized = False

    # -- selection ---------------------------------------------------------
    def _each(self, signature, answer, one_when_specialized: bool = False):
        # numba's shapes: the code inspections give a dict per signature unless one is
        # named, even for a specialised kernel; the resource queries give a specialised
        # kernel's one value.
        if signature is not None:
            return answer(self._spec_for(signature))
        if self._specialized and one_when_specialized:
            return answer(next(iter(self.overloads.values())))
        return {key: answer(spec) for key, spec in self.overloads.items()}

    def _spec_for(self, signature):
        if isinstance(signature, Signature):
            signature = signature.args
        key = tuple(signature)
        return self.overloads.get(key) or self.compile(key)

    @property
    def signatures(self) -> list[tuple[Type, ...]]:
        """The argument types of every specialisation compiled so far."""
        return list(self.overloads)

    @property
    def definitions(self) -> dict:
        return dict(self.overloads)

    @property
    def specialized(self) -> bool:
        return self._specialized

    def specialize(self, *args):
        """A kernel of the same function compiled for the types of ``args`` only; the
        same one for the same types (``specializations``).  A kernel made by
        ``specialize`` or declared with one signature is specialised already."""
        if self._specialized:
            raise RuntimeError(
                "Dispatcher already specialized: this kernel is compiled for "
                f"{', '.join(map(str, next(iter(self.overloads), ())))} only"
            )
        from cujit.types import typeof

        types = tuple(a if isinstance(a, Type) else typeof(a) for a in args)
        fixed = self.specializations.get(types)
        if fixed is None:
            fixed = type(self)(self.py_func, (), options=self._base_options, **self._flags)
            fixed.compile(types)
            fixed._specialized = True
            self.specializations[types] = fixed
        return fixed

    # -- code --------------------------------------------------------------
    def inspect_llvm(self, signature=None):
        return self._each(signature, _llvm)

    def inspect_asm(self, signature=None):
        return self._each(signature, _asm)

    def inspect_lto_ptx(self, signature=None):
        return self.inspect_asm(signature)

    def inspect_sass(self, signature=None):
        return self._each(signature, lambda s: _nvdisasm(s, ["-c"]))

    def inspect_sass_cfg(self, signature=None):
        return self._each(signature, lambda s: _nvdisasm(s, ["-cfg"]))

    def inspect_types(self, file=None) -> None:
        from cujit.ir.printer import format_function

        file = file or sys.stdout
        for key, spec in self.overloads.items():
            print(f"{self.__name__} ({', '.join(map(str, key))})", file=file)
            print("-" * 80, file=file)
            print(format_function(_typed(self, spec)), file=file)
            print("=" * 80, file=file)

    # -- resources ---------------------------------------------------------
    def get_regs_per_thread(self, signature=None):
        return self._each(signature, lambda s: _resource(self, s, "num_regs"), True)

    def get_shared_mem_per_block(self, signature=None):
        return self._each(signature, lambda s: _resource(self, s, "static_shared_bytes"), True)

    def get_local_mem_per_thread(self, signature=None):
        return self._each(signature, lambda s: _resource(self, s, "local_bytes"), True)

    def get_const_mem_size(self, signature=None):
        return self._each(signature, lambda s: _resource(self, s, "const_bytes"), True)

    def get_max_threads_per_block(self, signature=None):
        return self._each(signature, lambda s: _resource(self, s, "max_threads_per_block"), True)


def specialization_llvm(spec) -> str:
    """``Specialization.inspect_llvm``."""
    return _llvm(spec)


def specialization_asm(spec) -> str:
    """``Specialization.inspect_asm``."""
    return _asm(spec)


def _llvm(spec) -> str:
    native = spec.result.outputs.get("native")
    return str(spec.result.outputs["llvm"]) if native is None else str(native.llvm_ir)


def _asm(spec) -> str:
    native = spec.result.outputs.get("native")
    if native is None:
        return spec.result.ptx
    from llvmlite import binding as llvm

    from cujit.targets.cpu.engine import host_machine

    return host_machine().emit_assembly(llvm.parse_assembly(native.jit.llvm_ir))


def _typed(kernel, spec):
    outputs = spec.result.outputs
    fn = outputs.get("passes") or outputs.get("typed")
    if fn is None:  # a disk-cache hit keeps no IR: type it again
        from cujit.pipeline import compile_kernel

        fn = compile_kernel(
            kernel.py_func, spec.arg_types, kernel._options(), stop_after="passes"
        ).outputs["passes"]
    return fn


def _cpu_resource(spec, what: str) -> int:
    native = spec.result.outputs["native"]
    if what == "static_shared_bytes":
        return native.static_shared
    if what == "max_threads_per_block":
        from cujit.targets.cpu.launch import MAX_THREADS_PER_BLOCK

        return MAX_THREADS_PER_BLOCK
    return 0  # no register file, no local memory, no constant bank on the host


def _resource(kernel, spec, what: str) -> int:
    if "native" in spec.result.outputs:
        return _cpu_resource(spec, what)
    from cujit.runtime import context

    dev = context.current_device_id()
    fn = spec.functions.get(dev) or kernel._load(spec, dev)
    if what == "const_bytes":
        from cujit.runtime.driver import call, get_driver

        attr = get_driver().CUfunction_attribute.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES
        return call("cuFuncGetAttribute", attr, fn.handle)
    return getattr(fn, what)


def nvdisasm_path() -> str | None:
    """nvdisasm from the NVIDIA wheels or the CUDA toolkit (``cuda.pathfinder``), or PATH."""
    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        found = find_nvidia_binary_utility("nvdisasm")
    except Exception:  # noqa: BLE001 - pathfinder absent or too old
        found = None
    return found or shutil.which("nvdisasm")


def _nvdisasm(spec, flags: list[str]) -> str:
    if "native" in spec.result.outputs:
        raise RuntimeError("the CPU target has no SASS: inspect_asm() gives its host assembly")
    tool = nvdisasm_path()
    if tool is None:
        raise RuntimeError(
            "inspect_sass needs nvdisasm, which was not found: install the "
            "nvidia-cuda-nvdisasm wheel or a CUDA toolkit (or put it on PATH)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(spec.result.cubin)
        out = subprocess.run(
            [tool, *flags, path], capture_output=True, text=True, timeout=120, check=False
        )
    if out.returncode != 0:
        raise RuntimeError(f"nvdisasm failed: {out.stderr.strip()}")
    return out.stdout


__all__ = ["InspectableDeviceFunction", "KernelInspection", "nvdisasm_path"]
