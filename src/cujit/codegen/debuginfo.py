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
from typing import TYPE_CHECKING

from llvmlite import ir as ll

from cujit.diagnostics import Loc, def_loc
from cujit.types import Type

if TYPE_CHECKING:  # imported where used: only kernels built with line info need them
    from cujit.codegen.debugvars import Variables

LEVELS = ("lines", "full")
# numba's producer string: debuggers built on gdb (cuda-gdb) key their handling of a
# compile unit off a clang producer, and tools that know numba's kernels find cujit's
# the same.
PRODUCER = "clang (Numba)"
DWARF_VERSION = 4
DEBUG_INFO_VERSION = 3


def debug_path(path: str) -> str:
    """A source file's absolute path as the debug information names it.

    libNVVM writes it into PTX's ``.file`` directive as a C string, escaping ``\\`` and
    non-ASCII bytes (octal), but ``"`` only as ``\\"``, which ptxas cannot read (its
    strings take no escapes: the bytes between the quotes are the line table's): a ``"``
    is written ``%22`` instead.  llvmlite escapes the rest in the LLVM IR text."""
    full = os.path.abspath(path) if not path.startswith("<") else path
    return full.replace('"', "%22")


class DebugInfo:
    """The debug metadata of one LLVM module: its compile unit, files and types."""

    def __init__(self, module: ll.Module, level: str, loc: Loc):
        if level not in LEVELS:
            raise ValueError(f"debug info level {level!r}: use one of {LEVELS}")
        self.module = module
        self.level = level
        self.loc = loc
        self._files: dict[str, ll.DIValue] = {}
        from cujit.codegen.debugtypes import TypeTable

        self.types = TypeTable(module)
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
        self.types.file = self.file(loc.file)
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
        """The ``DIFile`` of a Python source file (absolute path split in two, as
        ``debug_path`` writes it)."""
        f = self._files.get(path)
        if f is None:
            full = debug_path(path)
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
        """The DWARF type of a kernel value (``debugtypes``); None: none described."""
        return self.types.type_of(t)

    def def_line_of(self, loc: Loc) -> int:
        return def_line(loc).line


def level_of(lineinfo: bool, debug: bool) -> str | None:
    """The debug info level of a compile's options (``debug`` wins over ``lineinfo``)."""
    return "full" if debug else "lines" if lineinfo else None


def def_line(loc: Loc) -> Loc:
    """The ``def`` line of the function whose code starts at ``loc`` (a debugger's
    breakpoint on the function, like its subprogram, belongs there)."""
    return def_loc(loc)


def begin_function(ctx, name: str, loc: Loc, params: tuple[Type, ...]) -> None:
    """Give ``ctx.llfn`` its subprogram and place the builder at its ``def`` line."""
    info = getattr(ctx.module, "cujit_debuginfo", None)
    if info is None:
        return
    loc = def_line(loc)
    ctx.debug_scope = info.subprogram(ctx.llfn, name, loc, params)
    ctx.builder.debug_metadata = info.location(loc, ctx.debug_scope)
    if info.level == "full":
        ctx.debug_vars = _variables(ctx, info)
        # numba's -O0 frame: the entry block holds the slots alone and carries no
        # line; the function's code (parameters first) starts in the next block.
        b = ctx.builder
        start = ctx.llfn.append_basic_block("start")
        located, b.debug_metadata = b.debug_metadata, None
        b.branch(start)
        b.position_at_end(start)
        b.debug_metadata = located


def at(ctx, loc: Loc | None) -> None:
    """Instructions emitted from now on carry ``loc`` (when the module has debug info)."""
    info = getattr(ctx.module, "cujit_debuginfo", None)
    if info is not None and loc is not None:
        ctx.builder.debug_metadata = info.location(loc, ctx.debug_scope)


def enable(module: ll.Module, level: str | None, loc: Loc) -> None:
    """Give ``module`` debug information at ``level`` (None: none)."""
    if level is not None:
        module.cujit_debuginfo = DebugInfo(module, level, loc)


def enable_like(module: ll.Module, like: ll.Module) -> None:
    """Give ``module`` (a device function's own) the debug level of ``like``."""
    info = getattr(like, "cujit_debuginfo", None)
    if info is not None:
        module.cujit_debuginfo = DebugInfo(module, info.level, info.loc)


def _value_types(fn) -> dict[int, Type]:
    types = {}
    for block in fn.blocks:
        for p in block.params:
            types[p.id] = p.type
        for op in block.ops:
            if op.result is not None:
                types[op.result.id] = op.result.type
    return types


def _variables(ctx, info: DebugInfo) -> Variables:
    from cujit.codegen.debugvars import Variables

    return Variables(ctx, info, _value_types(ctx.fn))


def describe_params(ctx, params) -> None:
    """Full debug info: the function's parameters (``ir.Value``s, already lowered)
    become its first variables (``arg: N``), read from their slots from now on."""
    variables = ctx.debug_vars
    if variables is None:
        return
    for p in params:
        variables.parameter(ctx, p)


def define(ctx, value) -> None:
    """Full debug info: ``value`` was just lowered; store it where the Python
    variables that hold it live."""
    variables = ctx.debug_vars
    if variables is None or value.id in variables.params:
        return
    variables.define(ctx, value, through_memory=merged_slot(ctx, value) is not None)


def returning(ctx, value) -> None:
    """Full debug info: a ``return`` of ``value`` (None: of None) is lowered next."""
    if ctx.debug_vars is not None:
        ctx.debug_vars.returned(ctx, value)


def store_merged(ctx, arg, p, slot) -> None:
    """Full debug info: an edge stores ``arg`` into the ``slot`` of block parameter
    ``p`` (a merged variable), which holds ``arg`` from then on.  On the line that
    defined ``arg`` the store shares that definition's location (one line-table
    entry for the assignment, as the source has one)."""
    b = ctx.builder
    defined = ctx.debug_vars.def_locs.get(arg.id)
    here = b.debug_metadata
    if defined is not None and ctx.loc is not None and defined.line == ctx.loc.line:
        if defined.file == ctx.loc.file:
            b.debug_metadata = ctx.module.cujit_debuginfo.location(defined, ctx.debug_scope)
    ctx.debug_vars.store_merged(ctx, ctx.get(arg), p, slot)
    b.debug_metadata = here


def merged_slot(ctx, p):
    """Full debug info: the slot through which block parameter ``p`` passes from
    its predecessors (None: it is a phi)."""
    variables = ctx.debug_vars
    return None if variables is None else variables.merged_slot(p)


def nvvm_debug_flags(options) -> tuple[str, ...]:
    """libNVVM's flags for line tables; ``debug`` goes as NVVMOptions.debug (``-g``)."""
    return ("-generate-line-info",) if options.lineinfo and not options.debug else ()


def link_debug_flags(options) -> tuple[str, ...]:
    """nvJitLink's (ptxas') flags: keep the line table, or build the debug cubin."""
    if options.debug:
        return ("-g",)
    return ("-lineinfo",) if options.lineinfo else ()
