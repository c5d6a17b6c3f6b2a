"""Compiled Python code for the host glue the runtime generates, kept by source text.

The launch path generates small Python functions per kernel (a launcher per kind of
arguments, a flattener, a variant's selector), straight-line code with the kernel's
handle, parameter block and types bound in through the namespace it runs in.
Compiling the source is most of their cost (a quarter of a millisecond each), and
the source depends only on the arguments' layout, which most kernels of a program
share; each kernel still runs the code in its own namespace, so what it binds stays
its own.  ``code(src, filename)`` compiles a text once; the table holds a few hundred
texts at most (a program with more compiles the rest each time).
"""

from __future__ import annotations

from types import CodeType

_MAX = 512
_CODE: dict[tuple[str, str], CodeType] = {}


def code(src: str, filename: str) -> CodeType:
    """``compile(src, filename, "exec")``, once per text."""
    key = (src, filename)
    found = _CODE.get(key)
    if found is None:
        found = compile(src, filename, "exec")
        if len(_CODE) < _MAX:
            _CODE[key] = found
    return found
