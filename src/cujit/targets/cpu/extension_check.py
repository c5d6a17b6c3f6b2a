"""A library's LLVM (``@intrinsic``, ``lower_builtin``...) checked before the host JIT takes it.

A library writes LLVM for the GPU; given to the host's MCJIT as it is, some of it ends
the process: a call of a symbol the process lacks (MCJIT jumps to address 0), an NVVM
intrinsic (LLVM's "Cannot select" aborts), GPU inline assembly.  So on the CPU target
each ``extension.call`` is lowered as usual and what it added to the module is then
looked at:

- a declaration of libdevice's ``__nv_<name>`` with libdevice's prototype gets the
  host's body (``libdevice.define_host``: the C library's function or its formula);
- a declaration of an ``llvm.<arch>.*`` intrinsic of a GPU or another machine, inline
  assembly, or any other symbol the process cannot resolve is refused with a
  ``LoweringError`` at the user's line of the call.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.diagnostics import LoweringError

EXTENSION_CALLS = ("extension.call", "extension.intrinsic")
# Intrinsic families of machines other than the host: LLVM cannot select them here.
_FOREIGN_INTRINSICS = ("nvvm", "amdgcn", "r600", "spv", "dx", "wasm", "hexagon", "ppc", "mips")


def checked(lower):
    """``lower`` (an extension call's lowering), followed by the check of what it added."""

    def lowering(ctx, op, args):
        module = ctx.module
        known = set(module.globals)
        seen = {id(i) for i in _instructions(ctx.llfn)}
        value = lower(ctx, op, args)
        _check(ctx, op, known, seen)
        return value

    return lowering


def _instructions(fn: ll.Function):
    return (instr for block in fn.blocks for instr in block.instructions)


def _what(op) -> str:
    return f"the library's implementation of this {op.attr('what', 'call')}"


def _check(ctx, op, known: set, seen: set) -> None:
    module = ctx.module
    for instr in _instructions(ctx.llfn):
        if id(instr) not in seen:
            _check_instruction(op, instr)
    for name in [n for n in module.globals if n not in known]:
        g = module.globals[name]
        if isinstance(g, ll.Function) and g.is_declaration:
            _check_declaration(op, g)
        elif isinstance(g, ll.Function):  # a function the library defined
            for instr in _instructions(g):
                _check_instruction(op, instr)
        elif isinstance(g, ll.GlobalVariable) and g.initializer is None:
            if not _resolvable(name):
                raise LoweringError(
                    f"{_what(op)} refers to the global {name!r}, which this process does "
                    "not define: the CPU target cannot link it",
                    op.loc,
                )


def _check_instruction(op, instr) -> None:
    callee = getattr(instr, "callee", None)
    if isinstance(callee, ll.InlineAsm):
        raise LoweringError(
            f"{_what(op)} uses inline assembly ({callee.asm!r}), which the CPU target "
            "cannot run: GPU assembly has no meaning on the host; give the "
            "implementation a target='cpu' form in plain LLVM (context.target_name)",
            op.loc,
        )


def _check_declaration(op, fn: ll.Function) -> None:
    name = fn.name
    if name.startswith("llvm."):
        family = name.split(".")[1]
        if family in _FOREIGN_INTRINSICS:
            raise LoweringError(
                f"{_what(op)} calls the intrinsic {name}, which exists only on "
                f"{'the GPU (NVVM)' if family == 'nvvm' else 'another machine'}: the CPU "
                "target cannot compile it; give the implementation a target='cpu' form "
                "(context.target_name)",
                op.loc,
            )
        return  # LLVM's own, target-independent intrinsics
    if name.startswith("__nv_"):
        _define_libdevice(op, fn)
        return
    if not _resolvable(name):
        raise LoweringError(
            f"{_what(op)} calls {name!r}, which this process does not define: the CPU "
            "target's JIT cannot link it (a GPU-only function, or a library not loaded)",
            op.loc,
        )


def _define_libdevice(op, fn: ll.Function) -> None:
    from cujit.libdevice import FUNCTIONS
    from cujit.targets.cpu import libdevice

    spec = FUNCTIONS.get(fn.name[len("__nv_") :])
    if spec is None or not libdevice.served(spec.name):
        raise LoweringError(
            f"{_what(op)} calls {fn.name}, which is not a libdevice function the CPU target knows",
            op.loc,
        )
    expected = libdevice.prototype(spec)
    if str(fn.function_type) != str(expected):
        raise LoweringError(
            f"{_what(op)} declares libdevice's {fn.name} as {fn.function_type}, but "
            f"its prototype is {expected}",
            op.loc,
        )
    libdevice.define_host(spec, fn)


def _resolvable(name: str) -> bool:
    from cujit.targets.cpu.engine import _resolvable as resolvable

    return resolvable(name)


__all__ = ["EXTENSION_CALLS", "checked"]
