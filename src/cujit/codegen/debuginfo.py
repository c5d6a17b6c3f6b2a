"""Debug information for the LLVM module: line tables and DWARF, as LLVM debug metadata.

Two levels, chosen by ``Options``:

- ``"lines"`` (``jit(lineinfo=True)``): a ``DICompileUnit`` of kind
  ``DebugDirectivesOnly``, one ``DIFile`` per Python source file, one
  ``DISubprogram`` per function, and a ``DILocation`` (the op's Python line and
  column) on every instruction.  libNVVM (``-generate-line-info``) turns them into
  PTX ``.file``/``.loc`` directives, so compute-sanitizer, Nsight Compute and the
  cubin's line table name Python lines; nothing else changes in the code.
- ``"full"`` (``jit(debug=True)``): the same with a ``FullDebug`` unit, plus each
  kernel parameter described as a ``DILocalVariable`` on a stack slot
  (``llvm.dbg.declare``), so cuda-gdb (libNVVM ``-g``) can print it.

The NVVM IR specification's "Source Level Debugging Support" section lists what
libNVVM accepts: the metadata of LLVM's own debug-info format, with the module
flags ``Dwarf Version`` and ``Debug Info Version`` and the debug version in
``!nvvmir.version`` (``targets/cuda``).  ``codegen.module`` and
``codegen.functions`` call the hooks here; without debug information every hook
does nothing.
"""

from __future__ import annotations

import os

from llvmlite import ir as ll

from cujit.diagnostics import Loc
from cujit.types import Array, Scalar, Type

LEVELS = ("lines", "full")
PRODUCER = "cujit"
DWARF_VERSION = 4
DEBUG_INFO_VERSION = 3

# Scalar kind -> DWARF base type encoding.
_ENCODING = {"b": "DW_ATE_boolean", "i": "DW_ATE_signed", "u": "DW_ATE_unsigned",
             "f": "DW_ATE_float", "c": "DW_ATE_complex_float"}


class DebugInfo:
    """The debug metadata of one LLVM module: its compile unit, files and types."""

    def __init__(self, module: ll.Module, level: str, loc: Loc):
        if level not in LEVELS:
            raise ValueError(f"debug info level {level!r}: use one of {LEVELS}")
        self.module = module
        self.level = level
        self._files: dict[str, ll.DIValue] = {}
        self._types: dict[Type, ll.DIValue] = {}
        kind = "DebugDirectivesOnly" if level == "lines" else "FullDebug"
        self.unit = module.add_debug_info("DICompileUnit", {
            # NVVM accepts the C-family languages; the files say Python.
            "language": ll.DIToken("DW_LANG_C_plus_plus"),
            "file": self.file(loc.file),
            "producer": PRODUCER,
            "runtimeVersion": 0,
            "isOptimized": True,
            "emissionKind": ll.DIToken(kind),
        }, is_distinct=True)
        module.add_named_metadata("llvm.dbg.cu", self.unit)
        i32 = ll.IntType(32)
        for name, value in (("Dwarf Version", DWARF_VERSION),
                            ("Debug Info Version", DEBUG_INFO_VERSION)):
            # Behaviour 2 ("Warning"): modules with other values still link.
            module.add_named_metadata("llvm.module.flags", [
                ll.Constant(i32, 2), ll.MetaDataString(module, name), ll.Constant(i32, value)])

    def file(self, path: str) -> ll.DIValue:
        """The ``DIFile`` of a Python source file (absolute path split in two)."""
        f = self._files.get(path)
        if f is None:
            full = os.path.abspath(path) if not path.startswith("<") else path
            directory, name = os.path.split(full)
            f = self.module.add_debug_info("DIFile", {"filename": name or full,
                                                      "directory": directory})
            self._files[path] = f
        return f

    def subprogram(self, llfn: ll.Function, name: str, loc: Loc,
                   params: tuple[Type, ...] = ()) -> ll.DIValue:
        """Attach a ``DISubprogram`` for the Python function at ``loc`` to ``llfn``."""
        m = self.module
        types = [None] + [self.type_of(t) for t in params]
        routine = m.add_debug_info("DISubroutineType", {"types": m.add_metadata(types)})
        sp = m.add_debug_info("DISubprogram", {
            "name": name,
            "linkageName": llfn.name,
            "scope": self.file(loc.file),
            "file": self.file(loc.file),
            "line": loc.line,
            "type": routine,
            "isLocal": llfn.linkage == "internal",
            "isDefinition": True,
            "scopeLine": loc.line,
            "unit": self.unit,
        }, is_distinct=True)
        llfn.set_metadata("dbg", sp)
        return sp

    def location(self, loc: Loc | None, scope: ll.DIValue) -> ll.DIValue | None:
        if loc is None or loc.line <= 0:
            return None
        return self.module.add_debug_info("DILocation", {
            "line": loc.line, "column": loc.col + 1, "scope": scope})

    def type_of(self, t: Type) -> ll.DIValue | None:
        """A DWARF type for a kernel value: scalars as base types, arrays as a pointer
        to their element (what a debugger can dereference); others as none."""
        if t in self._types:
            return self._types[t]
        di = None
        if isinstance(t, Scalar) and t.kind in _ENCODING:
            di = self.module.add_debug_info("DIBasicType", {
                "name": t.name, "size": 8 if t.kind == "b" else t.bits,
                "encoding": ll.DIToken(_ENCODING[t.kind])})
        elif isinstance(t, Array):
            di = self.module.add_debug_info("DIDerivedType", {
                "tag": ll.DIToken("DW_TAG_pointer_type"),
                "baseType": self.type_of(t.dtype), "size": 64})
        self._types[t] = di
        return di


def level_of(lineinfo: bool, debug: bool) -> str | None:
    """The debug info level of a compile's options (``debug`` wins over ``lineinfo``)."""
    return "full" if debug else "lines" if lineinfo else None


def begin_function(ctx, name: str, loc: Loc, params: tuple[Type, ...]) -> None:
    """Give ``ctx.llfn`` its subprogram and place the builder at its first line."""
    info = getattr(ctx.module, "cujit_debuginfo", None)
    if info is None:
        return
    ctx.debug_scope = info.subprogram(ctx.llfn, name, loc, params)
    ctx.builder.debug_metadata = info.location(loc, ctx.debug_scope)


def at(ctx, loc: Loc | None) -> None:
    """Instructions emitted from now on carry ``loc`` (when the module has debug info)."""
    info = getattr(ctx.module, "cujit_debuginfo", None)
    if info is not None and loc is not None:
        ctx.builder.debug_metadata = info.location(loc, ctx.debug_scope)


def enable(module: ll.Module, level: str | None, loc: Loc) -> None:
    """Give ``module`` debug information at ``level`` (None: none)."""
    if level is not None:
        module.cujit_debuginfo = DebugInfo(module, level, loc)


def describe_params(ctx, names: tuple[str, ...], types: tuple[Type, ...],
                    values: list) -> None:
    """Full debug info: each scalar or array parameter lives in a stack slot that a
    ``DILocalVariable`` describes (``llvm.dbg.declare``), so a debugger finds it
    wherever the code is stopped."""
    info = getattr(ctx.module, "cujit_debuginfo", None)
    if info is None or info.level != "full":
        return
    md = ll.MetaDataType()
    declare = ctx.declare("llvm.dbg.declare", ll.VoidType(), [md, md, md])
    loc = ctx.fn.loc
    for argno, (name, t, value) in enumerate(zip(names, types, values), start=1):
        di_type = info.type_of(t)
        if di_type is None or value is None:
            continue
        if isinstance(t, Array):
            value = ctx.builder.extract_value(value, 0)  # the data pointer
        slot = ctx.alloca(value.type, 8, name=f"{name}.addr")
        ctx.builder.store(value, slot)
        var = ctx.module.add_debug_info("DILocalVariable", {
            "name": name, "arg": argno, "scope": ctx.debug_scope, "file": info.file(loc.file),
            "line": loc.line, "type": di_type})
        expr = ctx.module.add_debug_info("DIExpression", {})
        ctx.builder.call(declare, [slot, var, expr])


def nvvm_debug_flags(options) -> tuple[str, ...]:
    """libNVVM's flags for line tables; ``debug`` goes as NVVMOptions.debug (``-g``)."""
    return ("-generate-line-info",) if options.lineinfo and not options.debug else ()
