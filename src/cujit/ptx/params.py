"""Dropping the kernel parameters the optimised kernel never reads.

The kernel's LLVM function takes every parameter ``cujit.abi.param_kinds``
lists: for an array its pointer and all its extents.  After libNVVM's
optimiser many of them are dead: a C-contiguous 1-D array indexed by
``cuda.grid(1)`` needs neither its extent for the address nor for Python's
negative-index wrap (LLVM proves the index is non-negative), and ``x.size``
reads only ``x``'s.  ``prune_entry_params`` removes, from the PTX entry's
parameter list, each parameter whose name the PTX never mentions again, and
says which it kept: the launch then passes exactly those values
(``CompileResult.kept``), so fewer bytes cross to the driver per launch and
the kernel's constant bank holds less.

A parameter is dropped only when its name appears nowhere in the PTX outside
its own declaration: no ``ld.param``, no ``mov`` of its address, nothing.  A
parameter list in a form this module does not recognise is left whole.
"""

from __future__ import annotations

import re

# ".param .u64 name" or ".param .align 8 .b8 name[16]", one per line.
_PARAM = re.compile(
    r"^\s*\.param\s+(?:\.align\s+\d+\s+)?\.\w+\s+([A-Za-z_$%][\w$]*)(\[\d+\])?\s*,?\s*$")


def prune_entry_params(ptx: str, symbol: str) -> tuple[str, tuple[bool, ...] | None]:
    """``(ptx, kept)``: ``ptx`` without the unread parameters of entry ``symbol``, and one
    bool per original parameter (True: still declared).  ``kept`` is None, and ``ptx``
    unchanged, when the entry's parameter list is not found in the expected form."""
    head = re.search(r"\.entry\s+" + re.escape(symbol) + r"\s*\(", ptx)
    if head is None:
        return ptx, None
    close = ptx.find(")", head.end())
    if close < 0:
        return ptx, None
    body = ptx[head.end():close]
    lines = [ln for ln in body.split("\n") if ln.strip()]
    names = []
    for line in lines:
        m = _PARAM.match(line)
        if m is None:
            return ptx, None
        names.append(m.group(1))
    if not names:
        return ptx, ()
    rest = ptx[: head.start()] + ptx[close:]
    pattern = r"(?<![\w$])(" + "|".join(map(re.escape, names)) + r")(?![\w$])"
    seen = set(re.findall(pattern, rest))  # one pass over the text
    kept = tuple(n in seen for n in names)
    if all(kept):
        return ptx, kept
    decls = [ln.rstrip().rstrip(",") for ln, keep in zip(lines, kept) if keep]
    new_body = ("\n" + ",\n".join(decls) + "\n") if decls else ""
    return ptx[: head.end()] + new_body + ptx[close:], kept
