"""What the report says at the kernel's Python lines: warnings, and notes.

Warnings (something the user may want to change):

- float64 arithmetic widened from a 32-bit value in a kernel whose arrays are all
  32-bit (a Python float such as ``0.25`` joining it), read off the typed IR;
- a local array the linker placed in local memory (a stack frame remains).

Notes (what the compiler did; nothing is wrong):

- int64 arithmetic where a Python int constant meets a 32-bit int (numba's typing
  rules; ``tile[tx + 1, ty + 1]`` indexes in int64 as numba's does);
- a loop that is still a loop in the PTX (a backward branch whose body holds the
  loop's header line), so it was not unrolled;
- whether the kernel is coarsened (``ir.independence``), or the rule that failed, at
  that rule's line.

``group`` merges findings of one kind and text into one, listing its lines.
"""

from __future__ import annotations

import re

from cujit import ir
from cujit.frozen import frozen
from cujit.types import Array, Scalar


@frozen
class Finding:
    line: int  # the first of ``lines``
    kind: str  # "wide-type", "local-memory", "int64", "loop", "coarsening"
    message: str
    lines: tuple[int, ...] = ()  # every line it stands for (``group``); () = (line,)

    @property
    def all_lines(self) -> tuple[int, ...]:
        return self.lines or (self.line,)

    @property
    def is_note(self) -> bool:
        return self.kind in NOTE_KINDS


# Kinds that say what the compiler did, not what the user should change.
NOTE_KINDS = frozenset({"int64", "loop", "coarsening"})


def group(found: list[Finding]) -> list[Finding]:
    """One finding per kind and text, listing its lines in order, sorted by first line."""
    lines: dict[tuple[str, str], set[int]] = {}
    for f in found:
        lines.setdefault((f.kind, f.message), set()).update(f.all_lines)
    merged = [
        Finding(min(ls), kind, message, tuple(sorted(ls))) for (kind, message), ls in lines.items()
    ]
    return sorted(merged, key=lambda f: (f.line, f.kind))


def _is_wide(t) -> bool:
    return isinstance(t, Scalar) and t.bits == 64 and t.kind in "fi"


def _narrow(t) -> bool:
    return isinstance(t, Scalar) and t.bits <= 32 and t.kind in "fiu"


def _widening(op: ir.Op, defs: dict[int, ir.Op]):
    """The narrow type a 64-bit arithmetic result of ``op`` was widened from, or None.

    Floats: any operand that is, or was cast from, a 32-bit value (float32 arithmetic
    stays float32, so a float64 result means a float64 operand joined it).  Ints: a
    32-bit operand meeting a Python int constant (an int64), since numba's rules make
    even int32 * int32 an int64 and that is no one line's doing."""
    if not isinstance(op, ir.BinOp) or not _is_wide(op.result.type):
        return None
    sources = []
    for v in (op.lhs, op.rhs):
        d = defs.get(v.id)
        src = d.operand if isinstance(d, ir.Cast) else v
        # A 64-bit constant: a Python int (or float) literal, not np.int32(3).
        sources.append((src.type, isinstance(defs.get(src.id), ir.Const) and _is_wide(src.type)))
    narrow = [t for t, _ in sources if _narrow(t)]
    if not narrow:
        return None
    if op.result.type.kind == "f" or any(const for _, const in sources):
        return narrow[0]
    return None


def _a(t) -> str:
    """``t``'s name with its article: "an int32", "a uint8", "a float32"."""
    return ("an " if str(t)[0] in "aeio" else "a ") + str(t)


def _message(res, narrow, in_ptx: bool) -> tuple[str, str]:
    """The kind and text of one widening finding (``_widening``)."""
    if res.kind == "f":
        kept = (
            "the PTX of this line computes in float64"
            if in_ptx
            else "here LLVM narrowed it back to float32 in the PTX"
        )
        return "wide-type", (
            f"float64 arithmetic on {_a(narrow)} value although every array of this kernel "
            f"is 32-bit ({kept}): a Python float such as 0.25 is a float64, and so is the "
            "arithmetic it takes part in; write np.float32(0.25) to stay in float32"
        )
    kept = "the PTX computes in 64 bits" if in_ptx else "LLVM narrowed it back to 32 bits"
    return "int64", (
        f"int64 integer arithmetic on {_a(narrow)} value, as in numba: a Python int "
        "constant (the 1 of tx + 1) is an int64, and so is the arithmetic it takes part "
        f"in ({kept}); array indices are int64 anyway, so there is nothing to change"
    )


def wide_types(
    fn: ir.Function, path: str, ptx_lines: list[tuple[str, int | None]] = ()
) -> list[Finding]:
    """64-bit arithmetic widened from a 32-bit operand (``_widening``), when every array
    argument holds 32-bit (or narrower) elements: a float64 warning, or an int64 note,
    per line and kind; the text says whether the PTX of that line still computes in
    64 bits (LLVM narrows some, such as exact products)."""
    wide_ptx = {
        kind: {n for t, n in ptx_lines if n is not None and re.search(pat, t)}
        for kind, pat in (("f", r"\.f64\b"), ("i", r"\.[su]64\b"))
    }
    arrays = [a.type for a in fn.args if isinstance(a.type, Array)]
    if not arrays or any(t.dtype.bits > 32 for t in arrays):
        return []
    defs = {op.result.id: op for op in fn.all_ops() if op.result is not None}
    found: dict[tuple[int, str], Finding] = {}
    for op in fn.all_ops():
        narrow = _widening(op, defs) if op.loc.file == path else None
        res = op.result.type if narrow is not None else None
        if res is None or (op.loc.line, res.kind) in found:
            continue
        kind, text = _message(res, narrow, op.loc.line in wide_ptx[res.kind])
        found[op.loc.line, res.kind] = Finding(op.loc.line, kind, text)
    return list(found.values())


def local_arrays(fn: ir.Function, path: str, stack_frame: int | None) -> list[Finding]:
    """``cuda.local.array`` allocations, when the linker left a stack frame."""
    if not stack_frame:
        return []
    return [
        Finding(
            op.loc.line,
            "local-memory",
            f"local array placed in local memory ({stack_frame} bytes stack frame "
            "per thread): indexed with values unknown at compile time, it cannot "
            "live in registers",
        )
        for op in fn.all_ops()
        if isinstance(op, ir.Intrinsic) and op.name == "local.array" and op.loc.file == path
    ]


def loop_headers(fn: ir.Function, path: str) -> dict[int, int]:
    """Loop header block id -> its Python line: the targets of back edges in a
    depth-first walk of the typed IR's blocks."""
    headers: dict[int, int] = {}
    state: dict[int, int] = {}  # 1: on the walk's stack, 2: done
    stack = [(fn.blocks[0].id, iter(_succ(fn, fn.blocks[0].id)))]
    state[fn.blocks[0].id] = 1
    while stack:
        bid, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[bid] = 2
            stack.pop()
        elif state.get(nxt) == 1:
            block = fn.block(nxt)
            loc = block.ops[0].loc if block.ops else block.term.loc
            if loc.file == path and loc.line > 0:
                headers[nxt] = loc.line
        elif nxt not in state:
            state[nxt] = 1
            stack.append((nxt, iter(_succ(fn, nxt))))
    return headers


def _succ(fn: ir.Function, bid: int) -> list[int]:
    return [t for t, _ in fn.block(bid).term.successors()]


_LABEL = re.compile(r"^(\$[\w$]+):")
_BRA = re.compile(r"\bbra(?:\.uni)?\s+(\$[\w$]+);")


def ptx_loops(ptx_lines: list[tuple[str, int | None]]) -> list[set[int]]:
    """The Python lines inside each PTX loop (a branch back to an earlier label)."""
    labels: dict[str, int] = {}
    loops = []
    for i, (text, _) in enumerate(ptx_lines):
        m = _LABEL.match(text.strip())
        if m:
            labels[m.group(1)] = i
        b = _BRA.search(text)
        if b and b.group(1) in labels:
            start = labels[b.group(1)]
            loops.append({n for _, n in ptx_lines[start : i + 1] if n is not None})
    return loops


def loops_not_unrolled(
    fn: ir.Function, path: str, ptx_lines: list[tuple[str, int | None]]
) -> list[Finding]:
    loops = ptx_loops(ptx_lines)
    out = []
    for line in sorted(set(loop_headers(fn, path).values())):
        if any(line in body for body in loops):
            out.append(
                Finding(
                    line,
                    "loop",
                    "loop not unrolled: it is still a loop in the "
                    "PTX (its trip count is unknown at compile time "
                    "or too large to unroll)",
                )
            )
    return out


def coarsening(fn: ir.Function, path: str) -> Finding:
    """Coarsened and how, or the first rule that failed: at that rule's line when it is
    in ``path``, else at the kernel's ``def``."""
    from cujit.ir.independence import analyse

    verdict = analyse(fn)
    loc = verdict.loc if verdict.loc is not None and verdict.loc.file == path else fn.loc
    return Finding(loc.line, "coarsening", verdict.describe())
