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

import linecache
import os

from llvmlite import ir as ll

from cujit.diagnostics import Loc
from cujit.types import Array, Scalar, Type

LEVELS = ("lines", "full")
PRODUCER = "cujit"
DWARF_VERSION = 4
DEBUG_INFO_VERSION = 3

# Scalar kind -> DWARF base type encoding.
_ENCODING = {
    "b": "DW_ATE_boolean",
    "i": "DW_ATE_signed",
    "u": "DW_ATE_unsigned",
    "f": "DW_ATE_float",
}


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
        self.unit = module.add_debug_info(
            "DICompileUnit",
            {
                # NVVM accepts the C-family languages; the files say Python.
                "language": ll.DIToken("DW_LANG_C_plus_plus"),
                "file": self.file(loc.file),
                "producer": PRODUCER,
                "runtimeVersion": 0,
                "isOptimized": True,
                "emissionKind": ll.DIToken(kind),
            },
            is_distinct=True,
        )
        module.add_named_metadata("llvm.dbg.cu", self.unit)
        i32 = ll.IntType(32)
        for name, value in (
            ("Dwarf Version", DWARF_VERSION),
            ("Debug Info Version", DEBUG_INFO_VERSION),
        ):
            # Behaviour 2 ("Warning"): modules with other values still link.
            module.add_named_metadata(
                "llvm.module.flags",
                [ll.Constant(i32, 2), ll.MetaDataString(module, name), ll.Constant(i32, value)],
            )

    def file(self, path: str) -> ll.DIValue:
        """The ``DIFile`` of a Python source file (absolute path split in two)."""
        f = self._files.get(path)
        if f is None:
            full = os.path.abspath(path) if not path.startswith("<") else path
            directory, name = os.path.split(full)
            f = self.module.add_debug_info(
                "DIFile", {"filename": name or full, "directory": directory}
            )
            self._files[path] = f
        return f

    def subprogram(
        self, llfn: ll.Function, name: str, loc: Loc, params: tuple[Type, ...] = ()
    ) -> ll.DIValue:
        """Attach a ``DISubprogram`` for the Python function at ``loc`` to ``llfn``."""
        m = self.module
        types = [None] + [self.type_of(t) for t in params]
        routine = m.add_debug_info("DISubroutineType", {"types": m.add_metadata(types)})
        sp = m.add_debug_info(
            "DISubprogram",
            {
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
            },
            is_distinct=True,
        )
        llfn.set_metadata("dbg", sp)
        return sp

    def location(self, loc: Loc | None, scope: ll.DIValue) -> ll.DIValue | None:
        if loc is None or loc.line <= 0:
            return None
        return self.module.add_debug_info(
            "DILocation", {"line": loc.line, "column": loc.col + 1, "scope": scope}
        )

    def type_of(self, t: Type) -> ll.DIValue | None:
        """A DWARF type for a kernel value: scalars as base types, arrays as a pointer
        to their element (what a debugger can dereference); others as none."""
        if t in self._types:
            return self._types[t]
        di = None
        if isinstance(t, Scalar) and t.kind == "c":
            di = self._complex(t)
        elif isinstance(t, Scalar) and t.kind in _ENCODING:
            di = self.module.add_debug_info(
                "DIBasicType",
                {
                    "name": t.name,
                    "size": 8 if t.kind == "b" else t.bits,
                    "encoding": ll.DIToken(_ENCODING[t.kind]),
                },
            )
        elif isinstance(t, Array):
            di = self.module.add_debug_info(
                "DIDerivedType",
                {
                    "tag": ll.DIToken("DW_TAG_pointer_type"),
                    "baseType": self.type_of(t.dtype),
                    "size": 64,
                },
            )
        self._types[t] = di
        return di

    def _complex(self, t: Scalar) -> ll.DIValue:
        """A complex number as the struct it is in registers and memory: real, imag."""
        part = self.type_of(t.part_type)
        bits = t.bits // 2
        members = [
            self.module.add_debug_info(
                "DIDerivedType",
                {
                    "tag": ll.DIToken("DW_TAG_member"),
                    "name": name,
                    "baseType": part,
                    "size": bits,
                    "offset": k * bits,
                },
            )
            for k, name in enumerate(("real", "imag"))
        ]
        return self.module.add_debug_info(
            "DICompositeType",
            {
                "tag": ll.DIToken("DW_TAG_structure_type"),
                "name": t.name,
                "size": t.bits,
                "elements": self.module.add_metadata(members),
                "identifier": t.name,
            },
            is_distinct=True,
        )


def level_of(lineinfo: bool, debug: bool) -> str | None:
    """The debug info level of a compile's options (``debug`` wins over ``lineinfo``)."""
    return "full" if debug else "lines" if lineinfo else None


def def_line(loc: Loc) -> Loc:
    """The ``def`` line of the function whose code starts at ``loc``: Python's first
    line is the first decorator's, and a debugger's breakpoint on the function, like
    its subprogram, belongs on the ``def``."""
    for line in range(loc.line, loc.line + 64):
        text = linecache.getline(loc.file, line).lstrip()
        if not text:
            break
        if text.startswith(("def ", "async def ")):
            return Loc(loc.file, line, 0)
    return loc


def begin_function(ctx, name: str, loc: Loc, params: tuple[Type, ...]) -> None:
    """Give ``ctx.llfn`` its subprogram and place the builder at its ``def`` line."""
    info = getattr(ctx.module, "cujit_debuginfo", None)
    if info is None:
        return
    loc = def_line(loc)
    ctx.debug_scope = info.subprogram(ctx.llfn, name, loc, params)
    ctx.builder.debug_metadata = info.location(loc, ctx.debug_scope)
    if info.level == "full" and not ctx.kernel:  # a device function's own variables
        ctx.debug_vars = Variables(ctx, info)


def at(ctx, loc: Loc | None) -> None:
    """Instructions emitted from now on carry ``loc`` (when the module has debug info)."""
    info = getattr(ctx.module, "cujit_debuginfo", None)
    if info is not None and loc is not None:
        ctx.builder.debug_metadata = info.location(loc, ctx.debug_scope)


def enable(module: ll.Module, level: str | None, loc: Loc) -> None:
    """Give ``module`` debug information at ``level`` (None: none)."""
    if level is not None:
        module.cujit_debuginfo = DebugInfo(module, level, loc)


class Variables:
    """Full debug info for one function: the stack slot of each Python variable (its
    parameters and locals), each described by a ``DILocalVariable`` through
    ``llvm.dbg.declare``, as clang does at -O0.  Every SSA value a variable holds
    (``Function.var_names``) is stored into the slot where it is defined, so a
    debugger stopped at any line reads the variable's current value."""

    def __init__(self, ctx, info: DebugInfo):
        self.info = info
        self.names: dict[int, list[str]] = {}
        for vid, name in ctx.fn.var_names:
            self.names.setdefault(vid, []).append(name)
        self.slots: dict[tuple[str, str], ll.Value] = {}
        md = ll.MetaDataType()
        self.declare = ctx.declare("llvm.dbg.declare", ll.VoidType(), [md, md, md])

    def slot(self, ctx, name: str, t: Type, lltype: ll.Type, argno: int = 0):
        key = (name, str(lltype))
        slot = self.slots.get(key)
        if slot is None:
            di_type = self.info.type_of(t)
            slot = self.slots[key] = ctx.alloca(lltype, 8, name=f"{name}.addr")
            fields = {
                "name": name,
                "scope": ctx.debug_scope,
                "line": def_line(ctx.fn.loc).line,
                "file": self.info.file(ctx.fn.loc.file),
                "type": di_type,
            }
            if argno:
                fields["arg"] = argno
            var = ctx.module.add_debug_info("DILocalVariable", fields)
            expr = ctx.module.add_debug_info("DIExpression", {})
            _in_entry(ctx, lambda: ctx.builder.call(self.declare, [slot, var, expr]))
        return slot

    def store(self, ctx, name: str, t: Type, value, argno: int = 0) -> None:
        if value is None or self.info.type_of(t) is None:
            return
        if isinstance(t, Array):
            value = ctx.builder.extract_value(value, 0)  # the data pointer
        ctx.builder.store(value, self.slot(ctx, name, t, value.type, argno))


def _in_entry(ctx, emit) -> None:
    """Run ``emit`` with the builder in the entry block, before its branch if it has one."""
    b = ctx.builder
    saved = b.block
    term = ctx.entry.terminator
    if term is not None:
        b.position_before(term)
    else:
        b.position_at_end(ctx.entry)
    emit()
    b.position_at_end(saved)


def describe_params(ctx, names: tuple[str, ...], types: tuple[Type, ...], values: list) -> None:
    """Full debug info: the parameters become the first variables (``arg: N``)."""
    info = getattr(ctx.module, "cujit_debuginfo", None)
    if info is None or info.level != "full":
        return
    ctx.debug_vars = Variables(ctx, info)
    for argno, (name, t, value) in enumerate(zip(names, types, values, strict=True), start=1):
        ctx.debug_vars.store(ctx, name, t, value, argno)


def define(ctx, value) -> None:
    """Full debug info: ``value`` was just lowered; store it into the slots of the
    Python variables that hold it."""
    variables = ctx.debug_vars
    if variables is None:
        return
    for name in variables.names.get(value.id, ()):
        variables.store(ctx, name, value.type, ctx.values.get(value.id))


def nvvm_debug_flags(options) -> tuple[str, ...]:
    """libNVVM's flags for line tables; ``debug`` goes as NVVMOptions.debug (``-g``)."""
    return ("-generate-line-info",) if options.lineinfo and not options.debug else ()


def link_debug_flags(options) -> tuple[str, ...]:
    """nvJitLink's (ptxas') flags: keep the line table, or build the debug cubin."""
    if options.debug:
        return ("-g",)
    return ("-lineinfo",) if options.lineinfo else ()
