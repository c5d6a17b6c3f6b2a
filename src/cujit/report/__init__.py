"""The life of one kernel as a self-contained HTML page.

    from cujit.report import report
    report(kernel, (float32[:], float32[:]), "saxpy.html")

    cujit report FILE.py:KERNEL --sig "void(float32[:], float32[:])" -o saxpy.html

The page shows the Python source with each line linked to what it became in
every stage (bytecode, CFG, IR, typed IR, after passes, LLVM IR, PTX, SASS where
a disassembler is installed), the control-flow graph, each stage's time, the
kernel's parameters and which a launch passes, the linker's resource use with
the occupancy it allows, and warnings and notes at their lines.  ``model.py`` gathers it,
``html.py`` renders it.
"""

from __future__ import annotations

from cujit.options import Options


def report(kernel, arg_types, path: str | None = None, options: Options | None = None) -> str:
    """Write the report of ``kernel`` (a ``@cuda.jit`` kernel or a Python function)
    compiled for ``arg_types`` to ``path`` (default ``<kernel>.report.html``); return
    the path."""
    from cujit.report.html import write_report
    from cujit.report.model import build_report

    rep = build_report(kernel, arg_types, options)
    return write_report(rep, path or f"{rep.name}.report.html")


__all__ = ["report"]
