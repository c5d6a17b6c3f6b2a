"""LLVM IR -> PTX through libNVVM.

libNVVM takes NVVM IR: the LLVM 7 dialect with typed pointers that llvmlite
emits, plus ``!nvvmir.version`` and ``!nvvm.annotations`` metadata (see the
"NVVM IR Specification").  The user module is added as a full module and
libdevice lazily (``nvvmLazyAddModuleToProgram``), so only the ``__nv_*``
functions the kernel calls are linked in and internalised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from cujit.diagnostics import CujitError
from cujit.frozen import frozen
from cujit.ptx import libs


class NVVMError(CujitError):
    """libNVVM rejected a module; the message carries libNVVM's log."""

    def __init__(self, message: str, log: str):
        self.log = log
        super().__init__(f"{message}\n--- libNVVM log ---\n{log.strip() or '(empty log)'}")


@frozen
class NVVMOptions:
    """libNVVM compile options; the defaults keep IEEE float semantics.

    ``fastmath`` follows numba: flush single-precision denormals, approximate
    division and square root (the ``-ftz``/``-prec-div``/``-prec-sqrt`` flags).
    """

    opt: int = 3
    fastmath: bool = False
    fma: bool = True
    debug: bool = False
    extra: tuple[str, ...] = ()

    def to_args(self, arch: tuple[int, int]) -> list[str]:
        major, minor, *variant = arch  # (9, 0, "a"): the arch-specific sm_90a
        args = [
            f"-arch=compute_{major}{minor}{''.join(variant)}",
            f"-opt={0 if self.debug else self.opt}",
        ]
        if self.fastmath:
            args += ["-ftz=1", "-prec-div=0", "-prec-sqrt=0"]
        if not self.fma:
            args.append("-fma=0")
        if self.debug:
            args.append("-g")
        args.extend(self.extra)
        return args


DEFAULT_OPTIONS = NVVMOptions()


def compile_ptx(
    llvm_ir: str | bytes | Sequence[str],
    arch: tuple[int, int],
    options: NVVMOptions | None = None,
    name: str = "cujit_module",
    **overrides,
) -> str:
    """Compile one NVVM IR module (text, or bitcode as bytes), or the modules of one
    program (a sequence of texts, which libNVVM links), to PTX for ``arch``.

    ``overrides`` replace fields of ``options``: ``compile_ptx(ir, (9, 0), opt=0,
    fastmath=True)``.

    libdevice joins the program only when the module mentions an ``__nv_``
    function: parsing its 500 kB of bitcode is the larger part of a small
    compile, and most kernels call nothing from it.
    """
    # The result is NUL-terminated C text.
    return _compile(llvm_ir, arch, options, name, overrides, ()).rstrip(b"\0").decode()


def compile_ltoir(
    llvm_ir: str | bytes | Sequence[str],
    arch: tuple[int, int],
    options: NVVMOptions | None = None,
    name: str = "cujit_module",
    **overrides,
) -> bytes:
    """Compile one NVVM IR module to LTO-IR (libNVVM's ``-gen-lto``): the optimised IR
    that nvJitLink links with other LTO-IR, PTX or cubins (``link.link_cubin``)."""
    return _compile(llvm_ir, arch, options, name, overrides, ("-gen-lto",))


def _compile(llvm_ir, arch, options, name: str, overrides: dict, mode: tuple) -> bytes:
    nvvm = libs.nvvm_module()
    options = options or DEFAULT_OPTIONS
    if overrides:
        options = replace(options, **overrides)
    opts = options.to_args(tuple(arch)) + list(mode)
    bitcode = isinstance(llvm_ir, (bytes, bytearray))  # whose calls cannot be searched
    if bitcode or isinstance(llvm_ir, str):
        llvm_ir = [llvm_ir]
    modules = [m.encode() if isinstance(m, str) else bytes(m) for m in llvm_ir]
    prog = nvvm.create_program()
    try:
        stage = "add the module"
        try:
            for k, data in enumerate(modules):
                nvvm.add_module_to_program(prog, data, len(data), name if k == 0 else f"{name}.{k}")
            if bitcode or any(b"__nv_" in m for m in modules):
                stage = "add libdevice"
                ld = libs.libdevice_bytes()
                nvvm.lazy_add_module_to_program(prog, ld, len(ld), "libdevice")
            stage = "compile"
            nvvm.compile_program(prog, len(opts), opts)
        except nvvm.nvvmError as exc:
            raise NVVMError(
                f"libNVVM could not {stage} '{name}' for sm_{arch[0]}{arch[1]} "
                f"({exc}; options {' '.join(opts)})",
                _program_log(nvvm, prog),
            ) from None
        size = nvvm.get_compiled_result_size(prog)
        buf = bytearray(size)
        nvvm.get_compiled_result(prog, buf)
    finally:
        nvvm.destroy_program(prog)
    return bytes(buf)


def _program_log(nvvm, prog: int) -> str:
    try:
        size = nvvm.get_program_log_size(prog)
        buf = bytearray(size)
        nvvm.get_program_log(prog, buf)
        return bytes(buf).rstrip(b"\0").decode(errors="replace")
    except Exception as exc:  # noqa: BLE001 - a log we cannot read must not hide the real error
        return f"(could not read the libNVVM log: {exc})"
