"""numba's kernel inspection and resource queries, for ``Kernel`` (a mixin).

Each query takes an optional signature (a tuple of argument types, or a
``Signature``); without one it answers for every specialisation, as a dict keyed by
argument types, except on a kernel made by ``specialize``, which has exactly one:

- ``inspect_llvm``: the NVVM IR (LLVM IR for libNVVM); ``inspect_asm``: the PTX;
  ``inspect_lto_ptx``: the PTX nvJitLink's link-time optimisation makes of the kernel
  and its foreign code (``link=``, ``declare_device`` files) together;
- ``inspect_sass``/``inspect_sass_cfg``: the cubin through ``nvdisasm`` (found by
  ``cuda.pathfinder`` or on PATH; a clear error without it);
- ``inspect_types(file=None)``: each specialisation's typed IR, printed;
- ``get_regs_per_thread``, ``get_shared_mem_per_block``, ``get_local_mem_per_thread``,
  ``get_const_mem_size``, ``get_max_threads_per_block``: the driver's function
  attributes of the loaded kernel (on the CPU target: the registers, local and constant
  memory ptxas allocates for its CUDA code, its static shared bytes, its launch limit);
- ``signatures``, ``definitions``; ``specialize(*args)``: a kernel fixed to the types
  of ``args`` (values or types).

On the CPU target the code inspections show the kernel's CUDA compilation, as on a GPU
(``cuda_view.CudaView``: compiled on first use for the CPU device's compute capability);
``inspect_llvm(target="cpu")`` and ``inspect_asm(target="cpu")`` give the host module's
LLVM IR and x86 assembly that the CPU target runs.
"""

from __future__ import annotations

import os
import sys

from cujit.device_inspection import InspectableDeviceFunction
from cujit.diagnostics import api_boundary
from cujit.types import Signature, Type


class KernelOverloads(dict):
    """A kernel's ``overloads``: its specialisations by argument types.  As numba's
    dispatcher also holds the device-function compiles of a kernel called from other
    kernels, a key only those compiled reads as the function compiled alone in
    numba's ABI (``device_view``); iteration and ``get`` see the kernel's own."""

    def __init__(self, kernel) -> None:
        super().__init__()
        self._kernel = kernel

    def __missing__(self, key):
        view = self._kernel._device_view
        if view is not None and tuple(key) in view.signatures:
            return view.overloads[tuple(key)]
        raise KeyError(key)


# The jit flags a kernel's device view compiles with (those numba's device compile reads).
_DEVICE_FLAGS = ("debug", "fastmath", "opt", "inline", "forceinline")


class KernelInspection:
    """Mixed into ``dispatcher.Kernel``; uses its ``overloads``, ``compile``, ``target``."""

    _specialized = False
    _device_view = None

    def device_view(self) -> InspectableDeviceFunction:
        """This kernel's function as the device function that other kernels' calls of
        it compile (numba compiles a kernel called from a kernel as one), made once."""
        if self._device_view is None:
            flags = {k: v for k, v in self._flags.items() if k in _DEVICE_FLAGS}
            self._device_view = InspectableDeviceFunction(self.py_func, **flags)
        return self._device_view

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
        """The argument types of every specialisation compiled so far, then of those
        compiled for other kernels' calls of this one (``device_view``)."""
        found = list(self.overloads)
        if self._device_view is not None:
            found += [s for s in self._device_view.signatures if s not in found]
        return found

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

    # -- code ----------------------------------------------------------------
    @api_boundary
    def inspect_llvm(self, signature=None, *, target: str | None = None):
        """The NVVM IR; ``target="cpu"``: the host module's LLVM IR (CPU target only)."""
        host = _host_view(self, target)
        return self._each(signature, _host_llvm if host else _llvm)

    @api_boundary
    def inspect_asm(self, signature=None, *, target: str | None = None):
        """The PTX; ``target="cpu"``: the host assembly (CPU target only)."""
        host = _host_view(self, target)
        return self._each(signature, _host_asm if host else _asm)

    @api_boundary
    def inspect_lto_ptx(self, signature=None):
        """The PTX of the kernel linked with its foreign code under link-time
        optimisation (``pipeline.lto_ptx``): the linked functions inlined into it."""
        return self._each(signature, lambda s: _lto_ptx(self, s))

    @api_boundary
    def inspect_sass(self, signature=None):
        return self._each(signature, lambda s: _nvdisasm(s, ["-c"]))

    @api_boundary
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


def specialization_llvm(spec, target: str | None = None) -> str:
    """``Specialization.inspect_llvm``."""
    return _host_llvm(spec) if _host_view_of(spec, target) else _llvm(spec)


def specialization_asm(spec, cc=None, target: str | None = None) -> str:
    """``Specialization.inspect_asm``: the PTX (for ``cc`` on the CPU target, whose
    CUDA view compiles for any compute capability; a GPU's specialisation has one)."""
    return _host_asm(spec) if _host_view_of(spec, target) else cuda_result(spec, cc).ptx


def cuda_result(spec, cc=None):
    """The CUDA compilation of ``spec``: its own, or on the CPU target its CUDA view's."""
    view = getattr(spec, "cuda_view", None)
    return spec.result if view is None else view.result(cc)


def _lto_ptx(kernel, spec) -> str:
    from cujit.pipeline import lto_ptx

    view = getattr(spec, "cuda_view", None)
    options = kernel._options() if view is None else view.options()
    return lto_ptx(cuda_result(spec), options)


def _host_view(kernel, target: str | None) -> bool:
    return _check_target(target, kernel.target == "cpu")


def _host_view_of(spec, target: str | None) -> bool:
    return _check_target(target, "native" in spec.result.outputs)


def _check_target(target: str | None, on_cpu: bool) -> bool:
    # Whether the host view is asked for; only a CPU-target kernel has one.
    if target in (None, "cuda"):
        return False
    if target != "cpu":
        raise ValueError(f"unknown target {target!r}: use 'cuda' (the default) or 'cpu'")
    if not on_cpu:
        raise ValueError(
            "target='cpu' shows the host code of a kernel on the CPU target; this kernel "
            "runs on the GPU (cuda.jit(target='cpu') compiles one for the host)"
        )
    return True


def _llvm(spec) -> str:
    return str(cuda_result(spec).outputs["llvm"])


def _asm(spec) -> str:
    return cuda_result(spec).ptx


def _host_llvm(spec) -> str:
    return str(spec.result.outputs["native"].llvm_ir)


def _host_asm(spec) -> str:
    from llvmlite import binding as llvm

    from cujit.targets.cpu.engine import host_machine

    native = spec.result.outputs["native"]
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
    # Shared memory and the block limit are the CPU launch's own (the static shared
    # bytes are the same in the CUDA code); registers, local and constant memory are
    # what ptxas allocates for the kernel's CUDA code, as the GPU's driver reports them.
    native = spec.result.outputs["native"]
    if what == "static_shared_bytes":
        return native.static_shared
    if what == "max_threads_per_block":
        from cujit.targets.cpu.launch import MAX_THREADS_PER_BLOCK

        return MAX_THREADS_PER_BLOCK
    return spec.cuda_view.resources()[what]


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
    import shutil  # here: only SASS inspection needs it, not the import of cujit

    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        found = find_nvidia_binary_utility("nvdisasm")
    except Exception:  # noqa: BLE001 - pathfinder absent or too old
        found = None
    return found or shutil.which("nvdisasm")


def _nvdisasm(spec, flags: list[str]) -> str:
    import subprocess  # here: only SASS inspection runs a tool, not the import of cujit
    import tempfile

    tool = nvdisasm_path()
    if tool is None:
        raise RuntimeError(
            "inspect_sass needs nvdisasm: nvdisasm was not found (install the "
            "nvidia-cuda-nvdisasm wheel or a CUDA toolkit, or put it on PATH)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cuda_result(spec).cubin)
        out = subprocess.run(
            [tool, *flags, path], capture_output=True, text=True, timeout=120, check=False
        )
    if out.returncode != 0:
        raise RuntimeError(f"nvdisasm failed: {out.stderr.strip()}")
    return out.stdout


__all__ = [
    "InspectableDeviceFunction",
    "KernelInspection",
    "cuda_result",
    "nvdisasm_path",
]
